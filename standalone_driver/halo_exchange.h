// halo_exchange.h - MPI halo exchange between the patches of a replay, for multi-step runs
// (advection: each step needs its neighbours' updated values in its halo, as WRF's
// HALO_EM_* exchanges provide between Runge-Kutta steps).
//
// The exchange lists are derived from the decomposition alone: every rank knows every
// rank's patch and memory window, so it knows what to send to whom and in which order
// without asking. A halo cell inside the captured tile comes from the rank that owns it; a
// halo cell outside the tile wraps around when the direction is periodic and the tile spans
// the domain in it, and otherwise keeps its captured value (a frozen boundary, the same for
// any rank count). Corners are included. Host staging (MPI_Alltoallv of packed buffers).
#pragma once
#include <mpi.h>
#include <cstddef>
#include <functional>
#include <vector>

namespace wrfgpu {

struct Box {
  int i0, i1, j0, j1;  // inclusive, WRF global indices
  bool contains(int i, int j) const { return i >= i0 && i <= i1 && j >= j0 && j <= j1; }
};

struct HaloGeometry {
  Box tile;    // the cells the ranks own together (mass points)
  Box domain;  // the domain's mass points (for periodic wrap)
  bool periodic_x = false, periodic_y = false;
  std::function<Box(int rank)> owned;   // a rank's patch (mass points)
  std::function<Box(int rank)> window;  // a rank's memory window (patch + halo)
};

class HaloExchange {
 public:
  HaloExchange(const HaloGeometry& g, MPI_Comm comm);
  // Fills the halo of `field` (nvar arrays of this rank's window, each var_stride floats
  // apart, laid out [j][level][i] with nlev levels) from the owners of the cells.
  void exchange(float* field, int nvar, std::size_t var_stride, int nlev);
  std::size_t halo_cells() const;  // cells this rank receives per exchange (self included)

 private:
  MPI_Comm comm_;
  int rank_ = 0, nranks_ = 1;
  Box win_;
  // Per peer: local cell offsets ((j-j0)*ni + (i-i0)) of this rank's window to send / fill.
  std::vector<std::vector<std::size_t>> send_, recv_;
  std::vector<float> sbuf_, rbuf_;
};

}  // namespace wrfgpu
