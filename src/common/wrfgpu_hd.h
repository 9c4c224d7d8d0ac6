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
// -DWRFGPU_MODE_NS=fast (fast math). The namespace keeps both in one library.
#ifndef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS strict
#endif
