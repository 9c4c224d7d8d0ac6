// host_cores.h - how many cores this process may run on, for the start-up report of each
// rank. The GPU backends pack WRF's arrays into page-locked staging and check their inputs on
// the host, on the rank's OpenMP threads: a rank bound to one core (mpirun's default binding
// for 1 or 2 ranks) does that work on one thread.
#pragma once
#include <cstddef>
#include <string>

namespace wrfgpu {

// Cores this process may run on (its affinity mask) and cores online.
int host_cores_allowed();
int host_cores_online();
// "" when the process may use more than one core or the host has one; otherwise a note
// saying so, with what to do about it.
std::string host_cores_note();

// OpenMP threads for one host pass (copy, check) over `values` floats: one per
// kHostValuesPerThread, at least 1, at most omp_get_max_threads() (1 without OpenMP).
// Why: between WRF's calls the library's idle threads sleep (OMP_WAIT_POLICY unset or passive,
// as in most WRF runs), and waking all of them for a small call costs more than the copies:
// em_quarter_ss (71x58x27) on an H100 host, 150 steps, the 600 moist advection calls of RK1/RK2
// took 1,704 ms with 16 threads, 450 ms with 8, 191 ms with 16 threads spinning
// (OMP_WAIT_POLICY=active). Large calls still use every thread.
constexpr std::size_t kHostValuesPerThread = 131072;  // 512 KB of floats
int host_threads(std::size_t values);

}  // namespace wrfgpu
