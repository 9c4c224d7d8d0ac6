// test_radm2sorg_split.cpp - the split step (generated/radm2sorg_split.h, tools/kpp_gen/kpp_split.py)
// on the CPU, against the serial integrator's own functions: its statements in program order, and
// the split run by split::WARPS x 32 threads, one per (warp, lane), with a barrier where the split
// has one, three ways: free-running, and with the warps taking turns between two barriers, first
// to last and last to first, each warp running its whole stretch before the next starts. Every
// way must give the bits of kpp_rosenbrock.h's ros_attempt (fun, jac_ghimj, kpp_decomp, the
// stages by ros_combine and kpp_solve, ros_new_solution), or a statement, a published entry or a
// barrier is missing. The GPU kernel built on it is held to the CPU backend by the device tests.
//
// This file has its own copy of the physics (its own mode namespace): the split's barrier here
// is the test's, which no other translation unit may share.
#undef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS split_check
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

static thread_local int t_warp;
void split_barrier_cpu(int warp);
#define WRFGPU_SPLIT_BARRIER() split_barrier_cpu(t_warp)
#include "kpp_rosenbrock.h"
#include "generated/radm2sorg_mechanism.h"
#include "generated/radm2sorg_split.h"
#include "test_util.h"

namespace {

namespace kpp = wrfgpu::kpp;
namespace mech = wrfgpu::kpp_radm2sorg;
namespace sp = wrfgpu::kpp_radm2sorg::split;
using Mech = mech::Mechanism;
constexpr int NV = mech::NVAR, NNZ = mech::LU_NONZERO, NR = mech::NREACT, P = sp::WARPS;

using wrfgpu_test::Barrier;

// The split's barrier on the CPU. order 0: the threads run freely between barriers; 1 or -1:
// after each barrier the warps take turns (first to last, or last to first), a warp's 32
// threads running until its next barrier before the next warp starts.
struct Levels {
  Barrier all{P * 32};
  int order = 0;
  std::atomic<int> turn{0}, done_in_warp[P] = {};
  int position(int warp) const { return order > 0 ? warp : P - 1 - warp; }
  void wait_turn(int warp) {
    if (order)
      while (turn.load() != position(warp)) std::this_thread::yield();
  }
  void end_stretch(int warp) {
    if (order && ++done_in_warp[warp] == 32) {
      done_in_warp[warp] = 0;
      ++turn;
    }
  }
  void barrier(int warp) {
    end_stretch(warp);
    all.wait();
    if (order) {
      if (warp == 0) turn.store(0);
      all.wait();
      wait_turn(warp);
    }
  }
};
Levels* g_levels = nullptr;

// 32 cells: rates, Y and FIX drawn at random, each lane its own H. Lane 5 has no reactions and
// ghinv 0: every diagonal is 0, so kpp_decomp reports row 1 singular.
struct Cells {
  std::vector<double> r = std::vector<double>(NR * 32), gv = std::vector<double>(sp::NGV * 32, 0.0);
  kpp::SplitScalars c[32];
  Cells() {
    unsigned seed = 4242;
    auto rnd = [&] { seed = seed * 1664525u + 1013904223u; return (seed >> 8) / 16777216.0; };
    for (auto& v : r) v = 0.01 + rnd();
    for (int i = 0; i < NV + mech::NFIX; ++i)
      for (int l = 0; l < 32; ++l) gv[(sp::OFF_Y + i) * 32 + l] = 0.05 + 0.2 * rnd();
    const kpp::RosCoeffs rc = kpp::ros_coeffs(kpp::kRos3);
    for (int l = 0; l < 32; ++l) {
      const double H = 0.5 + 3.0 * l;  // seconds
      c[l] = {1.0 / (1.0 * H * rc.Gamma[0]), rc.A[0], rc.C[0] / (1.0 * H), rc.C[1] / (1.0 * H),
              rc.C[2] / (1.0 * H), rc.M[0], rc.M[1], rc.M[2], rc.E[0], rc.E[1], rc.E[2], 1.0, 1.0e-3};
    }
    for (int j = 0; j < NR; ++j) r[j * 32 + 5] = 0.0;
    c[5].ghinv = 0.0;
    // Lane 7: every third species absent, as at a cold start: zero matrix entries and zero
    // numerators in the decomposition and the solves.
    for (int i = 0; i < NV; i += 3) gv[(sp::OFF_Y + i) * 32 + 7] = 0.0;
  }
};

// ros_attempt's arithmetic for lane l (a new step, accepted or not), by the serial integrator's
// own functions: Fcn0, the matrix, its decomposition, the three stages and the new solution.
struct Reference {
  std::vector<double> g = std::vector<double>(NNZ * 32), gv;
  int ising[32];
  double err[32];
  explicit Reference(const Cells& in) : gv(in.gv) {
    const kpp::RosCoeffs rc = kpp::ros_coeffs(kpp::kRos3);
    for (int l = 0; l < 32; ++l) {
      auto V = [&](int o) { return gv.data() + o * 32 + l; };
      const double* r = in.r.data() + l;
      const kpp::SplitScalars& c = in.c[l];
      Mech::fun(V(sp::OFF_Y), V(sp::OFF_FIX), r, V(sp::OFF_FCN0), 32);
      Mech::jac_ghimj(V(sp::OFF_Y), V(sp::OFF_FIX), r, c.ghinv, g.data() + l, 32);
      ising[l] = Mech::decomp(g.data() + l, 32);
      const std::ptrdiff_t ks = (std::ptrdiff_t)NV * 32;
      double* k = V(sp::OFF_K0);
      const double hc[3] = {c.hc10, c.hc20, c.hc21};
      const double* fcn = V(sp::OFF_FCN0);
      for (int istage = 0; istage < 3; ++istage) {
        const int a0 = istage * (istage - 1) / 2;
        if (istage > 0 && rc.NewF[istage]) {
          kpp::ros_combine(NV, V(sp::OFF_Y), rc.A + a0, istage, k, ks, V(sp::OFF_YNEW), 32);
          Mech::fun(V(sp::OFF_YNEW), V(sp::OFF_FIX), r, V(sp::OFF_FCN), 32);
          fcn = V(sp::OFF_FCN);
        }
        kpp::ros_combine(NV, fcn, hc + a0, istage, k, ks, k + istage * ks, 32);
        Mech::solve(g.data() + l, k + istage * ks, 32);
      }
      err[l] = kpp::ros_new_solution<Mech>(V(sp::OFF_Y), rc, k, ks, V(sp::OFF_YNEW), c.atol, c.rtol, 32);
    }
  }
};

// Values that differ in their bits: the vectors the split writes, fun's reaction rates and
// the error terms aside (the serial integrator keeps them in temporaries), in the lanes whose
// matrix is not singular (there the integrator stops at the decomposition: no stages).
std::size_t vectors_differ(const std::vector<double>& gv, const Reference& ref) {
  std::size_t d = 0;
  for (int o = 0; o < sp::OFF_A; ++o)
    for (int l = 0; l < 32; ++l)
      if (ref.ising[l] == 0) d += std::memcmp(&gv[o * 32 + l], &ref.gv[o * 32 + l], 8) != 0;
  return d;
}
std::size_t norms_differ(const std::vector<double>& gv, const Reference& ref) {
  std::size_t d = 0;
  for (int l = 0; l < 32; ++l) {
    if (ref.ising[l] != 0) continue;
    const double e = std::sqrt(gv[sp::OFF_ERRSUM * 32 + l] / (double)NV);
    d += std::memcmp(&e, &ref.err[l], 8) != 0;
  }
  return d;
}

}  // namespace

void split_barrier_cpu(int warp) { g_levels->barrier(warp); }

TEST(Radm2sorgSplit, StatementsInOrderGiveTheSerialIntegratorsBits) {
  const Cells in;
  const Reference ref(in);
  std::vector<double> g(NNZ * 32, 0.0), x(NV * 32, 0.0), gv = in.gv;
  int sing[32];
  for (int l = 0; l < 32; ++l)
    sing[l] = mech::split_step_serial<double>(g.data(), x.data(), in.r.data(), gv.data(), l, in.c[l]);
  std::size_t dg = 0;
  for (int l = 0; l < 32; ++l)
    if (ref.ising[l] == 0)  // kpp_decomp stops at a singular row
      for (int e = 0; e < NNZ; ++e) dg += std::memcmp(&g[e * 32 + l], &ref.g[e * 32 + l], 8) != 0;
  EXPECT_EQ(dg, 0u);
  EXPECT_EQ(vectors_differ(gv, ref), 0u);
  EXPECT_EQ(norms_differ(gv, ref), 0u);
  for (int l = 0; l < 32; ++l) EXPECT_EQ(sing[l] != 0, ref.ising[l] != 0) << "lane " << l;
  EXPECT_EQ(ref.ising[5], 1);
  EXPECT_TRUE(std::isfinite(ref.err[0]) && ref.err[0] > 0.0);
}

TEST(Radm2sorgSplit, TheSplitOverWarpsGivesTheSameBitsInAnyOrder) {
  const Cells in;
  const Reference ref(in);
  for (int order : {0, 1, -1}) {
    std::vector<double> pub(sp::SLOTS * 32, 0.0), gv = in.gv;
    int sing[P][32];
    Levels levels;
    levels.order = order;
    g_levels = &levels;
    std::vector<std::thread> threads;
    for (int t = 0; t < P * 32; ++t)
      threads.emplace_back([&, t] {
        t_warp = t / 32;
        levels.wait_turn(t_warp);
        sing[t / 32][t % 32] = mech::split_step<double, false>(pub.data(), in.r.data(), gv.data(), t / 32, t % 32, in.c[t % 32]) & kpp::SPLIT_SINGULAR;
        levels.end_stretch(t_warp);
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(vectors_differ(gv, ref), 0u) << "order " << order;
    EXPECT_EQ(norms_differ(gv, ref), 0u) << "order " << order;
    for (int l = 0; l < 32; ++l) {
      int any = 0;
      for (int w = 0; w < P; ++w) any |= sing[w][l];
      EXPECT_EQ(any != 0, ref.ising[l] != 0) << "lane " << l << ", order " << order;
    }
  }
}
