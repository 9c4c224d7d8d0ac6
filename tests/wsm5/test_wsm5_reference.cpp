// test_wsm5_reference.cpp - WSM5 against WRF's own Fortran.
//
// test_data/wsm5_synth_{12,60,180}s_wrfref.nc: synthetic inputs (capture format) with the
// outputs of WRF v4.7.1 module_mp_wsm5.F compiled offline with gfortran 12.2:
//   *_out        WRF's flags (-O2 -ftree-vectorize -funroll-loops): vector libmvec expf/logf
//   *_out_novec  the same source with -fno-tree-vectorize: scalar glibc expf/logf/powf
// Real captures from WRF runs (quarter_ss_*wsm5*, squall2d_x*wsm5*) are replayed too when
// present. Figures are printed so the numbers in docs/wsm5.md can be reproduced.
#include <cmath>
#include <cstdio>
#include <gnu/libc-version.h>

#include "wsm5_case.h"

using namespace wsm5_test;

namespace {

const char* kFields3[] = {"th", "qv", "qc", "qr", "qi", "qs"};

// WRF moves from itself by up to 1.2e-5 in this figure when rebuilt (verification.md); the
// port cannot be held tighter than WRF is to itself.
constexpr double kPlmvStrict = 1.2e-5;
// fast mode (-ffast-math): the sedimentation front moves slightly; measured up to 1e-3 on
// the 2-minor-loop synthetic case (docs/wsm5.md).
constexpr double kPlmvFast = 2e-3;

void compare_all(const Case& k, const Result& r, const std::string& suffix, double plmv_max,
                 double rain_rel_max, const char* label) {
  NcFile f(k.path);
  for (const char* n : kFields3) {
    const std::string v = std::string(n) + "_out" + suffix;
    if (!f.has_var(v)) continue;
    const auto ref = f.read_float(v);
    // Level means below WRF's qmin (1e-15 kg/kg) are zero to WSM5 itself; the literal
    // figure (every non-zero level) is printed too (verify.h).
    const double floor = n[0] == 'q' ? 1e-15 : 0.0;
    const FieldStats s = compare_field(n, ref.data(), r.out.at(n).data(), k.ni, k.nk, k.nj, 1e-12, floor);
    std::printf("  %-18s %-3s plmv %.3e (literal %.3e) max_abs %.3e max_rel %.3e nonfinite %zu\n",
                label, n, s.plmv, s.plmv_literal, s.max_abs, s.max_rel, s.nonfinite);
    EXPECT_EQ(s.nonfinite, 0u) << n;
    EXPECT_LE(s.plmv, plmv_max) << k.path << " " << n << " vs " << v;
  }
  const std::string rv = "rainnc_out" + suffix;
  if (f.has_var(rv)) {
    const auto ref = f.read_float(rv);
    const auto& in = k.in.at("rainnc");
    double dref = 0, dx = 0;  // domain-total rain of this step
    for (std::size_t q = 0; q < ref.size(); ++q) {
      dref += (double)ref[q] - in[q];
      dx += (double)r.out.at("rainnc")[q] - in[q];
    }
    const double rel = dref != 0 ? std::fabs(dx - dref) / std::fabs(dref) : std::fabs(dx);
    std::printf("  %-18s step rain: ref %.6e mm, ours %.6e mm, rel diff %.3e\n", label, dref, dx, rel);
    EXPECT_LE(rel, rain_rel_max) << k.path;
  }
}

}  // namespace

// Strict mode reproduces the scalar gfortran build of WRF's module bit for bit: same
// single-precision operations in the same order, same glibc expf/logf/powf; and so does the
// radar reflectivity (refl10cm_wsm5, double precision, glibc pow/exp/log10/csqrt/clog).
TEST(Wsm5Reference, StrictBitwiseEqualsScalarWrfBuild) {
  const auto files = data_files("wsm5_synth_");
  ASSERT_TRUE(wrfgpu_test::data_present("wsm5_synth_*_wrfref.nc", !files.empty()));
  if (std::string(gnu_get_libc_version()) != "2.36")
    GTEST_SKIP() << "references made with glibc 2.36's libm; this is " << gnu_get_libc_version();
  for (const auto& path : files) {
    const Case k = load_case(path);
    const Result r = run_case(k, Backend::Cpu, Mode::Strict, true, true);
    NcFile f(path);
    for (const char* n : {"th", "qv", "qc", "qr", "qi", "qs", "rainnc", "snownc", "rainncv",
                          "snowncv", "sr", "re_cloud", "re_ice", "re_snow", "refl_10cm"}) {
      const std::string v = std::string(n) + "_out_novec";
      ASSERT_TRUE(f.has_var(v)) << path << ": " << v;
      EXPECT_EQ(bit_differences(f.read_float(v), r.out.at(n)), 0u) << path << ": " << n;
    }
  }
}

TEST(Wsm5Reference, SyntheticCasesAgainstWrfStrictAndFast) {
  const auto files = data_files("wsm5_synth_");
  ASSERT_TRUE(wrfgpu_test::data_present("wsm5_synth_*_wrfref.nc", !files.empty()));
  for (const auto& path : files) {
    const Case k = load_case(path);
    std::printf("%s (%zux%zux%zu, delt %g s)\n", path.c_str(), k.ni, k.nj, k.nk, k.delt);
    // WRF against itself (vector vs scalar build): the spread we quote
    {
      NcFile f(path);
      for (const char* n : kFields3) {
        const auto a = f.read_float(std::string(n) + "_out");
        const auto b = f.read_float(std::string(n) + "_out_novec");
        const FieldStats s = compare_field(n, a.data(), b.data(), k.ni, k.nk, k.nj, 1e-12);
        std::printf("  %-18s %-3s plmv %.3e max_abs %.3e max_rel %.3e\n", "WRF vec vs novec", n,
                    s.plmv, s.max_abs, s.max_rel);
      }
    }
    compare_all(k, run_case(k, Backend::Cpu, Mode::Strict), "", kPlmvStrict, 1e-5, "strict vs WRF");
    compare_all(k, run_case(k, Backend::Cpu, Mode::Fast), "", kPlmvFast, 1e-4, "fast vs WRF");
  }
}

// Captures written by WRF itself (the wrf_patch capture mode).
TEST(Wsm5Reference, WrfCapturesCpuStrictAndFast) {
  std::vector<std::string> files;
  for (const char* part : {"quarter_ss", "squall2d"})
    for (const auto& f : data_files(part))
      if (f.find("wsm5") != std::string::npos) files.push_back(f);
  ASSERT_TRUE(wrfgpu_test::data_present("quarter_ss_*wsm5* / squall2d_*wsm5* captures", !files.empty()));
  for (const auto& path : files) {
    const Case k = load_case(path);
    std::printf("%s (%zux%zux%zu, delt %g s)\n", path.c_str(), k.ni, k.nj, k.nk, k.delt);
    compare_all(k, run_case(k, Backend::Cpu, Mode::Strict, false), "", kPlmvStrict, 1e-5, "strict vs WRF");
    compare_all(k, run_case(k, Backend::Cpu, Mode::Fast, false), "", kPlmvFast, 1e-4, "fast vs WRF");
  }
}
