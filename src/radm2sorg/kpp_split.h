// kpp_split.h - what the generated split step (<model>_split.h, tools/kpp_gen/kpp_split.py) needs
// from the library: its per-lane scalars, its barrier and its divisions. The split runs one Ros3
// step attempt (kpp_rosenbrock.h ros_attempt) for the 32 cells of a block, one cell per lane, over
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

// split_step's result, per lane: kpp_decomp's singular flag, and a division split_div could not
// give on its fast path (the attempt is then run again with the plain division).
constexpr int SPLIT_SINGULAR = 1, SPLIT_INEXACT = 2;

// a / b in the split step. The plain division (Exact, and on the host) or, on the device, the
// fast path of nvcc's own IEEE double division (the sequence and range tests of its inline
// code: the reciprocal's high word from MUFU.RCP64H with the low word 1, two Newton steps, the
// product, one correction), without its branch to the slow path: where nvcc's code would take
// that branch (a numerator or quotient near underflow, a zero numerator, a huge or NaN divisor)
// the lane's `inexact` is set and its result is not used; a zero numerator, which the slow path
// would answer, is answered here. So every result used is the IEEE quotient, the bits of a / b.
// Without the branch the step's 551 divisions no longer break its instruction stream (the step
// is bound by instruction fetch) and nvcc interleaves them: the kernel 1.09x faster (docs/
// radm2sorg.md, "Where the split kernel's time goes", "Divisions without their branch").
//
// The part that depends on b alone, its reciprocal r, is split_rcp: the step computes it once
// per pivot, where the pivot's final value is written, and every division by that pivot is then
// split_div_r, three operations and two range tests (docs/radm2sorg.md, "Pivot reciprocals
// computed once; forward-solve rows in runs": with them the kernel 1.09-1.13x faster).
// split_rcp sets `inexact` for a divisor whose high word is outside
// [2^-120, inf) (there nvcc's code answers a zero numerator on its slow path, or its test of
// 0 * b + q fails): the attempt is then run again with Exact true, so split_div_r's tests need
// not look at b. The tests read high words as floats, so in double terms the fast path takes
// divisors in about [2^-967, 2^1017), numerators from about 2^-967 and quotients from the
// smallest normal double: values single-precision inputs do not come near (the retry never ran
// on the benchmark's or WRF's cells; Radm2sorgDevice.SplitDivision tests the whole range).
template <bool Exact>
WRFGPU_HD double split_rcp(double b, bool& inexact) {
#ifdef __CUDA_ARCH__
  if (!Exact) {
    double r;  // MUFU.RCP64H of b's high word, the low word 1: nvcc's start (seen in the SASS)
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(b));
    r = __hiloint2double(__double2hiint(r), 1);
    double e = __fma_rn(-b, r, 1.0);
    e = __fma_rn(e, e, e);
    r = __fma_rn(r, e, r);
    e = __fma_rn(-b, r, 1.0);
    r = __fma_rn(r, e, r);
    unsigned in;  // b's high word, read as a float, in [2^-120, inf)
    asm("{\n\t.reg .f32 v;\n\t.reg .pred z;\n\t"
        "abs.f32 v, %1;\n\t"
        "setp.ge.f32 z, v, 0f03800000;\n\t"
        "setp.lt.and.f32 z, v, 0f7f800000, z;\n\t"
        "selp.u32 %0, 1, 0, z;\n\t}"
        : "=r"(in)
        : "f"(__int_as_float(__double2hiint(b))));
    inexact = inexact || !in;
    return r;
  }
#endif
  (void)inexact;
  return b;  // not used: split_div_r divides
}

// a / b with r = split_rcp(b) (the same inexact flag).
template <bool Exact>
WRFGPU_HD double split_div_r(double a, double b, double r, bool& inexact) {
#ifdef __CUDA_ARCH__
  if (!Exact) {
    // The product, one correction and nvcc's tests, on the high words read as floats: |a| >=
    // 2^-120 and |0 * b + q| > 2^-129, the latter |q| > 2^-129 for the b split_rcp passes.
    // Where they pass, q. Where they fail, a nonzero a is flagged (below), and a zero one (its
    // high word fails the first test) is answered with a * r, the signed zero nvcc's slow path
    // gives. The two zeros differ in their high words only (q may be +0 where a * r is -0), so
    // one word is selected, by the tests' own predicate, in the same PTX: one SEL and one DSETP
    // per division fewer than a == 0 tested and both words selected in C++ (docs/radm2sorg.md,
    // "The division's zero by one word"; in C++ the select became a branch).
    double q;
    unsigned ok;
    asm("{\n\t.reg .f64 q0, e, q1;\n\t.reg .b32 qlo, qhi, zlo, zhi, h;\n\t.reg .f32 t, u;\n\t"
        ".reg .pred p, s;\n\t"
        "mul.rn.f64 q0, %2, %4;\n\t"
        "neg.f64 e, %3;\n\t"
        "fma.rn.f64 e, e, q0, %2;\n\t"
        "fma.rn.f64 q1, %4, e, q0;\n\t"
        "mov.b64 {qlo, qhi}, q1;\n\t"
        "mov.b64 {zlo, zhi}, q0;\n\t"
        "abs.f32 t, %5;\n\t"
        "setp.geu.f32 p, t, 0f03800000;\n\t"
        "mov.b32 u, qhi;\n\t"
        "abs.f32 u, u;\n\t"
        "setp.gt.and.f32 s, u, 0f00100000, p;\n\t"
        "selp.b32 h, qhi, zhi, s;\n\t"
        "mov.b64 %0, {qlo, h};\n\t"
        "selp.u32 %1, 1, 0, s;\n\t}"
        : "=d"(q), "=r"(ok)
        : "d"(a), "d"(b), "d"(r), "f"(__int_as_float(__double2hiint(a))));
    inexact = inexact || (!ok && a != 0.0);
    return q;
  }
#endif
  (void)r;
  (void)inexact;
  return a / b;
}

template <bool Exact>
WRFGPU_HD double split_div(double a, double b, bool& inexact) {
  return split_div_r<Exact>(a, b, split_rcp<Exact>(b, inexact), inexact);
}

}  // namespace kpp
}  // namespace wrfgpu
