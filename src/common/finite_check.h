// finite_check.h - the input scans every kernel does before it runs (NaN/Inf, positivity).
// They read each input once per call, so they must run at memory speed: no early exit and
// integer tests of the exponent bits, which the compiler vectorises (a per-element isfinite
// with a break was 3x slower and showed up in the end-to-end times of the benchmarks).
#pragma once
#include <cstdint>
#include <cstring>

namespace wrfgpu {

// True when row[0..n) holds a NaN or an Inf (with Positive: or a value that is not > 0).
template <bool Positive = false>
inline bool row_has_bad(const float* row, int n) {
  std::uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
  for (int i = 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, row + i, sizeof b);
    bad |= ((b & 0x7f800000u) == 0x7f800000u) ? 1u : 0u;  // exponent all ones: Inf or NaN
    if (Positive) bad |= row[i] > 0.f ? 0u : 1u;
  }
  return bad != 0;
}

}  // namespace wrfgpu
