// staged_call.cu - StagedPipeline::run: the order of a staged GPU call (staged_call.h).
#include "staged_call.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "config.h"
#include "errors.h"

namespace wrfgpu {

namespace {
// The call-level events before the chunks' kEv each: the call's start (the reference of
// every time), and the prologue's copy (before, after).
constexpr std::size_t kCallEv = 3;

// Milliseconds during which at least one of the intervals is open.
double union_ms(std::vector<std::pair<float, float>> iv) {
  std::sort(iv.begin(), iv.end());
  double sum = 0;
  float a = 0, b = -1;
  bool open = false;
  for (const auto& x : iv) {
    if (open && x.first <= b) {
      b = std::max(b, x.second);
      continue;
    }
    if (open) sum += b - a;
    a = x.first; b = x.second; open = true;
  }
  if (open) sum += b - a;
  return sum;
}
}  // namespace

cudaEvent_t StagedPipeline::event(std::size_t i) {
  while (ev_.size() <= i) {
    cudaEvent_t e;
    WRFGPU_CUDA_CHECK(cudaEventCreate(&e));
    ev_.push_back(e);
  }
  return ev_[i];
}

StagedTimes StagedPipeline::run(const ChunkPlan& plan, const ChunkSteps& steps) {
  const auto t0 = std::chrono::steady_clock::now();
  auto now_ms = [&]() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  NvtxRange nv_all(name_.c_str());
  const int nq = plan.chunks, S = std::max(1, plan.streams);
  if (nq < 1) throw RuntimeError(name_ + ": a staged call needs at least one chunk");
  streams_.resize(S);
  event(kCallEv + (std::size_t)kEv * nq - 1);  // create what this call needs, before timing
  auto E = [&](int q, int x) { return ev_[kCallEv + (std::size_t)kEv * q + x]; };
  auto stream = [&](int q) { return streams_[q % S]; };
  const int used = std::min(S, nq);  // streams this call runs on
  auto drain = [&]() {
    for (int s = 0; s < used; ++s) WRFGPU_CUDA_CHECK(cudaStreamSynchronize(streams_[s]));
  };

  StagedTimes T;
  T.chunks = nq;
  T.streams = used;
  std::vector<double> host(4 * (std::size_t)nq, 0.0);  // pack start/end, unpack start/end

  // The reference event, then every stream waits for it (and for the prologue's copy).
  WRFGPU_CUDA_CHECK(cudaEventRecord(ev_[0], streams_[0]));
  bool prologue = false;
  if (steps.prologue) {
    WRFGPU_CUDA_CHECK(cudaEventRecord(ev_[1], streams_[0]));
    steps.prologue(streams_[0]);  // queues the H2D (the backend packed before run())
    WRFGPU_CUDA_CHECK(cudaEventRecord(ev_[2], streams_[0]));
    prologue = true;
  }
  for (int s = 1; s < used; ++s)
    WRFGPU_CUDA_CHECK(cudaStreamWaitEvent(streams_[s], ev_[prologue ? 2 : 0], 0));

  auto queue_copy_out = [&](int q) {
    const cudaStream_t st = stream(q);
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 4), st));
    if (steps.copy_out) {
      NvtxRange r("D2H");
      steps.copy_out(q, st);
    }
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 5), st));
  };
  auto unpack = [&](int q) {
    WRFGPU_CUDA_CHECK(cudaEventSynchronize(E(q, 5)));
    host[4 * q + 2] = now_ms();
    if (steps.unpack) {
      NvtxRange r("unpack");
      steps.unpack(q);
    }
    host[4 * q + 3] = now_ms();
    T.unpack_ms += host[4 * q + 3] - host[4 * q + 2];
  };

  bool bad = false;
  double later[2] = {0, 0};  // check_later's start and end
  // PerSlot: every later chunk's inputs checked before the first unpack (q == S), while the
  // device runs chunks 0..S-1
  auto check_later = [&]() {
    later[0] = now_ms();
    NvtxRange r("check");
    const bool ok = steps.check_later();
    later[1] = now_ms();
    T.check_later_ms = later[1] - later[0];
    return ok;
  };
  for (int q = 0; q < nq; ++q) {
    const cudaStream_t st = stream(q);
    if (q == S && plan.staging == Staging::PerSlot && steps.check_later && !check_later()) {
      bad = true;
      break;
    }
    // The input staging chunk q is packed into is chunk (q - S)'s: its inputs must have gone
    // in (PerSlotIn, PerSlot).
    if (q >= S && plan.staging != Staging::PerCall)
      WRFGPU_CUDA_CHECK(cudaEventSynchronize(E(q - S, 1)));
    host[4 * q] = now_ms();
    bool ok = true;
    if (steps.pack) {
      NvtxRange r("pack");
      ok = steps.pack(q);
    }
    host[4 * q + 1] = now_ms();
    T.pack_ms += host[4 * q + 1] - host[4 * q];
    if (!ok) {
      if (plan.staging == Staging::PerSlot && q >= S) {
        drain();
        throw RuntimeError(name_ + ": bad input found while packing chunk " + std::to_string(q) +
                           " of a call whose earlier outputs are already written (check_later "
                           "passed these inputs)");
      }
      bad = true;  // no kernel for this chunk or any later one
      break;
    }
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 0), st));
    if (steps.copy_in) {
      NvtxRange r("H2D");
      steps.copy_in(q, st);
    }
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 1), st));
    if (plan.device_check && steps.check) steps.check(q, st);
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 2), st));
    {
      NvtxRange r("kernels");
      steps.launch(q, st);
    }
    WRFGPU_CUDA_CHECK(cudaEventRecord(E(q, 3), st));
    // PerSlot: chunk q's results go into the output staging of chunk q - S, which is
    // unpacked first (it waits for that chunk's copies back). Chunk q has been packed and
    // queued by then, so its copies in and kernels follow chunk q - S's on the stream with no
    // host work in between.
    if (q >= S && plan.staging == Staging::PerSlot) unpack(q - S);
    // Without a device check the results go back into the staging at once (the copy engine
    // returns chunk q while chunk q+1 comes in); with one, they wait for every chunk's check,
    // since copy_out may write the caller's arrays (WSM5's page-locked path).
    if (!plan.device_check) queue_copy_out(q);
  }
  auto fail = [&]() {
    drain();  // queued work reads the staging: let it finish before anything else
    if (steps.report_bad) steps.report_bad();
    throw RuntimeError(name_ + ": bad input was found, but not named again by the scan for "
                       "the message");
  };
  if (bad) fail();
  if (plan.device_check) {
    for (int q = 0; q < nq; ++q) WRFGPU_CUDA_CHECK(cudaEventSynchronize(E(q, 2)));
    if (steps.checks_pass && !steps.checks_pass()) fail();
    for (int q = 0; q < nq; ++q) queue_copy_out(q);
  }
  // Every chunk is queued before any is waited for; each is unpacked as soon as its copies
  // are back (PerSlot: the last S, the others were unpacked above).
  for (int q = plan.staging == Staging::PerSlot ? std::max(0, nq - S) : 0; q < nq; ++q) unpack(q);
  WRFGPU_CUDA_CHECK(cudaGetLastError());  // an execution error of any chunk, now

  // Phase times from the events, against the call's start.
  auto at = [&](cudaEvent_t e) {
    float ms = 0;
    WRFGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_[0], e));
    return ms;
  };
  std::vector<std::pair<float, float>> h2d, chk, ker, d2h;
  if (prologue) h2d.push_back({at(ev_[1]), at(ev_[2])});
  std::vector<float> e((std::size_t)kEv * nq);
  for (int q = 0; q < nq; ++q) {
    for (int x = 0; x < kEv; ++x) e[(std::size_t)kEv * q + x] = at(E(q, x));
    const float* c = &e[(std::size_t)kEv * q];
    h2d.push_back({c[0], c[1]});
    chk.push_back({c[1], c[2]});
    ker.push_back({c[2], c[3]});
    d2h.push_back({c[4], c[5]});
  }
  T.h2d_ms = union_ms(h2d);
  T.check_ms = plan.device_check ? union_ms(chk) : 0.0;
  T.kernel_ms = union_ms(ker);
  T.d2h_ms = union_ms(d2h);
  T.total_ms = now_ms();

  // WRFGPU_TRACE=1: the call's timeline on stderr, for tuning.
  const bool trace = config::flag("WRFGPU_TRACE").value_or(false);
  if (trace) {
    std::fprintf(stderr, "%s trace: %d chunks on %d streams; ms from the call's start\n",
                 name_.c_str(), nq, used);
    if (prologue) std::fprintf(stderr, "  prologue H2D %.3f-%.3f\n", at(ev_[1]), at(ev_[2]));
    if (later[1] > 0) std::fprintf(stderr, "  later chunks' input checks (host) %.3f-%.3f\n", later[0], later[1]);
    for (int q = 0; q < nq; ++q) {
      const float* c = &e[(std::size_t)kEv * q];
      std::fprintf(stderr, "  chunk %d: pack %.3f-%.3f  H2D %.3f-%.3f  check -%.3f  kernels -%.3f  "
                   "D2H %.3f-%.3f  unpack %.3f-%.3f\n", q, host[4 * q], host[4 * q + 1], c[0],
                   c[1], c[2], c[3], c[4], c[5], host[4 * q + 2], host[4 * q + 3]);
    }
  }
  return T;
}

}  // namespace wrfgpu
