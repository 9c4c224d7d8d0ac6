// radm2sorg_gpu.cu - CUDA backend: one cell per thread. The per-cell KPP arrays (VAR, FIX,
// RCONST and the Rosenbrock work: ~2100 values per cell) live in a global scratch buffer,
// laid out with the cell index innermost (element e of cell c at e*ncell + c: neighbouring
// threads touch neighbouring addresses, coalesced) or, for comparison, cell outermost (each
// cell's arrays contiguous). The physics is the same header code as the CPU backend.
// Compiled twice (WRFGPU_MODE_NS = strict, fast).
#include <cstdlib>
#include "cuda_util.h"
#include "radm2sorg_backends.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

namespace {

template <class T>
__global__ void radm2sorg_kernel(CellOptions opt, StateMap map, std::size_t ncell,
                                 float* __restrict__ state, const float* __restrict__ met,
                                 float* __restrict__ vdrog3, int* __restrict__ stats,
                                 T* __restrict__ scratch, bool cell_innermost) {
  const std::size_t c = (std::size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncell) return;
  const std::size_t per_cell =
      mech::NVAR + mech::NFIX + mech::NREACT + kpp::ros_work_size<Mech>();
  std::ptrdiff_t s;
  T* base;
  if (cell_innermost) {
    s = (std::ptrdiff_t)ncell;
    base = scratch + c;
  } else {
    s = 1;
    base = scratch + c * per_cell;
  }
  T* var = base;
  T* fix = base + mech::NVAR * s;
  T* rconst = base + (mech::NVAR + mech::NFIX) * s;
  const kpp::RosWork<T> w =
      kpp::ros_work_at<Mech, T>(base + (mech::NVAR + mech::NFIX + mech::NREACT) * s, s);
  kpp::RosStats st;
  run_cell<T>(c, ncell, state, met, vdrog3, map, opt, var, fix, rconst, w, s, st);
  stats[0 * ncell + c] = st.nstp;
  stats[1 * ncell + c] = st.nacc;
  stats[2 * ncell + c] = st.nrej;
  stats[3 * ncell + c] = st.nsng;
  stats[4 * ncell + c] = st.status;
}

struct GpuBuffers {
  DeviceBuffer<float> state, met, vdrog3;
  DeviceBuffer<int> stats;
  DeviceBuffer<double> scratch;  // reinterpreted for float
};
GpuBuffers& buffers() {
  static GpuBuffers b;
  return b;
}

template <class T>
void run_gpu_t(const CellOptions& opt, bool inner, std::size_t ncell, float* state,
               const float* met, float* vdrog3, const StateMap& map, int* stats,
               std::size_t batch, GpuTimes* times) {
  GpuBuffers& B = buffers();
  const std::size_t per_cell =
      mech::NVAR + mech::NFIX + mech::NREACT + kpp::ros_work_size<Mech>();
  // WRFGPU_RADM2SORG_BATCH (tuning): cells per launch instead of Options::gpu_batch.
  if (const char* e = std::getenv("WRFGPU_RADM2SORG_BATCH"))
    if (std::atol(e) > 0) batch = (std::size_t)std::atol(e);
  if (batch == 0 || batch > ncell) batch = ncell;
  GpuTimes sum;
  EventTimer tm;
  // The caller's arrays are field-major with the cell innermost (field f of cell c at
  // f*ncell + c), so a batch of cells is a strided 2-D block: copied straight to and from
  // the device (pitch ncell) with no staging copy on the host.
  auto h2d = [&](float* dst, const float* src, std::size_t n, int nfield) {
    WRFGPU_CUDA_CHECK(cudaMemcpy2D(dst, n * sizeof(float), src, ncell * sizeof(float),
                                   n * sizeof(float), nfield, cudaMemcpyHostToDevice));
  };
  auto d2h = [&](void* dst, const void* src, std::size_t n, std::size_t elem, int nfield) {
    WRFGPU_CUDA_CHECK(cudaMemcpy2D(dst, ncell * elem, src, n * elem, n * elem, nfield,
                                   cudaMemcpyDeviceToHost));
  };
  for (std::size_t c0 = 0; c0 < ncell; c0 += batch) {
    const std::size_t n = (c0 + batch <= ncell) ? batch : ncell - c0;
    float* ds = B.state.reserve(kNState * n);
    float* dm = B.met.reserve(kNMet * n);
    float* dv = B.vdrog3.reserve(kLdrog * n);
    int* dst = B.stats.reserve(5 * n);
    const std::size_t nscr = (per_cell * n * sizeof(T) + sizeof(double) - 1) / sizeof(double);
    T* scr = reinterpret_cast<T*>(B.scratch.reserve(nscr));
    {
      NvtxRange r("radm2sorg H2D");
      tm.start();
      h2d(ds, state + c0, n, kNState);
      h2d(dm, met + c0, n, kNMet);
      h2d(dv, vdrog3 + c0, n, kLdrog);
      tm.stop();
      sum.h2d_ms += tm.ms();
    }
    {
      NvtxRange r("radm2sorg kernel");
      // threads per block: WRFGPU_RADM2SORG_BLOCK (tuning), default 64
      static const int threads = [] {
        const char* e = std::getenv("WRFGPU_RADM2SORG_BLOCK");
        const int t = e ? std::atoi(e) : 0;
        return (t >= 32 && t <= 1024) ? t : 64;
      }();
      const unsigned blocks = (unsigned)((n + threads - 1) / threads);
      tm.start();
      radm2sorg_kernel<T><<<blocks, threads>>>(opt, map, n, ds, dm, dv, dst, scr, inner);
      WRFGPU_CUDA_CHECK_LAUNCH("radm2sorg_kernel");
      tm.stop();
      sum.kernel_ms += tm.ms();
      WRFGPU_CUDA_CHECK(cudaDeviceSynchronize());
    }
    {
      NvtxRange r("radm2sorg D2H");
      tm.start();
      d2h(state + c0, ds, n, sizeof(float), kNState);
      d2h(vdrog3 + c0, dv, n, sizeof(float), kLdrog);
      d2h(stats + c0, dst, n, sizeof(int), 5);
      tm.stop();
      sum.d2h_ms += tm.ms();
    }
  }
  if (times) *times = sum;
}

}  // namespace

void run_gpu(const CellOptions& opt, bool use_float, bool cell_innermost, std::size_t ncell,
             float* state, const float* met, float* vdrog3, const StateMap& map, int* stats,
             std::size_t batch, GpuTimes* times) {
  if (use_float)
    run_gpu_t<float>(opt, cell_innermost, ncell, state, met, vdrog3, map, stats, batch, times);
  else
    run_gpu_t<double>(opt, cell_innermost, ncell, state, met, vdrog3, map, stats, batch, times);
}

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
