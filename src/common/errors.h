// errors.h - how wrfgpu reports problems.
//
// Bad input (a missing variable, a NaN, bounds outside memory) is an InputError: the
// message names the file/variable/index, and programs exit with status 2. Anything else
// that stops a run (no GPU, CUDA failure) is a RuntimeError (exit status 1). Library code
// throws; the Fortran bridge and the programs catch, print one line and stop.
#pragma once
#include <stdexcept>
#include <string>

namespace wrfgpu {

struct InputError : std::runtime_error {
  explicit InputError(const std::string& m) : std::runtime_error(m) {}
};
struct RuntimeError : std::runtime_error {
  explicit RuntimeError(const std::string& m) : std::runtime_error(m) {}
};

}  // namespace wrfgpu
