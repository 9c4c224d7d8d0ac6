// halo_exchange.cpp - see halo_exchange.h.
#include "halo_exchange.h"
#include <climits>
#include "errors.h"

namespace wrfgpu {

HaloExchange::HaloExchange(const HaloGeometry& g, MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &nranks_);
  win_ = g.window(rank_);
  send_.assign(nranks_, {});
  recv_.assign(nranks_, {});
  // Owner of each tile cell.
  const Box& t = g.tile;
  const int tni = t.i1 - t.i0 + 1, tnj = t.j1 - t.j0 + 1;
  std::vector<int> owner((std::size_t)tni * tnj, -1);
  for (int r = 0; r < nranks_; ++r) {
    Box o = g.owned(r);
    for (int j = o.j0; j <= o.j1; ++j)
      for (int i = o.i0; i <= o.i1; ++i) owner[(std::size_t)(j - t.j0) * tni + (i - t.i0)] = r;
  }
  // Periodic wrap only where the tile is the whole domain in that direction.
  const bool wrap_x = g.periodic_x && t.i0 == g.domain.i0 && t.i1 == g.domain.i1;
  const bool wrap_y = g.periodic_y && t.j0 == g.domain.j0 && t.j1 == g.domain.j1;
  const int lx = g.domain.i1 - g.domain.i0 + 1, ly = g.domain.j1 - g.domain.j0 + 1;
  auto source = [&](int i, int j, int& si, int& sj) {
    si = i; sj = j;
    if (si < t.i0 || si > t.i1) {
      if (!wrap_x) return false;
      si = g.domain.i0 + (((si - g.domain.i0) % lx) + lx) % lx;
    }
    if (sj < t.j0 || sj > t.j1) {
      if (!wrap_y) return false;
      sj = g.domain.j0 + (((sj - g.domain.j0) % ly) + ly) % ly;
    }
    return t.contains(si, sj);
  };
  const int wni = win_.i1 - win_.i0 + 1;
  auto local = [&](int i, int j) { return (std::size_t)(j - win_.j0) * wni + (i - win_.i0); };
  // Walk every rank's halo in the same (j, i) order on every rank: the receiver's order of
  // cells from one sender is the sender's order of cells for that receiver.
  for (int q = 0; q < nranks_; ++q) {
    Box w = g.window(q), o = g.owned(q);
    for (int j = w.j0; j <= w.j1; ++j)
      for (int i = w.i0; i <= w.i1; ++i) {
        if (o.contains(i, j)) continue;
        int si, sj;
        if (!source(i, j, si, sj)) continue;  // frozen boundary value
        const int src = owner[(std::size_t)(sj - t.j0) * tni + (si - t.i0)];
        if (q == rank_) recv_[src].push_back(local(i, j));
        if (src == rank_) {
          if (!win_.contains(si, sj))
            throw RuntimeError("halo exchange: cell (" + std::to_string(si) + "," + std::to_string(sj) +
                               ") owned by rank " + std::to_string(rank_) + " is outside its window");
          send_[q].push_back(local(si, sj));
        }
      }
  }
}

std::size_t HaloExchange::halo_cells() const {
  std::size_t n = 0;
  for (auto& r : recv_) n += r.size();
  return n;
}

void HaloExchange::exchange(float* field, int nvar, std::size_t var_stride, int nlev) {
  const std::size_t wni = (std::size_t)(win_.i1 - win_.i0 + 1);
  const std::size_t per_cell = (std::size_t)nvar * nlev;
  std::vector<int> scount(nranks_), sdisp(nranks_), rcount(nranks_), rdisp(nranks_);
  std::size_t ns = 0, nr = 0;
  for (int q = 0; q < nranks_; ++q) {
    if ((send_[q].size() + ns) * per_cell > (std::size_t)INT_MAX ||
        (recv_[q].size() + nr) * per_cell > (std::size_t)INT_MAX)
      throw RuntimeError("halo exchange: message larger than MPI's int count");
    sdisp[q] = (int)(ns * per_cell); scount[q] = (int)(send_[q].size() * per_cell); ns += send_[q].size();
    rdisp[q] = (int)(nr * per_cell); rcount[q] = (int)(recv_[q].size() * per_cell); nr += recv_[q].size();
  }
  sbuf_.resize(ns * per_cell);
  rbuf_.resize(nr * per_cell);
  // A cell (window offset c = jj*wni + ii) at level k of var v: v*var_stride + (jj*nlev + k)*wni + ii.
  auto at = [&](std::size_t c, int v, int k) {
    const std::size_t jj = c / wni, ii = c % wni;
    return (std::size_t)v * var_stride + (jj * nlev + k) * wni + ii;
  };
  std::size_t n = 0;
  for (int q = 0; q < nranks_; ++q)
    for (std::size_t c : send_[q])
      for (int v = 0; v < nvar; ++v)
        for (int k = 0; k < nlev; ++k) sbuf_[n++] = field[at(c, v, k)];
  MPI_Alltoallv(sbuf_.data(), scount.data(), sdisp.data(), MPI_FLOAT, rbuf_.data(), rcount.data(),
                rdisp.data(), MPI_FLOAT, comm_);
  n = 0;
  for (int q = 0; q < nranks_; ++q)
    for (std::size_t c : recv_[q])
      for (int v = 0; v < nvar; ++v)
        for (int k = 0; k < nlev; ++k) field[at(c, v, k)] = rbuf_[n++];
}

}  // namespace wrfgpu
