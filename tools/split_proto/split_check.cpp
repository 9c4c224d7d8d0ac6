// split_check.cpp - the split of tools/split_proto/gen_split.py run on the CPU level by level
// (within a level the warps in reverse order, to show the order does not matter) against the
// library's serial kpp_decomp and kpp_solve on the same 32 cells: the same bits, or the split
// is wrong. Build: g++ -O2 -ffp-contract=off -DWRFGPU_MODE_NS=strict -I src/common
//   -I src/radm2sorg/generated -DSPLIT_HEADER='"split8.h"' tools/split_proto/split_check.cpp
#include <cstdio>
#include <cstring>
#include <vector>
#include "radm2sorg_linalg.h"
#include SPLIT_HEADER

namespace kpp = wrfgpu::kpp_radm2sorg;
int main() {
  const int NNZ = kpp::LU_NONZERO, NV = kpp::NVAR;
  std::vector<double> g(NNZ * 32), x(NV * 32);
  unsigned s = 777;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (s >> 8) / 16777216.0; };
  for (int e = 0; e < NNZ; ++e)
    for (int l = 0; l < 32; ++l) {
      bool diag = false;
      for (int i = 0; i < NV; ++i) diag = diag || kpp::LU_DIAG[i] == e;
      g[e * 32 + l] = diag ? 1.0 + rnd() : 0.3 * (rnd() - 0.5);
    }
  for (auto& v : x) v = rnd() - 0.5;
  std::vector<double> rg = g, rx = x;
  for (int l = 0; l < 32; ++l) {
    kpp::kpp_decomp(rg.data() + l, 32);
    kpp::kpp_solve(rg.data() + l, rx.data() + l, 32);
  }
  for (int level = 0; level < SPLIT_LEVELS; ++level)
    for (int w = SPLIT_P - 1; w >= 0; --w)
      for (int l = 0; l < 32; ++l) split_level_host<double>(level, w, g.data(), x.data(), l);
  size_t diff = 0;
  for (size_t i = 0; i < g.size(); ++i) diff += std::memcmp(&g[i], &rg[i], 8) != 0;
  for (size_t i = 0; i < x.size(); ++i) diff += std::memcmp(&x[i], &rx[i], 8) != 0;
  std::printf("P=%d, %d levels: %zu of %zu values differ from the serial code\n", SPLIT_P, SPLIT_LEVELS, diff,
              g.size() + x.size());
  return diff != 0;
}
