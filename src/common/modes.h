// modes.h - run-time choices shared by every kernel: backend and numerical mode.
#pragma once
#include <string>

namespace wrfgpu {

// cpu: OpenMP over columns/cells. gpu: CUDA kernels. both: run both and compare.
// auto: the GPU when one is visible (and the build has CUDA), else the CPU.
enum class Backend { Cpu, Gpu, Both, Auto };
// strict: no fast math, no FMA contraction (validation default). fast: fast math.
enum class Mode { Strict, Fast };

Backend parse_backend(const std::string& s);  // throws InputError naming the value
Mode parse_mode(const std::string& s);
const char* to_string(Backend b);
const char* to_string(Mode m);
// The backend named by WRFGPU_BACKEND, or `dflt` when unset.
Backend backend_from_env(Backend dflt);
// The mode named by WRFGPU_MODE, or `dflt` when unset.
Mode mode_from_env(Mode dflt);
// Resolve Auto to Cpu or Gpu; throws RuntimeError when Gpu/Both is asked for and no
// usable GPU exists (or the build has no CUDA): never a silent CPU run.
Backend resolve_backend(Backend requested);

}  // namespace wrfgpu
