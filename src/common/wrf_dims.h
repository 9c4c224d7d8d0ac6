// wrf_dims.h - WRF's index bounds and memory layout, as seen from C++.
//
// WRF arrays are Fortran (i,k,j) with i fastest, dimensioned ims:ime, kms:kme, jms:jme
// (memory = patch + halo). Routines work on a tile its:ite, kts:kte, jts:jte and know the
// domain ids:ide, kds:kde, jds:jde (staggered sizes). All indices here are WRF's 1-based
// Fortran indices so that code can be compared line by line with the Fortran.
#pragma once
#include <cstddef>
#include "wrfgpu_hd.h"

namespace wrfgpu {

struct WrfDims {
  int ids = 1, ide = 1, jds = 1, jde = 1, kds = 1, kde = 1;  // domain
  int ims = 1, ime = 1, jms = 1, jme = 1, kms = 1, kme = 1;  // memory
  int its = 1, ite = 1, jts = 1, jte = 1, kts = 1, kte = 1;  // tile

  WRFGPU_HD int nx() const { return ime - ims + 1; }
  WRFGPU_HD int nz() const { return kme - kms + 1; }
  WRFGPU_HD int ny() const { return jme - jms + 1; }
  // Offset of f(i,k,j) in a memory-dimensioned 3-D array.
  WRFGPU_HD std::size_t idx3(int i, int k, int j) const {
    return (std::size_t)(i - ims) + (std::size_t)(k - kms) * nx() +
           (std::size_t)(j - jms) * nx() * nz();
  }
  // Offset of f(i,j) in a memory-dimensioned 2-D array.
  WRFGPU_HD std::size_t idx2(int i, int j) const {
    return (std::size_t)(i - ims) + (std::size_t)(j - jms) * nx();
  }
  WRFGPU_HD std::size_t size3() const { return (std::size_t)nx() * nz() * ny(); }
  WRFGPU_HD std::size_t size2() const { return (std::size_t)nx() * ny(); }
  WRFGPU_HD int tile_ni() const { return ite - its + 1; }
  WRFGPU_HD int tile_nj() const { return jte - jts + 1; }
  WRFGPU_HD int tile_nk() const { return kte - kts + 1; }
};

// Dims for a dense array that holds exactly a tile (memory == tile), as in capture files.
inline WrfDims dense_tile_dims(int ni, int nk, int nj) {
  WrfDims d;
  d.ids = d.ims = d.its = 1; d.ide = d.ime = d.ite = ni;
  d.kds = d.kms = d.kts = 1; d.kde = d.kme = d.kte = nk;
  d.jds = d.jms = d.jts = 1; d.jde = d.jme = d.jte = nj;
  return d;
}

}  // namespace wrfgpu
