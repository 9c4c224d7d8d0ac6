#include "replay.h"
#include "errors.h"

namespace wrfgpu {

std::map<std::string, ReplayFactory>& replay_registry() {
  static std::map<std::string, ReplayFactory> r;
  return r;
}

std::unique_ptr<Replay> open_replay(const std::string& path) {
  NcFile f(path);
  if (!f.has_att("capture_format"))
    throw InputError(path + ": global attribute 'capture_format' is missing: not a wrfgpu capture file");
  std::string ver = f.att_string("capture_format");
  if (ver != "1")
    throw InputError(path + ": capture_format = '" + ver + "', this driver reads version 1");
  std::string kernel = f.att_string("kernel");
  auto& reg = replay_registry();
  auto it = reg.find(kernel);
  if (it == reg.end()) {
    std::string known;
    for (auto& kv : reg) known += (known.empty() ? "" : ", ") + kv.first;
    throw InputError(path + ": unknown kernel '" + kernel + "' (this driver knows: " + known + ")");
  }
  return it->second(f);
}

std::vector<float> read_checked(const NcFile& f, const std::string& var,
                                const std::vector<std::string>& dims) {
  if (!f.has_var(var)) throw InputError(f.path() + ": variable '" + var + "' is missing");
  auto names = f.var_dim_names(var);
  if (names != dims) {
    std::string want, got;
    for (auto& d : dims) want += (want.empty() ? "" : ",") + d;
    for (auto& d : names) got += (got.empty() ? "" : ",") + d;
    throw InputError(f.path() + ": variable '" + var + "' has dimensions (" + got + "), expected (" +
                     want + ")");
  }
  std::vector<std::size_t> shape;
  for (auto& d : dims) shape.push_back(f.dim_len(d));
  return f.read_float(var, shape);
}

}  // namespace wrfgpu
