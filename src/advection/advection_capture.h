// advection_capture.h - reading advection capture files (docs/capture_format.md, kernel
// advect_scalar_pd; the reference files of test_data/README_advection.md use the same layout
// with kernel advect_scalar for the unlimited scheme) into AdvectInputs, for the tests and
// the replay driver.
#pragma once
#include <string>
#include <vector>
#include "advection.h"

namespace wrfgpu {
namespace advection {

struct AdvectCapture {
  std::string path, kernel, case_name, source, scalar_names;
  bool pd = true;
  int nspec = 0;
  WrfDims d;  // memory = the stored region
  AdvectFlags flags;
  float rdx = 0, rdy = 0, dt = 0;
  int time_step = 1;
  bool tenddec = false;
  std::vector<float> field, field_old, ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw;
  std::vector<float> tendency_ref, h_ref, z_ref;  // WRF's outputs (h/z only when tenddec)
  // Inputs pointing into this object; outputs into the caller's buffers (size nspec*size3).
  AdvectInputs inputs(float* tendency, float* h = nullptr, float* z = nullptr) const;
};

inline AdvectInputs AdvectCapture::inputs(float* tendency, float* h, float* z) const {
  AdvectInputs in;
  in.dims = d;
  in.nspec = nspec;
  in.field = field.data();
  in.field_old = field_old.data();
  in.tendency = tendency;
  in.h_tendency = h;
  in.z_tendency = z;
  in.ru = ru.data(); in.rv = rv.data(); in.rom = rom.data();
  in.mut = mut.data(); in.mub = mub.data(); in.mu_old = mu_old.data();
  in.msftx = msftx.data(); in.msfty = msfty.data();
  in.c1 = c1.data(); in.c2 = c2.data(); in.fzm = fzm.data(); in.fzp = fzp.data(); in.rdzw = rdzw.data();
  in.rdx = rdx; in.rdy = rdy; in.dt = dt; in.time_step = time_step;
  in.flags = flags;
  return in;
}


// A sub-box of the stored region, in WRF's global i/j indices (inclusive), e.g. an MPI
// patch plus the halo it needs. Dimensions other than west_east/south_north are read whole.
struct CaptureWindow {
  int i0, i1, j0, j1;
};

// Throws InputError naming the file and the missing/ill-shaped variable or attribute.
// With `window`, only that part of the region is read (hyperslabs) and becomes the memory
// extent ims..ime, jms..jme of the result; the tile bounds stay as stored.
AdvectCapture load_capture(const std::string& path, const CaptureWindow* window = nullptr);

}  // namespace advection
}  // namespace wrfgpu
