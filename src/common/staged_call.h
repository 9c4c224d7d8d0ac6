// staged_call.h - the one host pipeline of the GPU backends (WSM5, advection, RADM2SORG).
//
// A GPU call is cut into chunks (WSM5: slabs of tile rows; advection: groups of species;
// RADM2SORG: runs of cells). Each chunk goes through the same steps:
//
//   pack (host: the caller's arrays -> page-locked staging, checking the values it copies)
//   -> copy_in (H2D) -> [check (a device check kernel)] -> launch (the kernels)
//   -> copy_out (D2H) -> unpack (host: staging -> the caller's arrays)
//
// chunk q on stream q % streams. The host packs chunk q+1 while the device runs chunk q, and
// unpacks chunk q while later chunks are still in flight. A backend supplies the steps of one
// chunk (its buffers, layouts and kernels: ChunkSteps) and a plan (ChunkPlan); this file
// owns the order, the waits, the streams and events, the bad-input protocol, the timings and
// the lock. docs/design.md ("The staged call") says why each rule is there.
//
// Bad input never reaches the caller's arrays: with Staging::PerCall or PerSlotIn no output
// is unpacked before every chunk is packed (and, with device_check, checked), with PerSlot
// none before check_later has passed the inputs of the chunks not yet packed; when a chunk's
// pack, the device check or check_later finds a bad value, no kernel is queued for it or later
// chunks, the streams are drained (queued work still reads the staging) and report_bad()
// throws the message that names the field, the value and (i,k,j).
//
// Phase times are GPU times taken from events: for each phase the time during which at least
// one chunk was in it (the union of the chunks' intervals; chunks on different streams
// overlap, so a sum would count the same milliseconds twice). Host pack and unpack times are
// wall-clock sums. Included only by .cu files.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_util.h"

namespace wrfgpu {

// How a backend's page-locked staging is reused between chunks.
enum class Staging {
  // Every chunk has its own staging, in and out (WSM5): packing never waits; outputs are
  // unpacked after every chunk is packed and checked.
  PerCall,
  // Inputs staged per stream, outputs per call (advection, whose outputs are few per
  // species): chunk q waits for chunk q - streams to have copied its inputs in before it is
  // packed; outputs are unpacked after every chunk is packed and checked.
  PerSlotIn,
  // Inputs and outputs staged per stream, each in its own buffers (RADM2SORG): chunk q is
  // packed once chunk q - streams's inputs are on the device, and chunk q - streams is
  // unpacked after chunk q is queued, before chunk q's copy back; so the caller's arrays are
  // written while later chunks are still read. So every input must be known good before the
  // first unpack: the first `streams` chunks' pack may fail (nothing is written yet);
  // check_later then checks the inputs of all later chunks, on the host while the first
  // chunks run on the device, and their pack may not fail.
  PerSlot,
};

struct ChunkPlan {
  const char* name = "";      // NVTX ranges and the trace: "wsm5", "advect", "radm2sorg"
  int chunks = 1;
  int streams = 2;            // chunk q runs on stream q % streams
  Staging staging = Staging::PerCall;
  bool device_check = false;  // check() runs after each chunk's copy_in; no copy_out is
                              // queued until every chunk's check has passed (checks_pass)
};

// The steps of chunk q, supplied by the backend. Empty functions are skipped.
struct ChunkSteps {
  std::function<void(cudaStream_t)> prologue;       // the H2D of inputs common to all chunks
                                                    // (on stream 0; every chunk waits); pack
                                                    // them before run(), outside its clock
  std::function<bool(int q)> pack;                  // false: a bad input value was found
  std::function<void(int q, cudaStream_t)> copy_in;
  std::function<void(int q, cudaStream_t)> check;   // device_check: queue the check kernel
  std::function<void(int q, cudaStream_t)> launch;
  std::function<void(int q, cudaStream_t)> copy_out;
  std::function<void(int q)> unpack;
  std::function<bool()> checks_pass;                // device_check: after every chunk's check
  std::function<bool()> check_later;                // PerSlot: the inputs of chunks >= streams
                                                    // (false: bad); before the first unpack
  std::function<void()> report_bad;                 // throws the message naming the bad value
};

struct StagedTimes {
  double pack_ms = 0, unpack_ms = 0;                // host, summed over chunks
  double check_later_ms = 0;                        // host, PerSlot's check_later
  double h2d_ms = 0, check_ms = 0, kernel_ms = 0, d2h_ms = 0;  // GPU, union over chunks
  double total_ms = 0;                              // wall time of run()
  int chunks = 0, streams = 0;
};

// One per backend and numerical mode, created once and never destroyed (CUDA may be gone at
// process exit). The backend holds lock() for the whole call: the pipeline's streams and
// events and the backend's own buffers are shared by every call (WRF's OpenMP tile loops may
// call from several threads).
class StagedPipeline {
 public:
  explicit StagedPipeline(const char* name) : name_(name) {}
  StagedPipeline(const StagedPipeline&) = delete;
  StagedPipeline& operator=(const StagedPipeline&) = delete;
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mu_); }
  // Runs the plan. Throws what report_bad throws on bad input (nothing written to the
  // caller's arrays then, except with Staging::PerSlot, where pack may not fail).
  StagedTimes run(const ChunkPlan& plan, const ChunkSteps& steps);

 private:
  // Per chunk: before H2D, after H2D, after check, after kernels, before D2H, after D2H.
  static constexpr int kEv = 6;
  cudaEvent_t event(std::size_t i);
  std::string name_;
  std::mutex mu_;
  StreamSet streams_;
  std::vector<cudaEvent_t> ev_;  // ev_[0]: the call's start; then kEv per chunk
};

}  // namespace wrfgpu
