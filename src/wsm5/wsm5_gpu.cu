// wsm5_gpu.cu - CUDA backend of WSM5: one thread per column (i,j), the column physics of
// wsm5_physics.h, column scratch in global memory laid out column-innermost (coalesced).
//
// Data flow per call: the tile is split into j-slabs. For each slab the host packs the tile
// values of the 10 input fields (and rain, snow) into page-locked memory, then on the slab's
// stream: one H2D copy, the kernel, and D2H copies of the 6 updated fields, the 2-D outputs
// and (if asked) the effective radii and the radar reflectivity (refl10cm_wsm5 runs in the
// same kernel, after the column update, with its per-level double work arrays in a device
// buffer laid out column-innermost). Slab s+1 is packed and copied while slab s computes.
// While slab s+1 is in flight the host unpacks slab s into WRF's arrays, tile values only: nothing
// outside its:ite, kts:kte, jts:jte is written. Device and pinned buffers are allocated once
// and grow only when a larger tile arrives. Compiled twice (-DWRFGPU_MODE_NS=strict|fast).
#if defined(__CUDACC__)

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_util.h"
#include "device.h"
#include "errors.h"
#include "wsm5_backends.h"
#include "wsm5_physics.h"
#include "wsm5_radar.h"

namespace wrfgpu {
namespace wsm5 {
namespace WRFGPU_MODE_NS {

namespace {

// Layout of one slab block (floats), identical on host (pinned) and device:
//   3-D fields [f][jj][k][i], f = 0..9: th qv qc qr qi qs den pii p delz
//   2-D fields [g][jj][i],   g = 0..4: rain snow rainncv snowncv sr
//   3-D re fields [r][jj][k][i], r = 0..2: re_cloud re_ice re_snow (only when asked)
//   3-D refl_10cm [jj][k][i] (only when asked)
constexpr int kIn3 = 10, kOut3 = 6, k2d = 5, kRe3 = 3, kRefl3 = 1;

struct SlabGeom {
  int j0, nj;            // first tile row (0-based within the tile) and row count
  std::size_t offset;    // offset of the block in the pinned/device buffer (floats)
  std::size_t cells;     // ni*nk*nj
  std::size_t cols;      // ni*nj
  std::size_t size() const { return cells * kIn3 + cols * k2d + cells * (kRe3 + kRefl3); }
  std::size_t re_offset() const { return cells * kIn3 + cols * k2d; }
  std::size_t refl_offset() const { return re_offset() + cells * kRe3; }
};

__global__ void __launch_bounds__(128)
wsm5_slab_kernel(Constants c, RadarTables rt, int ni, int nk, int njs, float delt, float* blk,
                 float* scratch, double* rwork, int has_snow, int do_re, int do_refl) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int ncols = ni * njs;
  if (col >= ncols) return;
  const int i = col % ni, jj = col / ni;
  const std::size_t cells = (std::size_t)ni * nk * njs;
  const std::ptrdiff_t ks = ni;  // level stride inside a field
  float* base3 = blk + (std::size_t)jj * ni * nk + i;
  auto f3 = [&](int f) { return Col{base3 + (std::size_t)f * cells, ks}; };
  float* base2 = blk + (std::size_t)kIn3 * cells + col;
  auto f2 = [&](int g) { return base2 + (std::size_t)g * ncols; };
  ColumnArgs a;
  a.th = f3(0); a.q = f3(1); a.qc = f3(2); a.qr = f3(3); a.qi = f3(4); a.qs = f3(5);
  const Col den = f3(6), pii = f3(7), p = f3(8), dz = f3(9);
  a.den = CCol{den.p, den.s}; a.pii = CCol{pii.p, pii.s}; a.p = CCol{p.p, p.s};
  a.delz = CCol{dz.p, dz.s};
  a.rain = f2(0);
  a.snow = has_snow ? f2(1) : nullptr;
  a.rainncv = f2(2);
  a.snowncv = has_snow ? f2(3) : nullptr;
  a.sr = f2(4);
  const ColumnScratch s =
      column_scratch(scratch + col, (std::ptrdiff_t)ncols, (std::ptrdiff_t)(nk + 1) * ncols);
  wsm5_column(c, nk, delt, a, s);
  float* const base_re = blk + (std::size_t)kIn3 * cells + (std::size_t)k2d * ncols;
  if (do_refl) {
    // wsm5 l.198-216: refl10cm_wsm5 on the updated column; per-level work column-innermost
    float* fbase = base_re + (std::size_t)kRe3 * cells + (std::size_t)jj * ni * nk + i;
    const ReflArgs r{CCol{a.th.p, ks}, a.pii, a.p, CCol{a.q.p, ks}, CCol{a.qr.p, ks},
                     CCol{a.qs.p, ks}, Col{fbase, ks}};
    refl10cm_column(c, rt, nk, r, rwork + col, (std::ptrdiff_t)ncols,
                    (std::ptrdiff_t)nk * ncols);
  }
  if (do_re) {
    float* rbase = base_re + (std::size_t)jj * ni * nk + i;
    EffRadArgs e{CCol{a.th.p, ks}, a.pii, CCol{a.qc.p, ks},
                 CCol{a.qi.p, ks}, CCol{a.qs.p, ks}, a.den,
                 Col{rbase, ks}, Col{rbase + cells, ks}, Col{rbase + 2 * cells, ks}};
    effect_rad_column(c, nk, e);
  }
}

// Everything the backend keeps between calls (one per mode; calls are serialised).
struct Context {
  std::mutex mu;
  DeviceBuffer<float> dev, scratch;
  DeviceBuffer<double> rwork;   // refl10cm work arrays (only when refl_10cm is asked)
  PinnedBuffer<float> pin;
  StreamSet streams;
  std::vector<cudaEvent_t> ev;  // 4 per slab: before H2D, after H2D, after kernel, after D2H
  std::size_t reserved = 0;     // bytes held by dev + scratch
  std::size_t reserved_rwork = 0;  // bytes held by rwork
  ~Context() {
    for (auto e : ev) cudaEventDestroy(e);
  }
  void events(std::size_t n) {
    while (ev.size() < n) {
      cudaEvent_t e;
      WRFGPU_CUDA_CHECK(cudaEventCreate(&e));
      ev.push_back(e);
    }
  }
};
Context& context() {
  static Context* c = new Context();  // never destroyed: CUDA may be gone at exit
  return *c;
}

}  // namespace

void run_gpu(const Constants& c, const WrfDims& d, float delt, const State& s,
             const Options& opt, Timing* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  Context& ctx = context();
  std::lock_guard<std::mutex> lock(ctx.mu);
  if (gpu_current() < 0) gpu_select(-1, 0);

  const int ni = d.tile_ni(), nk = d.tile_nk(), nj = d.tile_nj();
  const bool has_snow = s.snow != nullptr && s.snowncv != nullptr;
  const bool do_re = want_re(s, opt);
  const bool do_refl = want_refl(s, opt);
  // radar_init once on the host (cached); the kernel gets the tables by value
  const RadarTables rt = do_refl ? radar_tables(c) : RadarTables{};

  // Slabs: enough to overlap transfers with compute, each big enough to fill the GPU.
  int nslab = opt.gpu_slabs > 0 ? opt.gpu_slabs : std::max(1, std::min(nj, (ni * nj) / 8192));
  nslab = std::min(std::max(nslab, 1), nj);
  const int nstream = std::max(1, std::min(opt.gpu_streams > 0 ? opt.gpu_streams : 3, nslab));
  std::vector<SlabGeom> slabs(nslab);
  std::size_t total = 0, max_cols = 0;
  for (int q = 0; q < nslab; ++q) {
    SlabGeom& g = slabs[q];
    g.j0 = (int)((long)nj * q / nslab);
    g.nj = (int)((long)nj * (q + 1) / nslab) - g.j0;
    g.cells = (std::size_t)ni * nk * g.nj;
    g.cols = (std::size_t)ni * g.nj;
    g.offset = total;
    total += g.size();
    max_cols = std::max(max_cols, g.cols);
  }
  const std::size_t scratch_per_stream = (std::size_t)kScratchArrays * (nk + 1) * max_cols;
  const std::size_t rwork_per_stream = do_refl ? (std::size_t)kReflArrays * nk * max_cols : 0;
  const std::size_t need = sizeof(float) * (total + scratch_per_stream * nstream);
  if (need > ctx.reserved) {  // growing: make sure the device has room, with a clear error
    gpu_require_memory(need - ctx.reserved, "wsm5 device buffers");
    ctx.reserved = need;
  }
  const std::size_t rneed = sizeof(double) * rwork_per_stream * nstream;
  if (rneed > ctx.reserved_rwork) {
    gpu_require_memory(rneed - ctx.reserved_rwork, "wsm5 reflectivity work arrays");
    ctx.reserved_rwork = rneed;
  }
  float* dev = ctx.dev.reserve(total);
  float* scr = ctx.scratch.reserve(scratch_per_stream * nstream);
  double* rwk = do_refl ? ctx.rwork.reserve(rwork_per_stream * nstream) : nullptr;
  float* pin = ctx.pin.reserve(total);
  ctx.streams.resize(nstream);
  ctx.events(4 * (std::size_t)nslab);

  const float* in3[kIn3] = {s.th, s.qv, s.qc, s.qr, s.qi, s.qs, s.den, s.pii, s.p, s.delz};
  float* out3[kOut3] = {s.th, s.qv, s.qc, s.qr, s.qi, s.qs};
  float* out2[k2d] = {s.rain, has_snow ? s.snow : nullptr, s.rainncv, has_snow ? s.snowncv : nullptr, s.sr};
  float* re3[kRe3] = {s.re_cloud, s.re_ice, s.re_snow};

  double h2d = 0, ker = 0, d2h = 0;
  // Waits for slab q and copies its tile values back into WRF's arrays.
  auto unpack = [&](int q) {
    const SlabGeom& g = slabs[q];
    WRFGPU_CUDA_CHECK(cudaEventSynchronize(ctx.ev[4 * q + 3]));
    float ms;
    WRFGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, ctx.ev[4 * q + 0], ctx.ev[4 * q + 1])); h2d += ms;
    WRFGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, ctx.ev[4 * q + 1], ctx.ev[4 * q + 2])); ker += ms;
    WRFGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, ctx.ev[4 * q + 2], ctx.ev[4 * q + 3])); d2h += ms;
    NvtxRange r("wsm5 unpack");
    const float* h = pin + g.offset;
#pragma omp parallel for collapse(2) schedule(static)
    for (int f = 0; f < kOut3; ++f)
      for (int jj = 0; jj < g.nj; ++jj)
        for (int k = 0; k < nk; ++k)
          std::memcpy(out3[f] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                      h + f * g.cells + ((std::size_t)jj * nk + k) * ni, sizeof(float) * ni);
    const float* h2 = h + kIn3 * g.cells;
    for (int gg = 0; gg < k2d; ++gg) {
      if (out2[gg] == nullptr) continue;
      for (int jj = 0; jj < g.nj; ++jj)
        std::memcpy(out2[gg] + d.idx2(d.its, d.jts + g.j0 + jj), h2 + gg * g.cols + (std::size_t)jj * ni,
                    sizeof(float) * ni);
    }
    if (do_re) {
      const float* hr = h + g.re_offset();
#pragma omp parallel for collapse(2) schedule(static)
      for (int r3 = 0; r3 < kRe3; ++r3)
        for (int jj = 0; jj < g.nj; ++jj)
          for (int k = 0; k < nk; ++k)
            std::memcpy(re3[r3] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                        hr + r3 * g.cells + ((std::size_t)jj * nk + k) * ni, sizeof(float) * ni);
    }
    if (do_refl) {
      const float* hf = h + g.refl_offset();
#pragma omp parallel for collapse(2) schedule(static)
      for (int jj = 0; jj < g.nj; ++jj)
        for (int k = 0; k < nk; ++k)
          std::memcpy(s.refl_10cm + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                      hf + ((std::size_t)jj * nk + k) * ni, sizeof(float) * ni);
    }
  };
  for (int q = 0; q < nslab; ++q) {
    const SlabGeom& g = slabs[q];
    float* h = pin + g.offset;
    {
      NvtxRange r("wsm5 pack");
#pragma omp parallel for collapse(2) schedule(static)
      for (int f = 0; f < kIn3; ++f)
        for (int jj = 0; jj < g.nj; ++jj)
          for (int k = 0; k < nk; ++k)
            std::memcpy(h + f * g.cells + ((std::size_t)jj * nk + k) * ni,
                        in3[f] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj), sizeof(float) * ni);
      float* h2 = h + kIn3 * g.cells;
      for (int jj = 0; jj < g.nj; ++jj) {
        std::memcpy(h2 + (std::size_t)jj * ni, s.rain + d.idx2(d.its, d.jts + g.j0 + jj), sizeof(float) * ni);
        if (has_snow)
          std::memcpy(h2 + g.cols + (std::size_t)jj * ni, s.snow + d.idx2(d.its, d.jts + g.j0 + jj),
                      sizeof(float) * ni);
        else
          std::memset(h2 + g.cols + (std::size_t)jj * ni, 0, sizeof(float) * ni);
      }
    }
    cudaStream_t st = ctx.streams[q % nstream];
    float* dblk = dev + g.offset;
    float* dscr = scr + (std::size_t)(q % nstream) * scratch_per_stream;
    double* drwk = do_refl ? rwk + (std::size_t)(q % nstream) * rwork_per_stream : nullptr;
    const std::size_t in_bytes = sizeof(float) * (kIn3 * g.cells + 2 * g.cols);
    WRFGPU_CUDA_CHECK(cudaEventRecord(ctx.ev[4 * q + 0], st));
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(dblk, h, in_bytes, cudaMemcpyHostToDevice, st));
    WRFGPU_CUDA_CHECK(cudaEventRecord(ctx.ev[4 * q + 1], st));
    const int threads = 128;
    const int blocks = (int)((g.cols + threads - 1) / threads);
    wsm5_slab_kernel<<<blocks, threads, 0, st>>>(c, rt, ni, nk, g.nj, delt, dblk, dscr, drwk,
                                                 has_snow ? 1 : 0, do_re ? 1 : 0,
                                                 do_refl ? 1 : 0);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_slab_kernel");
    WRFGPU_CUDA_CHECK(cudaEventRecord(ctx.ev[4 * q + 2], st));
    // th..qs (contiguous), the 2-D block, the effective radii, the reflectivity
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(h, dblk, sizeof(float) * kOut3 * g.cells,
                                      cudaMemcpyDeviceToHost, st));
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(h + kIn3 * g.cells, dblk + kIn3 * g.cells,
                                      sizeof(float) * k2d * g.cols, cudaMemcpyDeviceToHost, st));
    if (do_re)
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(h + g.re_offset(), dblk + g.re_offset(),
                                        sizeof(float) * kRe3 * g.cells, cudaMemcpyDeviceToHost, st));
    if (do_refl)
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(h + g.refl_offset(), dblk + g.refl_offset(),
                                        sizeof(float) * kRefl3 * g.cells, cudaMemcpyDeviceToHost, st));
    WRFGPU_CUDA_CHECK(cudaEventRecord(ctx.ev[4 * q + 3], st));
    // Unpack the previous slab while this one is copied and computed.
    if (q > 0) unpack(q - 1);
  }
  unpack(nslab - 1);

  if (timing) {
    timing->h2d_ms = h2d;
    timing->kernel_ms = ker;
    timing->d2h_ms = d2h;
    timing->total_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    timing->backend = Backend::Gpu;
  }
}

}  // namespace WRFGPU_MODE_NS
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // __CUDACC__
