// call_timing.h - per-kernel totals of the calls WRF makes through the Fortran bridges, printed
// once at program exit when WRFGPU_TIMING=1 (what share of a WRF run the library's kernels,
// transfers and host work take). Thread-safe; costs nothing when the variable is unset.
#pragma once

namespace wrfgpu {

// One call of `kernel` (a static string, e.g. "wsm5"): CUDA-event times of the kernels and
// transfers (0 on the CPU backend) and the wall time of the whole call.
void record_call(const char* kernel, double kernel_ms, double h2d_ms, double d2h_ms, double total_ms);

}  // namespace wrfgpu
