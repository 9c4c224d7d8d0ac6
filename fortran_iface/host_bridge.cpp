// host_bridge.cpp - page-locking a caller's long-lived arrays from Fortran
// (module_wrfgpu_host.F90): WRF's grid state, registered once, so that the hooks copy it
// straight to and from the GPU instead of through host staging (src/common/device.h,
// host_register).
#include <string>

#include "bridge.h"
#include "config.h"
#include "device.h"

using namespace wrfgpu;

extern "C" {

// a: first element of `bytes` bytes; what: the array's name (nwhat characters, not
// NUL-terminated); backend: the hooks' backend code (bridge.h; 0: WRFGPU_BACKEND, else gpu).
// Nothing is registered under the CPU backend (auto without a usable GPU too), where nothing
// is copied to a GPU, nor with WRFGPU_HOST_REGISTER=0 (src/common/config.cpp). A registration
// that fails is said once and the array's copies stay staged: not an error. A bad backend
// code or WRFGPU_BACKEND value stops the run (status 2) naming it.
void wrfgpu_host_register(const void* a, std::size_t bytes, const char* what, int nwhat,
                          int backend) {
  bridge_call_or_exit("wrfgpu_host_register", [&] {
    const Backend b = bridge_backend(backend);
    if (b == Backend::Cpu || (b == Backend::Auto && resolve_backend(b) == Backend::Cpu)) return;
    if (!config::flag("WRFGPU_HOST_REGISTER").value_or(true)) return;
    const std::string name(what, nwhat > 0 ? (std::size_t)nwhat : 0);
    host_register(a, bytes, name.c_str());
  });
}

// Before the array that starts at a is freed (a no-op when it was not registered).
void wrfgpu_host_unregister(const void* a) { host_unregister(a); }

}  // extern "C"
