// both.h - Backend::Both, with one meaning for every kernel: the GPU backend writes the
// caller's arrays, the CPU backend runs on private copies of the outputs, then every output is
// compared over the tile. One line per output on stderr:
//   wrfgpu: <kernel> both (<mode>): <field> differing N of M, max_abs A, plmv P (limit L)[, first at ...]
// An output outside the kernel's documented GPU-CPU agreement for the mode (its plmv_limit,
// the per-level mean variance the replay driver and the tests hold it to; 0: bit for bit, as
// advection in strict mode) is a RuntimeError naming the kernel, the output, its figure and
// its first differing value. The comparison is the result otherwise.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "modes.h"

namespace wrfgpu {

struct BothOutput {
  std::string name;
  std::vector<float> cpu, gpu;  // dense, the same length: i fastest, then k, then j (then species)
  std::size_t ni = 0, nk = 1, nj = 0;  // levels for the per-level mean variance (nj: rows of all species)
  std::function<std::string(std::size_t)> where;  // e.g. "(i,k,j)=(5,4,6)" of a dense index
  double plmv_limit = 0;  // the kernel's GPU-CPU agreement for this output and mode; 0: bitwise
};

struct BothSummary {
  std::size_t differing = 0;  // values whose bits differ (+0 and -0 count as equal), all outputs
  double max_abs = 0;
};

// Throws RuntimeError when an output is outside its limit (or holds a non-finite GPU value
// the CPU does not).

BothSummary compare_both(const char* kernel, Mode mode, const std::vector<BothOutput>& outputs);

}  // namespace wrfgpu
