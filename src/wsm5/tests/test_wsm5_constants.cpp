// test_wsm5_constants.cpp - wsm5init (module_mp_wsm5.F l.1806-1900) against WRF's own values.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "test_util.h"
#include "wsm5_constants.h"

using namespace wrfgpu::wsm5;

namespace {
uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
}  // namespace

// Bit patterns printed by WRF's wsm5init, compiled with gfortran 12.2 and WRF's flags
// (-O2 -ftree-vectorize -funroll-loops), for the driver's constants (rhoair0=1.28,
// rhowater=1000, rhosnow=100, cliq=4190, cpv=4*461.6). Reference data, not WRF code.
TEST(Wsm5Constants, Wsm5initBitwiseAsGfortran) {
  const Constants c = wrf_default_constants();
  const struct { const char* name; uint32_t want; float got; } t[] = {
      {"pi", 0x40490FDBU, c.pi},
      {"xlv1", 0x4512799AU, c.xlv1},
      {"qc0", 0x3A03C498U, c.qc0},
      {"qck1", 0x40D8C3BEU, c.qck1},
      {"pidnc", 0x4402E653U, c.pidnc},
      {"bvtr1", 0x3FE66666U, c.bvtr1},
      {"bvtr2", 0x4039999AU, c.bvtr2},
      {"bvtr3", 0x40733333U, c.bvtr3},
      {"bvtr4", 0x4099999AU, c.bvtr4},
      {"g1pbr", 0x3F6E64C7U, c.g1pbr},
      {"g3pbr", 0x40961AF3U, c.g3pbr},
      {"g4pbr", 0x418E89D3U, c.g4pbr},
      {"g5pbro2", 0x3FE9CDB8U, c.g5pbro2},
      {"pvtr", 0x451C4105U, c.pvtr},
      {"eacrr", 0x3F800000U, c.eacrr},
      {"pacrr", 0x50B8DFD0U, c.pacrr},
      {"precr1", 0x4C159029U, c.precr1},
      {"precr2", 0x4E44E61AU, c.precr2},
      {"xmmax", 0x30F2A2EDU, c.xmmax},
      {"roqimax", 0x38AA64C8U, c.roqimax},
      {"bvts1", 0x3FB47AE1U, c.bvts1},
      {"bvts2", 0x402D1EB8U, c.bvts2},
      {"bvts3", 0x405A3D71U, c.bvts3},
      {"bvts4", 0x408D1EB8U, c.bvts4},
      {"g1pbs", 0x3F62FD2CU, c.g1pbs},
      {"g3pbs", 0x4040BD7BU, c.g3pbs},
      {"g4pbs", 0x41243ED9U, c.g4pbs},
      {"g5pbso2", 0x3FC67037U, c.g5pbso2},
      {"pvts", 0x41A069C1U, c.pvts},
      {"pacrs", 0x4C537EB0U, c.pacrs},
      {"precs1", 0x4A9EB100U, c.precs1},
      {"precs2", 0x4B8E882CU, c.precs2},
      {"pidn0r", 0x50BB40E7U, c.pidn0r},
      {"pidn0s", 0x4E15CD85U, c.pidn0s},
      {"pacrc", 0x4C537EB0U, c.pacrc},
      {"rslopermax", 0x3751B717U, c.rslopermax},
      {"rslopesmax", 0x3727C5ACU, c.rslopesmax},
      {"rsloperbmax", 0x38FAB3B8U, c.rsloperbmax},
      {"rslopesbmax", 0x3C1205C6U, c.rslopesbmax},
      {"rsloper2max", 0x2F2BCC76U, c.rsloper2max},
      {"rslopes2max", 0x2EDBE6FEU, c.rslopes2max},
      {"rsloper3max", 0x270CBCCBU, c.rsloper3max},
      {"rslopes3max", 0x26901D7CU, c.rslopes3max},
  };
  for (const auto& x : t)
    EXPECT_EQ(bits(x.got), x.want) << x.name << " = " << x.got;
}

// The values in docs (docs/wrf_reference.md A.4), computed with gfortran from WRF.
TEST(Wsm5Constants, MatchInterfaceTable) {
  const Constants c = wrf_default_constants();
  auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-7 * std::fabs(b); };
  EXPECT_TRUE(near(c.qc0, 5.0265482e-4)) << c.qc0;
  EXPECT_TRUE(near(c.qck1, 6.7738943)) << c.qck1;
  EXPECT_TRUE(near(c.g1pbr, 0.93122524)) << c.g1pbr;
  EXPECT_TRUE(near(c.g3pbr, 4.6907897)) << c.g3pbr;
  EXPECT_TRUE(near(c.g4pbr, 17.817297)) << c.g4pbr;
  EXPECT_TRUE(near(c.g5pbro2, 1.8265905)) << c.g5pbro2;
  EXPECT_TRUE(near(c.pvtr, 2500.0637)) << c.pvtr;
  EXPECT_TRUE(near(c.pacrr, 2.4813404e10)) << c.pacrr;
  EXPECT_TRUE(near(c.precr1, 3.9207076e7)) << c.precr1;
  EXPECT_TRUE(near(c.precr2, 8.2585357e8)) << c.precr2;
  EXPECT_TRUE(near(c.roqimax, 8.1250037e-5)) << c.roqimax;
  EXPECT_TRUE(near(c.g1pbs, 0.88667560)) << c.g1pbs;
  EXPECT_TRUE(near(c.g3pbs, 3.0115650)) << c.g3pbs;
  EXPECT_TRUE(near(c.g4pbs, 10.265344)) << c.g4pbs;
  EXPECT_TRUE(near(c.g5pbso2, 1.5502995)) << c.g5pbso2;
  EXPECT_TRUE(near(c.pvts, 20.051638)) << c.pvts;
  EXPECT_TRUE(near(c.pacrs, 5.5442112e7)) << c.pacrs;
  EXPECT_EQ(c.pacrs, c.pacrc);
  EXPECT_TRUE(near(c.precs1, 5.2e6)) << c.precs1;
  EXPECT_TRUE(near(c.precs2, 1.8681944e7)) << c.precs2;
  EXPECT_TRUE(near(c.pidn0r, 2.5132743e10)) << c.pidn0r;
  EXPECT_TRUE(near(c.pidn0s, 6.2831853e8)) << c.pidn0s;
  EXPECT_TRUE(near(c.rsloperbmax, 1.1954404e-4)) << c.rsloperbmax;
  EXPECT_TRUE(near(c.rslopesbmax, 8.9125093e-3)) << c.rslopesbmax;
  EXPECT_FLOAT_EQ(c.xlv1, 2343.6f);
}

// rgmma is WRF's 10,000-term single-precision product, not the true gamma function.
TEST(Wsm5Constants, RgmmaIsWrfsProductNotTgamma) {
  EXPECT_NEAR(rgmma(4.8f), 17.817297f, 2e-5f);
  EXPECT_GT(std::fabs(rgmma(4.8f) - std::tgamma(4.8)), 0.015);  // true value 17.8379
  EXPECT_EQ(rgmma(1.f), 0.f);  // WRF's special case
}

TEST(Wsm5Constants, DriverConstantsAreModuleModelConstants) {
  const Constants c = wrf_model_constants();
  EXPECT_FLOAT_EQ(c.cpd, 1004.5f);
  EXPECT_FLOAT_EQ(c.cpv, 1846.4f);
  EXPECT_FLOAT_EQ(c.xlv0, 2.5e6f);  // the driver passes xlv, not XLV0=3.15e6
  EXPECT_FLOAT_EQ(c.ep2, 287.f / 461.6f);
  EXPECT_FLOAT_EQ(c.qmin, 1e-15f);
  EXPECT_FLOAT_EQ(c.dens, 100.f);
  // wsm5init keeps the driver constants and adds the fpvs constants of wsm52D
  const Constants d = wrf_default_constants();
  EXPECT_FLOAT_EQ(d.ttp, 273.16f);
  EXPECT_FLOAT_EQ(d.xa, -(1846.4f - 4190.f) / 461.6f);
}
