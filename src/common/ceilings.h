// ceilings.h - the device's measured ceilings, taken in the same run as the kernel timings
// so that achieved GB/s and GFLOP/s are judged against this card, not a datasheet.
#pragma once

namespace wrfgpu {

struct Ceilings {
  double d2d_gbs = 0;      // device-to-device copy, bytes read + written per second
  double h2d_gbs = 0;      // pinned host -> device
  double d2h_gbs = 0;      // pinned device -> host
  double fp32_gflops = 0;  // FMA throughput, 2 flops per FMA
  double fp64_gflops = 0;
};

// Throws RuntimeError when there is no GPU (or the build has no CUDA).
Ceilings measure_ceilings();

}  // namespace wrfgpu
