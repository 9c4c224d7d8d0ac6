// bridge.h - the one convention of the Fortran bridges (docs/design.md, "Errors").
//
// Errors: no C++ exception crosses into Fortran. A failure prints one line on stderr,
//   wrfgpu: <entry point>: <message>
// and has a status: 2 bad input (InputError: the message names the field, the value and
// (i,k,j)), 1 anything else (no usable GPU, CUDA failure, failed integration). The
// ISO_C_BINDING entry points return it in their last argument (ierr); their Fortran wrappers
// return it in the optional `stat` argument, and without one stop the run (ERROR STOP with
// the status). The symbols WRF itself calls with fixed argument lists (wsm5_gpu_init,
// wsm5_host) have no status argument: a failure ends the process with the status.
//
// Backend: the caller's code (1 cpu, 2 gpu, 3 both, 4 auto), else WRFGPU_BACKEND, else gpu for
// every kernel: inside WRF a GPU run never falls back to the CPU silently.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "errors.h"
#include "modes.h"

namespace wrfgpu {

template <class F>
int bridge_call(const char* where, F&& f) noexcept {
  try {
    f();
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "wrfgpu: %s: %s\n", where, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrfgpu: %s: %s\n", where, e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "wrfgpu: %s: unknown error\n", where);
    return 1;
  }
}

// For the entry points without a status argument: a failure ends the process.
template <class F>
void bridge_call_or_exit(const char* where, F&& f) noexcept {
  const int status = bridge_call(where, f);
  if (status != 0) {
    std::fflush(nullptr);
    std::exit(status);
  }
}

// The backend code of the Fortran interfaces (0: WRFGPU_BACKEND, else gpu).
inline Backend bridge_backend(int code) {
  switch (code) {
    case 1: return Backend::Cpu;
    case 2: return Backend::Gpu;
    case 3: return Backend::Both;
    case 4: return Backend::Auto;
    case 0: return backend_from_env(Backend::Gpu);
    default:
      throw InputError("backend code " + std::to_string(code) +
                       ": expected 0 (WRFGPU_BACKEND, else gpu), 1 cpu, 2 gpu, 3 both or 4 auto");
  }
}

}  // namespace wrfgpu
