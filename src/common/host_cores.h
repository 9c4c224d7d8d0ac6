// host_cores.h - how many cores this process may run on, for the start-up report of each
// rank. The GPU backends pack WRF's arrays into page-locked staging and check their inputs on
// the host, on the rank's OpenMP threads: a rank bound to one core (mpirun's default binding
// for 1 or 2 ranks) does that work on one thread.
#pragma once
#include <string>

namespace wrfgpu {

// Cores this process may run on (its affinity mask) and cores online.
int host_cores_allowed();
int host_cores_online();
// "" when the process may use more than one core or the host has one; otherwise a note
// saying so, with what to do about it.
std::string host_cores_note();

}  // namespace wrfgpu
