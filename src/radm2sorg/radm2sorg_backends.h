// radm2sorg_backends.h - entry points of the CPU and GPU backends (compiled twice, strict
// and fast, into namespaces wrfgpu::radm2sorg::strict / ::fast) used by radm2sorg.cpp.
#pragma once
#include <cstddef>
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {

// GPU phase times of one run_gpu call, summed over its batches (CUDA events).
struct GpuTimes {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
};

// stats: 5*ncell ints (nstp, nacc, nrej, nsng, status), field-major.
#define WRFGPU_RADM2SORG_DECLARE(NS)                                                           \
  namespace NS {                                                                               \
  void run_cpu(const CellOptions& opt, bool use_float, std::size_t ncell, float* state,        \
               const float* met, float* vdrog3, const StateMap& map, int* stats);              \
  void run_cpu_team(const CellOptions& opt, bool use_float, bool reverse, std::size_t ncell,   \
                    float* state, const float* met, float* vdrog3, const StateMap& map,        \
                    int* stats);                                                               \
  void run_gpu(const CellOptions& opt, bool use_float, bool warp_per_cell, bool cell_innermost, \
               std::size_t ncell,                                                              \
               float* state, const float* met, float* vdrog3, const StateMap& map, int* stats, \
               std::size_t batch, GpuTimes* times);                                            \
  }
WRFGPU_RADM2SORG_DECLARE(strict)
WRFGPU_RADM2SORG_DECLARE(fast)
#undef WRFGPU_RADM2SORG_DECLARE

}  // namespace radm2sorg
}  // namespace wrfgpu
