// radm2sorg_lane.h - the lane-per-cell kernel (radm2sorg_lane_gpu.cu) and the split kernel
// (radm2sorg_split_gpu.cu) of the GPU backend, as radm2sorg_gpu.cu's chunk pipeline launches
// them in place of the warp-per-cell kernel. All three work on the same cell records in device
// memory (kCellVals per cell: VAR, FIX, RCONST), written by the prologue kernel and read back by
// the epilogue.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

constexpr int kCellVals = mech::NVAR + mech::NFIX + mech::NREACT;  // a cell's record

// One round of the refill of the lane and split kernels, for a whole warp: the lanes that
// want a cell take the next positions of the call's counter, one atomicAdd for all of them.
// Returns false when no lane wants one; else sets `more` (the counter has positions left, the
// same in every lane) and this lane's position k in the hand-out order (>= ncell: none, or it
// did not want one).
__device__ __forceinline__ bool take_positions(bool wants, unsigned long long* next, std::size_t ncell,
                                               bool& more, unsigned long long& k) {
  const unsigned full = 0xffffffffu;
  const unsigned need = __ballot_sync(full, wants);
  if (need == 0) return false;
  const int lane = (int)(threadIdx.x & 31u);
  const int leader = __ffs(need) - 1;
  unsigned long long first = 0;
  if (lane == leader) first = atomicAdd(next, (unsigned long long)__popc(need));
  first = __shfl_sync(full, first, leader);
  more = first + __popc(need) < ncell;
  k = wants ? first + __popc(need & ((1u << lane) - 1u)) : (unsigned long long)ncell;
  return true;
}

// Warps to launch for ncell cells: as many as are resident at once on the device, at most one
// per 64 cells (at least two cells per lane). Each needs lane_scratch_values(warps) values of T of device scratch.
template <class T>
int lane_warps(std::size_t ncell);
template <class T>
int lane_device_sms();  // the SMs of the device the lane kernel runs on (for lane_by_size)
template <class T>
std::size_t lane_scratch_values(int warps);
// Integrates the ncell records in `cells` (in place) on stream st: *next must be 0; order
// (may be null) is the hand-out order; stats as the warp kernel writes them.
template <class T>
void launch_lane(const CellOptions& opt, std::size_t ncell, T* cells, int* stats,
                 unsigned long long* next, const unsigned* order, T* scratch, int warps,
                 cudaStream_t st);

// The split kernel (radm2sorg_split_gpu.cu): 32 cells per block of 8 warps, one block per SM,
// each step attempt split over the warps by matrix rows. It runs Ros3 (WRF's method),
// autonomous, in double precision only: split_supports says whether a call may use it.
bool split_supports(const CellOptions& opt, bool use_float);
// Blocks to launch for ncell cells (at most one per SM and per 32 cells); each needs
// split_scratch_values(blocks) doubles of device scratch.
int split_blocks(std::size_t ncell);
std::size_t split_scratch_values(int blocks);
// As launch_lane, on records of doubles; *retries (zeroed by the caller) counts the block
// passes whose attempt ran again with the plain division.
void launch_split(const CellOptions& opt, std::size_t ncell, double* cells, int* stats,
                  unsigned long long* next, const unsigned* order, double* scratch, int blocks,
                  unsigned long long* retries, cudaStream_t st);

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
