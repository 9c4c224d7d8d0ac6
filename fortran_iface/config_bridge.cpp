// config_bridge.cpp - the settings table (src/common/config.h) for the Fortran modules, so
// that the switches the WRF hooks read go through the same rules as every other setting.
#include "bridge.h"
#include "config.h"

using namespace wrfgpu;

extern "C" {

// WRFGPU flag `name` (NUL-terminated): 1 or 0, `dflt` when unset. A value that is not a flag
// stops the run (status 2, bridge.h) naming the variable and the value: the Fortran caller
// cannot handle an error, and a mistyped switch must not pass for the default.
int wrfgpu_config_flag(const char* name, int dflt) {
  int value = dflt;
  const int status = bridge_call("settings", [&] {
    const auto v = config::flag(name);
    if (v) value = *v ? 1 : 0;
  });
  if (status != 0) bridge_stop(status);
  return value;
}

}  // extern "C"
