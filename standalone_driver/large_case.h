// large_case.h - makes CONUS-size (or any size) cases from a captured one, in the same
// capture format: horizontal fields are tiled by mirror reflection (no seams), vertical
// dimensions are resampled linearly in level index (layer depths rescaled so columns keep
// their depth), and mixing ratios get a smooth multiplicative perturbation so tiles differ.
// WRF's outputs are dropped: a large case's reference is our CPU backend, and `source`
// says which tool made it.
#pragma once
#include <string>

namespace wrfgpu {

struct LargeCaseSpec {
  int ni = 425, nj = 300, nk = 35;  // tile size in mass points
  int nscalar = 0;                  // advection: number of tracers (0 = as captured); extra
                                    // tracers repeat the captured ones, perturbed
  double perturbation = 0.05;       // amplitude of the smooth perturbation of mixing ratios
  std::string case_name;            // default: <source case>_<ni>x<nj>x<nk>
  bool deflate = true;              // compress the variables (false: faster to write and read)
  // The case's kernel attribute: "" = as captured; "advect_scalar" makes an unlimited-scheme
  // case (WRF's RK steps 1 and 2) from an advect_scalar_pd capture, whose layout it shares.
  std::string kernel;
};

void make_large_case(const std::string& in_path, const std::string& out_path, const LargeCaseSpec& spec);

}  // namespace wrfgpu
