// kpp_split.h - what the generated split step (<model>_split.h, tools/kpp_gen/kpp_split.py)
// needs from the library: its per-lane scalars and its barrier. The split runs one Ros3 step
// attempt (kpp_rosenbrock.h ros_attempt) for the 32 cells of a block, one cell per lane, over
// the block's warps by matrix rows (radm2sorg_split_gpu.cu; docs/radm2sorg.md, "The split
// kernel").
#pragma once
#include "wrfgpu_hd.h"

// The generated step's functions: inlined into the kernel (one register allocation for the
// whole step: each warp keeps its rows in registers from the Jacobian to the last solve).
#ifndef WRFGPU_KPP_SPLIT
#define WRFGPU_KPP_SPLIT WRFGPU_HD
#endif

// The barrier between two levels of the split. Each warp reaches it from its own straight-line
// code, so on the device it is the non-aligned barrier.sync, not __syncthreads() (bar.sync, which
// requires the whole block at one instruction). On the host the split is run only by the tests,
// which define their own before including the generated header.
#ifndef WRFGPU_SPLIT_BARRIER
#ifdef __CUDA_ARCH__
#define WRFGPU_SPLIT_BARRIER() asm volatile("barrier.sync 0;" ::: "memory")
#else
#define WRFGPU_SPLIT_BARRIER() ((void)0)
#endif
#endif

namespace wrfgpu {
namespace kpp {

// A lane's scalars for one Ros3 attempt, as ros_attempt computes them from its H (the names
// of rosenbrock.f90): ghinv = 1/(direction*H*Gamma(1)); A(1), the stage-2 increment's weight;
// HC(j) = C(j)/(direction*H), hc10 for stage 2, hc20 and hc21 for stage 3; M(1:3) and E(1:3)
// of the new solution and the error estimate; the error norm's ATOL and RTOL.
struct SplitScalars {
  double ghinv, a10, hc10, hc20, hc21, m0, m1, m2, e0, e1, e2, atol, rtol;
};

}  // namespace kpp
}  // namespace wrfgpu
