#include "modes.h"
#include <cstdlib>
#include "config.h"
#include "device.h"
#include "errors.h"

namespace wrfgpu {

Backend parse_backend(const std::string& s) {
  if (s == "cpu") return Backend::Cpu;
  if (s == "gpu") return Backend::Gpu;
  if (s == "both") return Backend::Both;
  if (s == "auto") return Backend::Auto;
  throw InputError("unknown backend '" + s + "' (expected cpu, gpu, both or auto)");
}

Mode parse_mode(const std::string& s) {
  if (s == "strict") return Mode::Strict;
  if (s == "fast") return Mode::Fast;
  throw InputError("unknown numerical mode '" + s + "' (expected strict or fast)");
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Gpu: return "gpu";
    case Backend::Both: return "both";
    default: return "auto";
  }
}
const char* to_string(Mode m) { return m == Mode::Strict ? "strict" : "fast"; }

Backend backend_from_env(Backend dflt) {
  config::warn_unknown_settings();
  const auto b = config::choice("WRFGPU_BACKEND");
  return b ? parse_backend(*b) : dflt;
}

Mode mode_from_env(Mode dflt) {
  const auto m = config::choice("WRFGPU_MODE");
  return m ? parse_mode(*m) : dflt;
}

Backend resolve_backend(Backend requested) {
  std::string why;
  int n = gpu_count(&why);
  if (requested == Backend::Auto) return n > 0 ? Backend::Gpu : Backend::Cpu;
  if ((requested == Backend::Gpu || requested == Backend::Both) && n == 0)
    throw RuntimeError(std::string("backend '") + to_string(requested) +
                       "' asked for, but no GPU can be used: " + why +
                       " (use --backend cpu or WRFGPU_BACKEND=cpu to run on the CPU)");
  return requested;
}

}  // namespace wrfgpu
