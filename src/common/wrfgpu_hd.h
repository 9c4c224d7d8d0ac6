// wrfgpu_hd.h - the one macro that makes column physics "one source, two backends".
//
// Column and cell physics are written once as WRFGPU_HD functions. nvcc compiles them
// as __host__ __device__ (the CUDA backend's kernels call them); g++ compiles the same
// header as plain inline C++ for the OpenMP CPU backend, so every physics test runs in a
// build without CUDA.
#pragma once

#if defined(__CUDACC__)
#define WRFGPU_HD __host__ __device__ inline
#define WRFGPU_DEVICE_CODE 1
#else
#define WRFGPU_HD inline
#define WRFGPU_DEVICE_CODE 0
#endif

// The numerical mode a translation unit is compiled in. Each backend source is compiled
// twice by the Makefile: once with -DWRFGPU_MODE_NS=strict (no fast math, no FMA
// contraction: closest to gfortran's single precision) and once with
// -DWRFGPU_MODE_NS=fast (fast math). The backends' entry points live in
// namespace wrfgpu::<kernel>::WRFGPU_MODE_NS, so both modes are in one library.
#ifndef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS strict
#endif

// The namespace of the physics in headers: phys_strict or phys_fast (phys_ and the mode).
// An inline or template function defined in a header is one weak symbol for the linker,
// which keeps one copy; compiled into both a strict and a fast object, a strict run could
// execute the fast-math copy. So every physics header puts its code (functions, and the
// types whose member functions are physics) in
//   namespace wrfgpu { namespace <kernel> { inline namespace WRFGPU_PHYS_NS { ... } } }
// and each mode has its own symbols; callers name them as if the inline namespace were not
// there. Plain data (constants, tables, structs of data members) may stay outside, and must
// where the dispatcher, compiled once, hands it to both modes. A test that compiles its own
// copy of the physics (other flags, another libm) redefines WRFGPU_MODE_NS before including
// the physics, and its copy gets its own namespace too. docs/design.md, "Numerical modes".
#define WRFGPU_PHYS_CAT2_(a, b) a##_##b
#define WRFGPU_PHYS_CAT_(a, b) WRFGPU_PHYS_CAT2_(a, b)
#define WRFGPU_PHYS_NS WRFGPU_PHYS_CAT_(phys, WRFGPU_MODE_NS)
