// stream_copy.h - row copies between WRF's arrays and page-locked staging with streaming
// (non-temporal) stores, checking the copied values for NaN/Inf on the way.
//
// Why: with WRF's pageable arrays, the host side of a GPU call (packing them into page-locked
// staging for the DMA engine, and the results back) is a large part of the end-to-end time: on
// the H100 machine the 81-tracer advection call spent about 12.7 of its 18 ms packing and
// unpacking. An ordinary store first reads the line it writes (read for ownership); a streaming
// store does not. Neither side is read again by this core soon: the staging is read next by
// the DMA engine, and a call's megabytes of WRF's arrays have left the caches by the time the
// next physics routine reads them. Every store of a row streams, including the scalar head and
// tail around the 16-byte aligned body: a first version that wrote those with ordinary stores
// was 2.5x slower than memcpy on rows of 141 floats, because the lines that two rows share were
// written both ways. Measured end to end in wrfgpu_bench on the H100 machine (median of 4 runs,
// pageable arrays): advection 81 tracers 20.2 -> 15.9 ms, CONUS 5 tracers 14.3 -> 12.3 ms, WSM5
// CONUS 12.2 -> 9.5 ms (docs/performance.md, "Host side").
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace wrfgpu {

// dst[0..n) = src[0..n), bit for bit; true when one of the values is NaN or Inf (exponent all
// ones), or, with Positive, not > 0. Every store streams (4-byte ones up to the first 16-byte
// aligned element of dst and after the last, 16-byte ones between): call stream_fence() on the
// same thread before a DMA transfer or another thread reads dst. Without SSE2, a plain copy.
template <bool Positive = false>
inline bool copy_row_stream(float* dst, const float* src, std::size_t n) {
  std::uint32_t bad = 0;
  std::size_t i = 0;
  auto one = [&](std::size_t e) {  // element e alone: the head and tail (or, without SSE2, all)
    std::uint32_t b;
    std::memcpy(&b, src + e, sizeof b);
    bad |= ((b & 0x7f800000u) == 0x7f800000u) | (Positive && !(src[e] > 0.f));
#if defined(__SSE2__)
    _mm_stream_si32(reinterpret_cast<int*>(dst + e), (int)b);
#else
    dst[e] = src[e];
#endif
  };
#if defined(__SSE2__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15u) != 0; ++i) one(i);
  const __m128i expo = _mm_set1_epi32(0x7f800000);
  const __m128 zero = _mm_setzero_ps();
  __m128i badv = _mm_setzero_si128();
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(src + i);
    badv = _mm_or_si128(badv, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(v), expo), expo));
    if (Positive) badv = _mm_or_si128(badv, _mm_castps_si128(_mm_cmpngt_ps(v, zero)));
    _mm_stream_ps(dst + i, v);
  }
  bad |= _mm_movemask_epi8(badv) != 0;
#endif
  for (; i < n; ++i) one(i);
  return bad != 0;
}

// Makes this thread's streaming stores visible to other threads and to DMA reads.
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace wrfgpu
