// ceilings_none.cpp - builds without CUDA have no device to measure.
#include "ceilings.h"
#include "errors.h"
namespace wrfgpu {
Ceilings measure_ceilings() { throw RuntimeError("no device ceilings: this build has no CUDA backend"); }
}  // namespace wrfgpu
