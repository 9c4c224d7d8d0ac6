// config_bridge.cpp - the settings table (src/common/config.h) for the Fortran modules, so
// that the switches the WRF hooks read go through the same rules as every other setting.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "config.h"
#include "errors.h"

using namespace wrfgpu;

extern "C" {

// WRFGPU flag `name` (NUL-terminated): 1 or 0, `dflt` when unset. A value that is not a flag
// stops the program (exit status 2) naming the variable and the value: the Fortran caller
// cannot handle an error, and a mistyped switch must not pass for the default.
int wrfgpu_config_flag(const char* name, int dflt) {
  try {
    const auto v = config::flag(name);
    return v ? (*v ? 1 : 0) : dflt;
  } catch (const InputError& e) {
    std::fprintf(stderr, "wrfgpu: %s\n", e.what());
    std::fflush(stderr);
    std::exit(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrfgpu: %s\n", e.what());
    std::fflush(stderr);
    std::exit(1);
  }
}

}  // extern "C"
