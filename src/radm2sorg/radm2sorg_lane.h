// radm2sorg_lane.h - the lane-per-cell kernel of the GPU backend (radm2sorg_lane_gpu.cu), as
// radm2sorg_gpu.cu's chunk pipeline launches it in place of the warp-per-cell kernel for large
// calls. Both kernels work on the same cell records in device memory (kCellVals per cell: VAR,
// FIX, RCONST), written by the prologue kernel and read back by the epilogue.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

constexpr int kCellVals = mech::NVAR + mech::NFIX + mech::NREACT;  // a cell's record
// GpuSolver::Auto takes the lane kernel for chunks of at least this many cells per SM
// (lane_min_cells): with fewer, the lanes' last cells leave a long tail. Measured on an H200
// (docs/radm2sorg.md "Spill-free generated code"): the warp kernel faster up to 72,000 warm
// cells (545 per SM), even at 120,000 (909), the lane kernel from 144,000 (1,091). On an H100
// with 2 blocks per SM the crossover was between 3.6 and 4.3 cells per lane, the same number of
// cells: it follows the SMs, not the lanes each holds.
constexpr int kLaneMinCellsPerSm = 1024;

// Warps to launch for ncell cells: as many as are resident at once on the device, at most one
// per 64 cells (at least two cells per lane). Each needs lane_scratch_values(warps) values of T of device scratch.
template <class T>
int lane_warps(std::size_t ncell);
template <class T>
std::size_t lane_min_cells();  // kLaneMinCellsPerSm times the device's SMs
template <class T>
std::size_t lane_scratch_values(int warps);
// Integrates the ncell records in `cells` (in place) on stream st: *next must be 0; order
// (may be null) is the hand-out order; stats as the warp kernel writes them.
template <class T>
void launch_lane(const CellOptions& opt, std::size_t ncell, T* cells, int* stats,
                 unsigned long long* next, const unsigned* order, T* scratch, int warps,
                 cudaStream_t st);

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
