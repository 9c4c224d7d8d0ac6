// test_radm2sorg_split.cpp - the split step (generated/radm2sorg_split.h, tools/kpp_gen/kpp_split.py)
// on the CPU, against the serial integrator's own functions: its statements in program order, and
// the split run by one thread per (warp, lane), with the split's signals and waits between the
// threads of a lane, three ways: free-running (split::WARPS x 32 threads at once), and lane by
// lane with the warps taking turns, first to last and last to first, each warp running as far
// as its waits let it before it hands the turn on (a warp that reads too early then reads
// before the write it needs). Every way must give the bits of kpp_rosenbrock.h's ros_attempt
// (fun, jac_ghimj, kpp_decomp, the stages by ros_combine and kpp_solve, ros_new_solution), or a
// statement, a published entry or a wait is missing. The GPU kernel built on it is held to the
// CPU backend by the device tests.
//
// This file has its own copy of the physics (its own mode namespace): the split's signals and
// waits here are the test's, which no other translation unit may share.
#undef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS split_check
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

void split_signal_cpu(int warp, int lane, unsigned n);
void split_wait_cpu(int p, int warp, int lane, unsigned n);
#define WRFGPU_SPLIT_SIGNAL(n) split_signal_cpu(warp, lane, (n))
#define WRFGPU_SPLIT_WAIT(p, n) split_wait_cpu((p), warp, lane, (n))
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

// The split's signals and waits on the CPU, per lane: a lane's threads touch only that lane's
// values. order 0: the threads run freely (a wait spins); 1 or -1: one lane at a time, its warps
// taking turns (first to last, or last to first): a warp runs until a wait it cannot pass or
// its end, then hands the turn to the next warp that has not ended.
struct Progress {
  std::atomic<unsigned> prog[P][32] = {};
  int order = 0;
  std::atomic<int> turn{0};
  std::atomic<bool> ended[P] = {};
  int warp_at(int position) const { return order > 0 ? position : P - 1 - position; }
  int position(int warp) const { return order > 0 ? warp : P - 1 - warp; }
  void take_turn(int warp) {
    while (turn.load() != position(warp)) std::this_thread::yield();
  }
  void hand_on(int warp) {
    for (int k = 1; k <= P; ++k) {
      const int next = (position(warp) + k) % P;
      if (!ended[warp_at(next)].load() || k == P) {
        turn.store(next);
        return;
      }
    }
  }
  void end(int warp) {
    ended[warp].store(true);
    hand_on(warp);
  }
  void signal(int warp, int lane, unsigned n) { prog[warp][lane].store(n); }
  void wait(int p, int warp, int lane, unsigned n) {
    while (prog[p][lane].load() < n) {
      if (order) {
        hand_on(warp);
        take_turn(warp);
      } else {
        std::this_thread::yield();
      }
    }
  }
};
Progress* g_progress = nullptr;

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

void split_signal_cpu(int warp, int lane, unsigned n) { g_progress->signal(warp, lane, n); }
void split_wait_cpu(int p, int warp, int lane, unsigned n) { g_progress->wait(p, warp, lane, n); }

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
    auto run = [&](int w, int l) {  // prog is the device's (the host macros keep their own)
      sing[w][l] = mech::split_step<double>(pub.data(), in.r.data(), gv.data(), nullptr, w, l, in.c[l]);
    };
    if (order == 0) {
      Progress pr;
      g_progress = &pr;
      std::vector<std::thread> threads;
      for (int t = 0; t < P * 32; ++t) threads.emplace_back([&, t] { run(t / 32, t % 32); });
      for (auto& t : threads) t.join();
    } else {
      for (int l = 0; l < 32; ++l) {
        Progress pr;
        pr.order = order;
        g_progress = &pr;
        std::vector<std::thread> threads;
        for (int w = 0; w < P; ++w)
          threads.emplace_back([&, w] {
            pr.take_turn(w);
            run(w, l);
            pr.end(w);
          });
        for (auto& t : threads) t.join();
      }
    }
    EXPECT_EQ(vectors_differ(gv, ref), 0u) << "order " << order;
    EXPECT_EQ(norms_differ(gv, ref), 0u) << "order " << order;
    for (int l = 0; l < 32; ++l) {
      int any = 0;
      for (int w = 0; w < P; ++w) any |= sing[w][l];
      EXPECT_EQ(any != 0, ref.ising[l] != 0) << "lane " << l << ", order " << order;
    }
  }
}
