// bridge.cpp - how a failed bridge call stops the run (bridge.h).
#include "bridge.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

// WRF's frame/module_wrf_error.F: SUBROUTINE wrf_error_fatal( str ), CHARACTER*(*) str
// (gfortran: the hidden length follows as size_t). Weak: it resolves only inside a program
// that has it, i.e. wrf.exe (or a test standing in for WRF).
extern "C" void wrf_error_fatal_(const char* str, std::size_t len) __attribute__((weak));

namespace wrfgpu {

namespace {
thread_local std::string t_last;   // this thread's last failure line
int g_exit_status = 0;             // what the process must end with once stopping

// Serial WRF's wrf_abort ends with STOP, which exits with status 0: this handler, registered
// just before wrf_error_fatal runs, turns that exit into the failure's status.
void keep_failure_status() {
  std::fflush(nullptr);
  _exit(g_exit_status);
}
}  // namespace

void bridge_report(const char* where, const char* what) noexcept {
  // The kernels' messages may already begin with "<where>: " (the advection's InputErrors
  // do): said once, not "wrfgpu: advection: advection: ...".
  const std::size_t n = std::strlen(where);
  const bool named = std::strncmp(what, where, n) == 0 && what[n] == ':' && what[n + 1] == ' ';
  if (named) what += n + 2;
  try {
    t_last = std::string("wrfgpu: ") + where + ": " + what;
  } catch (...) {
  }
  std::fprintf(stderr, "wrfgpu: %s: %s\n", where, what);
}

void bridge_stop(int status, const std::string& message) noexcept {
  if (status == 0) status = 1;
  const std::string& line = message.empty() ? t_last : message;
  std::fflush(nullptr);
  if (wrf_error_fatal_) {
    g_exit_status = status;
    std::atexit(keep_failure_status);
    const std::string text = line.empty() ? std::string("wrfgpu: failed") : line;
    wrf_error_fatal_(text.c_str(), text.size());   // does not return
  }
  std::exit(status);
}

}  // namespace wrfgpu

extern "C" {

// For the Fortran wrappers (module_wrfgpu_*.F90) called without `stat`: stop the run with
// `status` and this thread's last failure line, or with `message` (n characters) when n > 0.
void wrfgpu_bridge_stop(int status, const char* message, int n) {
  if (n > 0) {
    const std::string text(message, static_cast<std::size_t>(n));
    std::fprintf(stderr, "%s\n", text.c_str());
    wrfgpu::bridge_stop(status, text);
  }
  wrfgpu::bridge_stop(status);
}

}  // extern "C"
