// radm2sorg_backends.h - entry points of the CPU and GPU backends (compiled twice, strict
// and fast, into namespaces wrfgpu::radm2sorg::strict / ::fast) used by radm2sorg.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include "radm2sorg.h"
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {

// GPU phase times of one run_gpu call, summed over its batches (CUDA events).
struct GpuTimes {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
  GpuSolver solver = GpuSolver::Auto;  // the one that ran
};

// The warp kernel's hand-out order for n cells: their indices by descending expected step
// count (stable: equal counts keep index order). A counting sort, O(n).
inline void longest_first_order(const std::uint8_t* expected_steps, std::size_t n,
                                unsigned* order) {
  std::size_t start[257] = {};  // start[b]: first slot of bucket b = 255 - steps
  for (std::size_t c = 0; c < n; ++c) ++start[256 - expected_steps[c]];
  for (int b = 1; b <= 256; ++b) start[b] += start[b - 1];
  for (std::size_t c = 0; c < n; ++c) order[start[255 - expected_steps[c]]++] = (unsigned)c;
}

// Where the GPU backend reads a call's inputs and writes its results, chunk by chunk, straight
// from and into its page-locked staging: field f of cells [c0, c0 + n). get: state fields
// 0..kNState-1, then met kNState..kNState+kNMet-1; put: state fields, then vdrog3
// kNState..kNState+kLdrog-1. Calls for different fields may run at once (OpenMP threads).
struct CellIO {
  virtual ~CellIO() = default;
  virtual void get(int f, std::size_t c0, std::size_t n, float* dst) const = 0;
  virtual void put(int f, std::size_t c0, std::size_t n, const float* src) const = 0;
};
// The dense batch: field f of cell c at f*ncell + c of state, met and vdrog3.
struct DenseIO : CellIO {
  float* state;
  const float* met;
  float* vdrog3;
  std::size_t ncell;
  DenseIO(float* s, const float* m, float* v, std::size_t n) : state(s), met(m), vdrog3(v), ncell(n) {}
  void get(int f, std::size_t c0, std::size_t n, float* dst) const override;
  void put(int f, std::size_t c0, std::size_t n, const float* src) const override;
};

// stats: 5*ncell ints (nstp, nacc, nrej, nsng, status), field-major. expected_steps (GPU;
// may be null): per cell the steps it is expected to take (capped at 255); the
// cells are handed out to the warps in descending order of it. Results do not depend on it.
#define WRFGPU_RADM2SORG_DECLARE(NS)                                                           \
  namespace NS {                                                                               \
  void run_cpu(const CellOptions& opt, bool use_float, std::size_t ncell, float* state,        \
               const float* met, float* vdrog3, const StateMap& map, int* stats);              \
  void run_gpu(const CellOptions& opt, bool use_float, std::size_t ncell, const CellIO& io,    \
               const StateMap& map, int* stats, std::size_t batch, GpuSolver solver,           \
               const std::uint8_t* expected_steps, GpuTimes* times);                           \
  }
WRFGPU_RADM2SORG_DECLARE(strict)
WRFGPU_RADM2SORG_DECLARE(fast)
#undef WRFGPU_RADM2SORG_DECLARE

}  // namespace radm2sorg
}  // namespace wrfgpu
