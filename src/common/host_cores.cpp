// host_cores.cpp - see host_cores.h.
#include "host_cores.h"

#include <sched.h>
#include <unistd.h>

#include <string>

namespace wrfgpu {

int host_cores_allowed() {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return host_cores_online();
  return CPU_COUNT(&s);
}

int host_cores_online() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

// Measured on an H100 host (16 cores): the 81-tracer advection call took 98 ms end to end in
// a rank that mpirun -np 1 had bound to one core, 16 ms with --bind-to none.
std::string host_cores_note() {
  const int allowed = host_cores_allowed(), online = host_cores_online();
  if (allowed > 1 || online <= 1) return "";
  return " [bound to 1 of " + std::to_string(online) +
         " cores: the host side of the GPU calls (packing, input checks) runs on one thread; give "
         "each rank its share of the cores, e.g. mpirun --map-by ppr:N:node:PE=C, or --bind-to none]";
}

}  // namespace wrfgpu
