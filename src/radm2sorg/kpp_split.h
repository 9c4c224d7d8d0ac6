// kpp_split.h - what the generated split step (<model>_split.h, tools/kpp_gen/kpp_split.py)
// needs from the library: its per-lane scalars and how its warps wait for each other. The split runs one Ros3 step
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

// How the split's warps wait for each other (generated code: WRFGPU_SPLIT_SIGNAL(n) ends a
// stretch, WRFGPU_SPLIT_WAIT(p, n) waits until warp p has signalled n; prog[w] in shared memory
// holds warp w's last signal). A warp signals after all its lanes' stores of the stretch: the
// warp barrier orders them before lane 0's release store, and every lane of a waiting warp
// reads the counter with acquire, so the stores are visible to it when it goes on. Only the
// pairs of warps that touch one location wait for each other, instead of the whole block at
// a barrier: the stretches of different warps overlap (docs/radm2sorg.md, "The split kernel").
// On the host the split is run only by the tests, which define their own.
#ifndef WRFGPU_SPLIT_SIGNAL
#ifdef __CUDA_ARCH__
#define WRFGPU_SPLIT_SIGNAL(n) ::wrfgpu::kpp::split_signal(prog, warp, lane, (n))
#define WRFGPU_SPLIT_WAIT(p, n) ::wrfgpu::kpp::split_wait(prog, (p), (n))
#else
#define WRFGPU_SPLIT_SIGNAL(n) ((void)0)
#define WRFGPU_SPLIT_WAIT(p, n) ((void)0)
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

#ifdef __CUDA_ARCH__
__device__ __forceinline__ void split_signal(unsigned* prog, int warp, int lane, unsigned n) {
  __syncwarp();
  if (lane == 0) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(prog + warp);
    asm volatile("st.release.cta.shared::cta.u32 [%0], %1;" ::"r"(a), "r"(n) : "memory");
  }
}

__device__ __forceinline__ void split_wait(const unsigned* prog, int p, unsigned n) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(prog + p);
  unsigned v;
  do {
    asm volatile("ld.acquire.cta.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  } while (v < n);
}
#endif

}  // namespace kpp
}  // namespace wrfgpu
