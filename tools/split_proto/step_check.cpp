// step_check.cpp - the whole step of tools/split_proto/gen_step.py on the CPU: its statements in
// program order against the library's generated fun, jac_ghimj, kpp_decomp and kpp_solve
// composed as gen_step.py documents (the same bits, or a statement was read wrongly), then
// the split run by SPLIT_P x 32 threads, one per (warp, lane), with a barrier where the split
// has one, three ways: free-running, and with the warps taking turns between two barriers,
// first to last and last to first, each warp running its whole stretch before the next starts
// (the same bits each time, or a published entry or a barrier is missing).
// Build: see tools/split_proto/build.sh.
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include "radm2sorg_mechanism.h"
static thread_local int t_warp;  // the split's barrier on the CPU: see Levels below
void split_barrier_cpu(int warp);
#define WRFGPU_HD_SPLIT
#define SPLIT_BARRIER() split_barrier_cpu(t_warp)
#include STEP_HEADER

// The split's barrier on the CPU. order 0: the threads run freely between barriers; 1 or -1:
// after each barrier the warps take turns (first to last, or last to first), a warp's 32
// threads running until its next barrier before the next warp starts.
struct Levels {
  std::barrier<> all{SPLIT_P * 32};
  int order = 0;
  std::atomic<int> turn{0}, done_in_warp[SPLIT_P] = {};
  int position(int warp) const { return order > 0 ? warp : SPLIT_P - 1 - warp; }
  void wait_turn(int warp) {
    if (order) while (turn.load() != position(warp)) std::this_thread::yield();
  }
  void end_stretch(int warp) {  // the warp's stretch is done: the next warp's turn
    if (order && ++done_in_warp[warp] == 32) {
      done_in_warp[warp] = 0;
      ++turn;
    }
  }
  void barrier(int warp) {
    end_stretch(warp);
    all.arrive_and_wait();
    if (order) {
      if (warp == 0) turn.store(0);  // everyone has arrived: a new round of turns
      all.arrive_and_wait();
      wait_turn(warp);
    }
  }
};
static Levels* g_levels;
void split_barrier_cpu(int warp) { g_levels->barrier(warp); }

namespace kpp = wrfgpu::kpp_radm2sorg;
constexpr int NNZ = kpp::LU_NONZERO, NV = kpp::NVAR, NR = kpp::NREACT;
const double ghinv = 7.5, hc1 = -0.3, hc20 = 1.2, hc21 = 2.1;

// The library's functions, composed as gen_step.py's step (arrays [element][lane]).
void library_step(double* g, double* x, const double* r, double* gv, int l) {
  auto V = [&](int o) { return gv + o * 32 + l; };
  kpp::fun(V(SPLIT_OFF_Y), V(SPLIT_OFF_FIX), r + l, V(SPLIT_OFF_FCN0), 32);
  kpp::jac_ghimj(V(SPLIT_OFF_Y), V(SPLIT_OFF_FIX), r + l, ghinv, g + l, 32);
  kpp::kpp_decomp(g + l, 32);
  double* k[3] = {V(SPLIT_OFF_K0), V(SPLIT_OFF_K1), V(SPLIT_OFF_K2)};
  for (int st = 0; st < 3; ++st) {
    for (int i = 0; i < NV; ++i) {
      double v = st == 0 ? V(SPLIT_OFF_FCN0)[i * 32] : V(SPLIT_OFF_FCN)[i * 32];
      if (st == 1) v = v + hc1 * k[0][i * 32];
      if (st == 2) v = v + hc20 * k[0][i * 32] + hc21 * k[1][i * 32];
      x[i * 32 + l] = v;
    }
    kpp::kpp_solve(g + l, x + l, 32);
    for (int i = 0; i < NV; ++i) k[st][i * 32] = x[i * 32 + l];
    if (st == 0) {
      for (int i = 0; i < NV; ++i) V(SPLIT_OFF_YNEW)[i * 32] = V(SPLIT_OFF_Y)[i * 32] + 1.0 * k[0][i * 32];
      kpp::fun(V(SPLIT_OFF_YNEW), V(SPLIT_OFF_FIX), r + l, V(SPLIT_OFF_FCN), 32);
    }
  }
  double s = 0.0;
  for (int i = 0; i < NV; ++i) {
    const double y = V(SPLIT_OFF_Y)[i * 32];
    const double yn = y + ROS_M0 * k[0][i * 32] + ROS_M1 * k[1][i * 32] + ROS_M2 * k[2][i * 32];
    const double ye = 0.0 + ROS_E0 * k[0][i * 32] + ROS_E1 * k[1][i * 32] + ROS_E2 * k[2][i * 32];
    V(SPLIT_OFF_YNEW)[i * 32] = yn;
    const double q = ye / (ATOL + RTOL * std::fmax(std::fabs(y), std::fabs(yn)));
    V(SPLIT_OFF_ERR)[i * 32] = q * q;
    s = s + q * q;
  }
  *V(SPLIT_OFF_ERRSUM) = s;
}

int main() {
  std::vector<double> g(NNZ * 32, 0.0), x(NV * 32, 0.0), r(NR * 32), gv(SPLIT_NGV * 32, 0.0);
  unsigned seed = 4242;
  auto rnd = [&] { seed = seed * 1664525u + 1013904223u; return (seed >> 8) / 16777216.0; };
  for (auto& v : r) v = 0.01 + rnd();
  for (int i = 0; i < NV + 2; ++i)
    for (int l = 0; l < 32; ++l) gv[(SPLIT_OFF_Y + i) * 32 + l] = 0.05 + 0.2 * rnd();  // y and fix
  const auto g0 = g, x0 = x, gv0 = gv;
  auto lib_g = g, lib_x = x, lib_gv = gv;
  for (int l = 0; l < 32; ++l) library_step(lib_g.data(), lib_x.data(), r.data(), lib_gv.data(), l);
  // fun's reaction rates (V(SPLIT_OFF_A...)) are the library's temporaries: not compared.
  auto differ = [](const std::vector<double>& a, const std::vector<double>& b) {
    size_t d = 0;
    for (size_t i = 0; i < a.size(); ++i)
      d += std::memcmp(&a[i], &b[i], 8) != 0 &&
           !(a.size() == SPLIT_NGV * 32 && i >= SPLIT_OFF_A * 32 && i < (SPLIT_OFF_A + NR) * 32);
    return d;
  };
  for (int l = 0; l < 32; ++l) split_step_serial<double>(g.data(), x.data(), r.data(), gv.data(), l, ghinv, hc1, hc20, hc21);
  const size_t d_ser = differ(g, lib_g) + differ(x, lib_x) + differ(gv, lib_gv);
  size_t d_split[3];
  for (int order = 0; order < 3; ++order) {
    std::vector<double> pg = g0, px = x0, pgv = gv0;
    Levels levels;
    levels.order = order == 0 ? 0 : order == 1 ? 1 : -1;
    g_levels = &levels;
    std::vector<std::thread> threads;
    for (int t = 0; t < SPLIT_P * 32; ++t)
      threads.emplace_back([&, t] {
        t_warp = t / 32;
        levels.wait_turn(t_warp);
        split_step<double>(pg.data(), px.data(), r.data(), pgv.data(), t / 32, t % 32, ghinv, hc1, hc20, hc21);
        levels.end_stretch(t_warp);
      });
    for (auto& t : threads) t.join();
    d_split[order] = differ(pg, lib_g) + differ(px, lib_x) + differ(pgv, lib_gv);
  }
  std::printf("P=%d, %d levels: of %zu values, the statements in order differ from the library's functions in %zu, "
              "the split run by %d threads in %zu, with the warps taking turns in %zu and in reverse in %zu "
              "(error sum %.6g)\n", SPLIT_P, SPLIT_LEVELS, g.size() + x.size() + gv.size(), d_ser, SPLIT_P * 32,
              d_split[0], d_split[1], d_split[2], lib_gv[SPLIT_OFF_ERRSUM * 32]);
  return d_ser || d_split[0] || d_split[1] || d_split[2];
}
