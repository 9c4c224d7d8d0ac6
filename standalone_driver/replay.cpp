#include "replay.h"
#include "device.h"
#include "errors.h"

namespace wrfgpu {

std::map<std::string, ReplayFactory>& replay_registry() {
  static std::map<std::string, ReplayFactory> r;
  return r;
}

std::multimap<int, BenchCase>& bench_cases() {
  static std::multimap<int, BenchCase> r;
  return r;
}
std::map<std::string, std::string>& bench_aliases() {
  static std::map<std::string, std::string> a;
  return a;
}
RegisterBench::RegisterBench(int order, const std::vector<BenchCase>& cases, const std::string& alias) {
  for (auto& c : cases) bench_cases().insert({order, c});
  if (!alias.empty() && !cases.empty()) bench_aliases()[alias] = cases.front().kernel;
}

Patch decompose(int ni, int nj, int rank, int nranks) {
  Patch p;
  p.rank = rank;
  p.nranks = nranks;
  int px = 1;
  for (int d = 1; d * d <= nranks; ++d)
    if (nranks % d == 0) px = d;
  int py = nranks / px;
  if (px > ni || py > nj)
    throw InputError("cannot decompose " + std::to_string(ni) + "x" + std::to_string(nj) +
                     " columns over " + std::to_string(nranks) + " ranks (" + std::to_string(px) +
                     "x" + std::to_string(py) + " patches)");
  p.px = px;
  p.py = py;
  int ri = rank % px, rj = rank / px;
  auto split = [](int n, int parts, int idx, int& start, int& len) {
    int base = n / parts, extra = n % parts;
    len = base + (idx < extra ? 1 : 0);
    start = idx * base + (idx < extra ? idx : extra);
  };
  split(ni, px, ri, p.i0, p.ni);
  split(nj, py, rj, p.j0, p.nj);
  return p;
}

std::unique_ptr<Replay> open_replay(const std::string& path, const Patch& patch) {
  NcFile f(path);
  if (!f.has_att("capture_format"))
    throw InputError(path + ": global attribute 'capture_format' is missing: not a wrfgpu capture file");
  std::string ver = f.att_string("capture_format");
  if (ver != "1")
    throw InputError(path + ": capture_format = '" + ver + "', this driver reads version 1");
  // Our kernels are WRF's single-precision build; a -r8 capture's constants and rounding are
  // another model (the capture format allows real_kind 8 for other readers).
  if (f.att_int_or("real_kind", 4) != 4)
    throw InputError(path + ": real_kind = " + std::to_string(f.att_int_or("real_kind", 4)) +
                     ": only single-precision WRF (real_kind 4) is supported");
  std::string kernel = f.att_string("kernel");
  auto& reg = replay_registry();
  auto it = reg.find(kernel);
  if (it == reg.end()) {
    std::string known;
    for (auto& kv : reg) known += (known.empty() ? "" : ", ") + kv.first;
    throw InputError(path + ": unknown kernel '" + kernel + "' (this driver knows: " + known + ")");
  }
  return it->second(f, patch);
}

}  // namespace wrfgpu
