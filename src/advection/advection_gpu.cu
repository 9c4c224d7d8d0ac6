// advection_gpu.cu - CUDA backend of the scalar advection kernel. Compiled twice
// (-DWRFGPU_MODE_NS=strict|fast); strict uses --fmad=false and IEEE division, so every face,
// scale and tendency is computed by the same advection_physics.h functions in the same order
// as the CPU backend: bitwise identical results.
//
// Data flow of one call (all tracers of one WRF 4-D array):
//   met fields (ru, rv, rom, 2-D, 1-D): packed once into pinned memory, one H2D on stream 0;
//   tracers in groups of G species, double buffered over two streams: while the GPU works on
//   group g, the host packs group g+1 (field, and field_old unless it is the same array) into
//   the other pinned slot, checking for NaN/Inf the values the scheme reads as it copies them
//   (the tracers are read from the caller's memory once); per group: H2D -> the tendencies of
//   the tile -> D2H of the tile only, into one pinned output buffer for the call. The PD
//   scheme's tendencies come from one level-march kernel (k_pd_fused, with the call's face
//   coefficients from k_pd_geom) where a group's launch has enough blocks per SM (from 0.6,
//   not just past one wave), else from three kernels (each face flux once,
//   the limiter scales of the ring cells, the tendencies); the unlimited scheme's likewise
//   from one level-march kernel (k_un_march) or two (each face flux once, the tendencies), by
//   a cost model of both; the tile's open-boundary cells, if any, by threads of their own
//   (k_pd_open before the PD kernels; for the unlimited scheme k_un_open beside the march,
//   blocks of k_un_tend_q's launch beside the two kernels');
//   once every group is packed and checked (bad input: InputError, nothing written), the host
//   unpacks each group's tendencies into the WRF array as its D2H completes.
// Only the region the scheme reads is copied (tile + halo 4, k = kts..ktf); nothing twice.
// Page-locked caller arrays (GpuOptions::direct_locked; a model that allocates its arrays with
// cudaHostAlloc or registers them with cudaHostRegister): no host packing at all. Each
// group's tracers are copied straight from the caller's arrays, whole memory rows ims..ime of
// levels kts..ktf (contiguous for each j: one 2-D copy per species and array, so that the DMA
// engine moves rows of a few KB, not the region's 0.5 KB rows), and ru, rv, rom where they are
// page-locked too (the region's rows, one 3-D copy each), the tracers' NaN/Inf check
// runs on the device (k_check_rows, over exactly the values the scheme reads), and once every
// group has passed it the tendencies go straight back into their tiles (3-D copies). A
// pageable field_old with everything else page-locked (WRF's moist_old) is packed into staging
// in the same whole-row layout and checked on the host as it is packed.
#include <type_traits>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "config.h"
#include "advection_impl.h"
#include "cuda_util.h"
#include "device.h"
#include "errors.h"
#include "staged_call.h"
#include "stream_copy.h"

namespace wrfgpu {
namespace advection {
namespace WRFGPU_MODE_NS {

namespace {

struct KBox {  // box passed to kernels
  int i0, ni, k0, nk, j0, nj;
};
KBox kbox(const Box& b) { return KBox{b.i0, b.ni(), b.k0, b.nk(), b.j0, b.nj()}; }

// The order of a kernel's blocks. A kernel that reads what the step before it wrote (the
// group's inputs just copied in, the face fluxes, the limiter scales) takes its blocks in the
// opposite order of that step, so that it starts on what was written last, which is still in
// L2 (a group of 14 tracers' face fluxes is about 90 MB at 134 x 110 x 35; the H100's L2 is
// 50 MB). The copy in and the march run forward; so the face kernels run in reverse, the
// kernels after them alternate. Measured: docs/performance.md, "Blocks in reverse order".
enum class Order { Forward, Reverse };
template <Order O>
__device__ __forceinline__ int block_y() {
  return O == Order::Reverse ? (int)(gridDim.y - 1 - blockIdx.y) : (int)blockIdx.y;
}
template <Order O>
__device__ __forceinline__ int block_z() {
  return O == Order::Reverse ? (int)(gridDim.z - 1 - blockIdx.z) : (int)blockIdx.z;
}
// The cell of this thread in box b, as grid_for lays the grid out (x: runs of consecutive
// cells of one j row's (i, k) plane, i fastest; y: j; z: species chunks); false past the plane.
// c: the cell's dense index in b. Its blocks in the order O. A flat plane keeps every warp
// full whatever ni is (32 x 4 blocks over the 134-point rows of issue 34's case left 16% of
// the lanes idle), and makes c contiguous along a block.
struct ThreadCell {
  int i, k, j;
  std::size_t c;
};
template <Order O = Order::Forward>
__device__ bool thread_cell(const KBox& b, ThreadCell& t) {
  const int bx = O == Order::Reverse ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
  const int l = bx * blockDim.x + threadIdx.x;
  const int lj = block_y<O>();
  const int plane = b.ni * b.nk;
  if (l >= plane || lj >= b.nj) return false;
  const int lk = l / b.ni, li = l - lk * b.ni;
  t.i = b.i0 + li; t.k = b.k0 + lk; t.j = b.j0 + lj;
  t.c = (std::size_t)l + (std::size_t)plane * lj;
  return true;
}

// Minimum resident blocks of 128 threads per SM for the advection kernels (caps registers per
// thread; 0 = let the compiler choose). Measured on an H100: docs/performance.md (4 was best
// until the kernels took their per-cell factors once; since then 6, 80 registers).
#ifndef WRFGPU_ADV_MINB
#define WRFGPU_ADV_MINB 6
#endif
#if WRFGPU_ADV_MINB > 0
#define WRFGPU_ADV_BOUNDS __launch_bounds__(128, WRFGPU_ADV_MINB)
#else
#define WRFGPU_ADV_BOUNDS __launch_bounds__(128)
#endif
// The same for the PD face kernel (k_pd_faces): 10 (48 registers, no spills) measured best
// since the stencils are addressed from the cell's centre (8, 64 registers, before).
#ifndef WRFGPU_ADV_FACES_MINB
#define WRFGPU_ADV_FACES_MINB 10
#endif
#if WRFGPU_ADV_FACES_MINB > 0
#define WRFGPU_ADV_FACES_BOUNDS __launch_bounds__(128, WRFGPU_ADV_FACES_MINB)
#else
#define WRFGPU_ADV_FACES_BOUNDS __launch_bounds__(128)
#endif
// The unlimited scheme's face kernel (k_un_faces): 16 (32 registers, no spills: every warp slot
// of an SM), since its quotients are one double product 1.00-1.03x faster than 12 (40
// registers) and 1.01-1.07x faster than 10 on an H200 (docs/performance.md, "The quotients as
// one double product"); before, 12 was 1.04x faster than 10 on an H100 ("Advection: the
// unlimited scheme's two kernels").
#ifndef WRFGPU_UN_FACES_MINB
#define WRFGPU_UN_FACES_MINB 16
#endif

// ---- which faces the scheme reads ------------------------------------------------------------
// A face is computed only where a cell that computes it in WRF reads it: a limiter cell (PD,
// all six faces), or a tile cell (x faces where xdiv_cell, y faces where ydiv_cell), so nothing
// outside WRF's reads is read.
struct FaceUse {
  KBox r;                  // ring
  int ti0, ti1, tj0, tj1;  // tile
  __device__ bool tile(int i, int j) const { return i >= ti0 && i <= ti1 && j >= tj0 && j <= tj1; }
  __device__ bool lim(const View& v, int i, int j) const {
    if (i < r.i0 || i >= r.i0 + r.ni || j < r.j0 || j >= r.j0 + r.nj) return false;
    const bool corner = (i < ti0 || i > ti1) && (j < tj0 || j > tj1);
    return !corner && pd_in_limiter(v, i, j);
  }
  __device__ bool x(const View& v, int i, int j) const { return lim(v, i, j) || (tile(i, j) && xdiv_cell(v, i)); }
  __device__ bool y(const View& v, int i, int j) const { return lim(v, i, j) || (tile(i, j) && ydiv_cell(v, j)); }
  __device__ bool z(const View& v, int i, int j) const { return lim(v, i, j) || tile(i, j); }
  // The faces at (i, k, j) a face kernel computes: those read by this cell or by its lower
  // neighbour (the face at i is cell i-1's upper x face, the face at j cell j-1's upper y face).
  // The face box's top level (ktf+1) holds only the z faces at ktf+1: x and y faces there are
  // read by no cell, and their stencils would read past the region's levels (past the end of
  // the group's buffer for its last species).
  __device__ void faces_at(const View& v, int i, int k, int j, bool& dx, bool& dy, bool& dz) const {
    const bool below_top = k <= v.ktf;
    dx = below_top && (x(v, i, j) || x(v, i - 1, j));
    dy = below_top && (y(v, i, j) || y(v, i, j - 1));
    dz = z(v, i, j);
  }
};
// The stencils of a face-box cell (i,k,j) in a group's input arrays (layout v.mt, species
// stride v.sst): species s of array a centred at element c0 + s * sst. 32-bit element indices
// (run_gpu keeps a group's arrays below 2^32 elements).
struct FaceStencils {
  unsigned c0, sst;
  int sk, sj;
  __device__ FaceStencils(const View& v, int i, int k, int j)
      : c0((unsigned)v.mt.idx3(i, k, j)), sst((unsigned)v.sst), sk(v.mt.nx()), sj(v.mt.nx() * v.mt.nz()) {}
  // (k_un_faces takes one pointer to the centre instead, a Pts; k_pd_faces, with its
  // field_old stencils too, was 0.5% slower that way: docs/performance.md, "Advection: the
  // unlimited scheme's two kernels".)
  __device__ Pts32 at(const float* a, int s) const { return Pts32{a, (unsigned)s * sst + c0, sk, sj}; }
};
struct FluxBox {  // [species][ncomp][box] addressing of the face fluxes (PD three kernels: 6; unlimited: 3)
  const float* p;
  KBox b;
  std::size_t n;   // cells of the box
  __device__ std::size_t at(int i, int k, int j) const {
    return (std::size_t)(i - b.i0) + (std::size_t)b.ni * ((std::size_t)(k - b.k0) + (std::size_t)b.nk * (j - b.j0));
  }
};

// The tendency of tile cell (i,k,j) of species s from its face fluxes q and the scales
// around it (sc), into the group's outputs at element o; where WRF's tendency is INTENT(INOUT)
// (accumulate) it is added to what is there. Both PD forms end with it. A cell with open-boundary
// terms (g.open) has them in the output already (k_pd_open, launched before: WRF adds them
// first, to the tendency as it comes in), so it starts from there.
template <class ScaleFn>
__device__ void write_pd_tendency(const View& v, PdTendGeom g, const CellFlux& q, int s, unsigned o,
                                  int i, int k, int j, const ScaleFn& sc) {
  const float t0 = (v.accumulate || g.open) ? v.tend[o] : 0.0f;
  g.open = false;
  const float h0 = (v.accumulate && v.htend) ? v.htend[o] : 0.0f;
  const PdOut res = pd_cell_tendency_q(v, g, q, (std::size_t)s * v.sst, i, k, j, t0, h0, sc);
  v.tend[o] = res.t;
  if (v.htend) v.htend[o] = res.h;
  if (v.ztend) v.ztend[o] = res.z;
}

// The open-boundary cells of a tile (the cells of its edge columns where open_cell holds) are
// done by threads of their own, one per cell and species: a warp of the other kernels that
// held one would run its open terms for every species (or level) with one or two lanes (41%
// of the tendency warps at 134 x 110; docs/performance.md, "Advection: flat blocks and
// open-boundary cells apart"), and a thread looping over species would leave these few
// thousand cells latency-bound. The cell of edge thread l, or false.
__device__ bool open_edge_cell(const TileEdge& te, int k0, int nk, int l, int& i, int& k, int& j) {
  const int ne = te.ne();  // columns fastest: rows coalesce
  if (l >= ne * nk) return false;
  te.column(l % ne, i, j);
  k = k0 + l / ne;
  return true;
}
// PD: WRF adds the open terms first, to the tendency as it comes in; the march and
// k_pd_tend_q then start those cells from here (write_pd_tendency).
__global__ void WRFGPU_ADV_BOUNDS k_pd_open(View v, TileEdge te, int k0, int nk) {
  int i, k, j;
  if (!open_edge_cell(te, k0, nk, blockIdx.x * blockDim.x + threadIdx.x, i, k, j) || !open_cell(v, i, j)) return;
  const int s = blockIdx.z;  // a species per thread
  const unsigned o = (unsigned)s * (unsigned)v.ost + (unsigned)v.mo.idx3(i, k, j);
  const float t0 = v.accumulate ? v.tend[o] : 0.0f;
  v.tend[o] = open_terms(v, (std::size_t)s * v.sst, i, k, j, t0);
}

// ---- the PD scheme in three kernels, for calls too small to fill the GPU with level marches --
// k_pd_faces computes the antidiffusive and low-order flux of every face the stages read,
// once per face, into flux [species][6][face box] (x hi, x lo, y hi, y lo, z hi, z lo of the
// faces at i, j, k; the face box is the ring plus one face in i, j and k); k_pd_scale_q the
// limiter scale of each ring cell from them; k_pd_tend_q the tendency of each tile cell. One
// thread per cell, each looping over spt species. (A variant without flux buffers, which
// recomputed every face in each cell, lost the measurement in docs/performance.md, "Advection:
// each face flux once", and was deleted.)
__global__ void WRFGPU_ADV_FACES_BOUNDS k_pd_faces(View v, float* __restrict__ flux, KBox fb, FaceUse u,
                                             int ns, int spt) {
  ThreadCell tc;
  if (!thread_cell<Order::Reverse>(fb, tc)) return;
  const int i = tc.i, k = tc.k, j = tc.j;
  const std::size_t n = (std::size_t)fb.ni * fb.nk * fb.nj;
  const std::size_t c = tc.c;
  bool dx, dy, dz;
  u.faces_at(v, i, k, j, dx, dy, dz);
  if (!(dx || dy || dz)) return;
  Face fx{}, fy{}, fz{};
  if (dx) fx = pd_xface(v, i, k, j);
  if (dy) fy = pd_yface(v, i, k, j);
  if (dz) fz = pd_zface(v, i, k, j);
  // The flux outputs of species s at c + (6 s + component) n.
  const FaceStencils st(v, i, k, j);
  const unsigned un = (unsigned)n;
  const int s0 = block_z<Order::Reverse>() * spt, s1 = min(ns, s0 + spt);
  for (int s = s0; s < s1; ++s) {
    const Pts32 F = st.at(v.f, s), FO = st.at(v.fo, s);
    const unsigned o = (unsigned)s * 6u * un + (unsigned)c;
    if (dx) { const Flux q = pd_xflux(fx, F, FO, v.ts); flux[o] = q.hi; flux[o + un] = q.lo; }
    if (dy) { const Flux q = pd_yflux(fy, F, FO, v.ts); flux[o + 2 * un] = q.hi; flux[o + 3 * un] = q.lo; }
    if (dz) { const Flux q = pd_zflux(v, fz, F, FO, k); flux[o + 4 * un] = q.hi; flux[o + 5 * un] = q.lo; }
  }
}

// The six face fluxes of a cell from the stage-0 array of one species (FluxBox layout): the
// offsets of the faces at i, i+1, j, j+1, k, k+1 in that array, once per cell.
struct CellFluxAt {
  const float* p;
  unsigned n, x0, x1, y0, y1, z0, z1;
  __device__ CellFluxAt(const FluxBox& fl, int i, int k, int j) {
    p = fl.p;
    n = (unsigned)fl.n;
    const unsigned f0 = (unsigned)fl.at(i, k, j);
    x0 = f0; x1 = (unsigned)fl.at(i + 1, k, j);
    y0 = 2 * n + f0; y1 = 2 * n + (unsigned)fl.at(i, k, j + 1);
    z0 = 4 * n + f0; z1 = 4 * n + (unsigned)fl.at(i, k + 1, j);
  }
  // species base sb = 6 s n; o one of the offsets above
  __device__ Flux get(unsigned sb, unsigned o) const { return Flux{p[sb + o], p[sb + o + n]}; }
};
// The limiter scales around a cell in the stage-1 array of one species (ScaleLookup with the
// offsets and the level test once per cell): levels outside kts..ktf border a zero face (1).
struct ScaleAt {
  const float* p;  // the stage-1 array
  unsigned c;      // the cell's element in this species
  int sk, sj;
  bool lo, hi;     // levels k-1 and k+1 are inside the ring box
  __device__ float operator()(int di, int dk, int dj) const {
    const bool in = !((dk < 0 && !lo) || (dk > 0 && !hi));
    return in ? p[c + (unsigned)(di + dk * sk + dj * sj)] : 1.0f;
  }
};

// Stage 1 from the stage-0 fluxes (pd_cell_scale's arithmetic).
__global__ void WRFGPU_ADV_BOUNDS k_pd_scale_q(View v, FluxBox fl, float* __restrict__ scale, KBox r,
                                               int i_t0, int i_t1, int j_t0, int j_t1, int ns, int spt) {
  ThreadCell tc;
  if (!thread_cell(r, tc)) return;
  const int i = tc.i, k = tc.k, j = tc.j;
  const std::size_t rsz = (std::size_t)r.ni * r.nk * r.nj;
  const std::size_t c = tc.c;
  const int s0 = blockIdx.z * spt, s1 = min(ns, s0 + spt);
  const bool corner = (i < i_t0 || i > i_t1) && (j < j_t0 || j > j_t1);
  if (corner || !pd_in_limiter(v, i, j)) {
    for (int s = s0; s < s1; ++s) scale[(std::size_t)s * rsz + c] = 1.0f;
    return;
  }
  const CellFluxAt at(fl, i, k, j);
  const PdCellGeom g = pd_cell_geom(v, i, k, j);
  const unsigned fo0 = (unsigned)v.mt.idx3(i, k, j);
  for (int s = s0; s < s1; ++s) {
    const unsigned b = (unsigned)s * 6u * at.n;
    CellFlux q;
    q.x0 = at.get(b, at.x0); q.x1 = at.get(b, at.x1);
    q.y0 = at.get(b, at.y0); q.y1 = at.get(b, at.y1);
    q.z0 = at.get(b, at.z0); q.z1 = at.get(b, at.z1);
    const float fo = v.fo[(unsigned)s * (unsigned)v.sst + fo0];
    scale[(unsigned)s * (unsigned)rsz + (unsigned)c] = pd_scale(pd_ph_low(v, g, q, fo), pd_flux_out(v, g, q));
  }
}

// Stage 2 from the stage-0 fluxes (pd_cell_tendency_q).
__global__ void WRFGPU_ADV_BOUNDS k_pd_tend_q(View v, FluxBox fl, const float* __restrict__ scale,
                                              KBox r, KBox t, int ns, int spt) {
  ThreadCell tc;
  if (!thread_cell<Order::Reverse>(t, tc)) return;
  const int i = tc.i, k = tc.k, j = tc.j;
  const std::size_t rsz = (std::size_t)r.ni * r.nk * r.nj;
  const PdTendGeom g = pd_tend_geom(v, i, k, j);
  const CellFluxAt at(fl, i, k, j);
  ScaleAt sc;
  sc.p = scale;
  sc.sk = r.ni;
  sc.sj = r.ni * r.nk;
  sc.lo = k - 1 >= r.k0;
  sc.hi = k + 1 < r.k0 + r.nk;
  const unsigned sc0 = (unsigned)(i - r.i0) + (unsigned)r.ni * ((unsigned)(k - r.k0) + (unsigned)r.nk * (unsigned)(j - r.j0));
  const unsigned o0 = (unsigned)v.mo.idx3(i, k, j);
  const int s0 = block_z<Order::Reverse>() * spt, s1 = min(ns, s0 + spt);
  for (int s = s0; s < s1; ++s) {
    sc.c = (unsigned)s * (unsigned)rsz + sc0;
    const unsigned b = (unsigned)s * 6u * at.n;
    CellFlux q{};
    q.z0 = at.get(b, at.z0); q.z1 = at.get(b, at.z1);
    if (g.xd) { q.x0 = at.get(b, at.x0); q.x1 = at.get(b, at.x1); }
    if (g.yd) { q.y0 = at.get(b, at.y0); q.y1 = at.get(b, at.y1); }
    write_pd_tendency(v, g, q, s, (unsigned)s * (unsigned)v.ost + o0, i, k, j, sc);
  }
}

// ---- the PD scheme in one kernel: a level march per block (issue 34) -------------------------
// k_pd_geom, once per call: the upwind coefficients of every face the scheme reads (the
// divisions of pd_xface, pd_yface and pd_zface, which do not depend on the species) into
// geom[face box][3], one float4 per face: x, y, z = the upwind a, b, coef, and w = the face's
// wind (ru, rv, rom), so that the march loads a face with one 16-byte load (1.03-1.07x faster
// than nine coefficient and three wind loads: docs/performance.md, "One load per face").
// k_pd_fused, one block per block of columns and species: 32 x 22 threads; thread (tx, ty)
// owns column (oi - 1 + tx, oj - 1 + ty), where (oi, oj) is the block's first tile cell: tile
// cells tx 1..29, ty 1..19, ring cells (limiter) tx 0..30, ty 0..20, faces tx 0..31, ty 0..21.
// The tracer's level slabs (i oi-4..oi+32, j oj-4..oj+22, the x and y stencils of those faces)
// come into shared memory by cp.async six levels ahead; the column's vertical stencil is a
// window of registers. At level L a thread computes the faces of L+1 (x, y, into shared
// memory; z of L+2, in registers), then waits for every thread's faces of L and scales of L-1,
// then computes the limiter scales of level L (advect_scalar_pd's "positive definite filter")
// and the tendencies of level L-1, and arrives for the next level. The barrier is an mbarrier
// split in its arrival and its wait, so that a level's face work covers the wait for the
// slowest warp (1.03-1.05x faster than one __syncthreads per level: docs/performance.md, "The
// level's barrier as arrival and wait"). Every value comes from the advection_physics.h
// functions on the same operands as the CPU backend: the same bits.
// An inner block (no column of it next to a degradable or open boundary, none outside the
// patch's faces and ring) runs the same march with its flags as constants: 5th-order x and y
// faces everywhere, every face computed, its ring and tile cells by position alone. That drops
// the order branches and per-column predicates from the level loop (388 instructions in it
// against 535, by nvdisasm), 1.09x faster at CONUS (docs/performance.md, "The march's inner
// blocks"). In blocks of 22 rows the others take one code path too (ONE, below). The call's
// 1-D columns c1, c2 and rdzw come from shared memory, once per block.
// Variants measured and dropped (several species per block, two blocks per SM), and where
// the three kernels above stay faster: docs/performance.md, "Advection: one kernel for the PD
// scheme".
namespace fused {
// Blocks of 32 x BY threads, one column each, one block per SM; BY (the rows) is one of
// kPdMarchRows (advection_impl.h), chosen per call by pd_march_plan. 32 x 22: 704 threads, 22
// warps, up to 88 registers (ptxas takes 78-80, no spills), 29 x 19 tile cells per block (78%
// of the columns); the march waits on its own dependent instructions, so more warps per SM
// help: 1.16x faster than 32 x 18 at 81 tracers, ahead of 20, 24, 28 and 32 rows there. 32 x 28:
// 896 threads, 72 registers, 29 x 25 cells (81%): fewer blocks, and so fewer waves, where a
// patch's rows fill them better (81 tracers on 80 x 60 1.3x faster, 5 on 180 x 130 1.1x)
// (docs/performance.md, "The march's blocks of 32 x 22", "The size rule and the march's rows
// by its waves").
constexpr int kBX = 32, kTX = kBX - 3;  // threads in x; tile cells per block in x
constexpr int kSW = kBX + 5;            // a slab's row
template <int BY>
struct Rows {
  static constexpr int kCol = kBX * BY;  // threads = columns
  static constexpr int kTY = BY - 3;     // tile cells per block in y
  static constexpr int kSH = BY + 5, kSlab = kSW * kSH;
  static constexpr int kSlabPer = (kSlab + kCol - 1) / kCol;  // slab elements per thread
};
constexpr int kNB = 8;  // slab levels held: L+1..L+5, L+6 in flight (a power of two: the ring index)
constexpr int kNF = 4;  // face and scale levels held: L-1..L+1 (and a power of two)
// Shared memory of a block of BY rows: the mbarrier, the slabs, the faces and scales, then the
// call's 1-D columns c1, c2 and rdzw at its nlev levels kts..ktf (one float4 per level).
inline std::size_t smem_bytes(int by, bool sep_fo, int nlev) {
  return 16 + sizeof(float) * ((sep_fo ? 2 : 1) * kNB * kSW * (by + 5) + 5 * kNF * kBX * by) + sizeof(float4) * nlev;
}
// The level's barrier split in an arrival and a wait (an 8-byte mbarrier in the first 16 bytes
// of shared memory, so that the slabs after it stay 16-byte aligned): a thread arrives once its scales and tendencies of a level are written and
// its slab copies have landed, computes the next level's faces, which read nothing written in
// that level, and only then waits for the other threads' arrivals. The arrival releases and the
// wait acquires the threads' shared-memory writes (PTX mbarrier semantics, CTA scope).
__device__ __forceinline__ void mbar_init(unsigned a, unsigned n) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(a), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned a) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(a) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity) {
  unsigned ok;
  do {
#if __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok) : "r"(a), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok) : "r"(a), "r"(parity) : "memory");
#endif
  } while (!ok);
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
// Thread tid's elements of a block's slab of w x h values from column (i0, j0), every step-th:
// their offsets at level kms in the group's tracer box (layout v.mt), -1 outside it, and their
// places in the slab, whose rows have the pitch P (k_pd_fused's slabs: P = w, and it uses tid
// + q step; k_un_march's: the widest block's, whatever its block's width).
template <int N>
__device__ void slab_offsets(const View& v, int tid, int step, int w, int h, int P, int i0, int j0, int (&soff)[N],
                             int (&sdst)[N]) {
  const unsigned sj = (unsigned)v.mt.nx() * (unsigned)v.mt.nz();
#pragma unroll
  for (int q = 0; q < N; ++q) {
    const int e = tid + q * step;
    const int ii = i0 + e % w, jj = j0 + e / w;
    soff[q] = (e >= w * h || ii < v.mt.ims || ii > v.mt.ime || jj < v.mt.jms || jj > v.mt.jme)
                  ? -1 : (int)((unsigned)(ii - v.mt.ims) + (unsigned)(jj - v.mt.jms) * sj);
    sdst[q] = e % w + e / w * P;
  }
}
// A stencil in a slab (x and y faces: dk is always 0).
struct SlabPts {
  const float* p;
  __device__ float operator()(int di, int, int dj) const { return p[di + dj * kSW]; }
};
// A column's values at levels k-2..k+1 of z face k (dk = -2..1).
struct ZWin {
  float m2, m1, c0, p1;
  __device__ float operator()(int, int dk, int) const { return dk == -2 ? m2 : dk == -1 ? m1 : dk == 0 ? c0 : p1; }
};
// The faces of a column at level L (x, y) and L+1 (z).
struct Faces {
  Face x, y, z;
};
}  // namespace fused

__global__ void __launch_bounds__(128) k_pd_geom(View v, float4* __restrict__ geom, KBox fb, FaceUse u) {
  ThreadCell tc;
  if (!thread_cell(fb, tc)) return;
  bool dx, dy, dz;
  u.faces_at(v, tc.i, tc.k, tc.j, dx, dy, dz);
  float4* g = geom + 3 * (std::size_t)tc.c;
  const unsigned m = (unsigned)v.mm.idx3(tc.i, tc.k, tc.j);
  if (dx) { const Face f = pd_xface(v, tc.i, tc.k, tc.j); g[0] = make_float4(f.up.a, f.up.b, f.up.coef, v.ru[m]); }
  if (dy) { const Face f = pd_yface(v, tc.i, tc.k, tc.j); g[1] = make_float4(f.up.a, f.up.b, f.up.coef, v.rv[m]); }
  if (dz && zface_order(v, tc.k) != 0) {  // the march reads z faces only where there is a flux
    const Face f = pd_zface(v, tc.i, tc.k, tc.j);
    g[2] = make_float4(f.up.a, f.up.b, f.up.coef, v.rom[m]);
  }
}

// SEP: field_old is another array than field (its slabs are loaded too). BY: the block's rows.
template <bool SEP, int BY>
__global__ void __launch_bounds__(fused::kBX * BY, 1) k_pd_fused(View v, const float4* __restrict__ geom, KBox fb,
                                                                 KBox t, FaceUse u) {
  using namespace fused;
  constexpr int kBY = BY, kCol = Rows<BY>::kCol, kTY = Rows<BY>::kTY;
  constexpr int kSlab = Rows<BY>::kSlab, kSlabPer = Rows<BY>::kSlabPer;
  extern __shared__ float4 sm4[];
  float* const sm = reinterpret_cast<float*>(sm4) + 4;  // after the mbarrier
  const unsigned bar = (unsigned)__cvta_generic_to_shared(sm4);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + kBX * ty;
  const int oi = t.i0 + blockIdx.x * kTX, oj = t.j0 + blockIdx.y * kTY;
  const int i = oi - 1 + tx, j = oj - 1 + ty;
  const int s = blockIdx.z;  // the species in the group
  const int kts = v.g.kts, ktf = v.ktf;
  // shared memory: F slabs [kNB], FO slabs [kNB] (SEP), then x hi, x lo, y hi, y lo, scale,
  // each [kNF][kCol]
  float* const flev = sm + (SEP ? 2 : 1) * kNB * kSlab;
  // (the rings counted from kts, so that in the level loop unrolled by 4 the level ring's slots
  // are constants and the slab ring's a base of 0 or 4 plus a constant)
  auto fslab = [&](int K) { return sm + ((K - kts) & (kNB - 1)) * kSlab; };
  auto foslab = [&](int K) { return SEP ? sm + (kNB + ((K - kts) & (kNB - 1))) * kSlab : fslab(K); };
  auto lev = [&](int comp, int K) { return flev + (comp * kNF + ((K - kts) & (kNF - 1))) * kCol; };
  // This thread's slab elements: their offset at level kms in the group's box (-1: outside it).
  const unsigned sk = (unsigned)v.mt.nx();
  int soff[kSlabPer], sdst_unused[kSlabPer];
  slab_offsets(v, tid, kCol, kSW, kSlab / kSW, kSW, oi - 4, oj - 4, soff, sdst_unused);
  // The next slab's origin in field and field_old (level kts first), one level up per call:
  // each element's address is then one multiply-add from its offset, not a 32-bit sum widened.
  const unsigned k0 = (unsigned)s * (unsigned)v.sst + (unsigned)(kts - v.mt.kms) * sk;
  const float* fk = v.f + k0;
  const float* fok = v.fo + k0;
  auto load_slab = [&](int K) {  // K: kts, kts+1, ... in order
    if (K <= ktf) {
#pragma unroll
      for (int q = 0; q < kSlabPer; ++q) {
        if (soff[q] < 0) continue;
        const int e = tid + q * kCol;
        cp_async4(fslab(K) + e, fk + soff[q]);
        if (SEP) cp_async4(foslab(K) + e, fok + soff[q]);
      }
      fk += sk;
      if (SEP) fok += sk;
    }
    cp_async_commit();  // one group per level, empty or not: wait_group counts levels
  };
  // which of this column's faces, ring (limiter) and tile cells the block computes
  bool col_dx = false, col_dy = false, col_dz = false;
  u.faces_at(v, i, kts, j, col_dx, col_dy, col_dz);
  const bool ring_pos = tx < kBX - 1 && ty < kBY - 1, tile_pos = tx >= 1 && tx <= kTX && ty >= 1 && ty <= kTY;
  const bool col_ring = ring_pos && i >= u.r.i0 && i < u.r.i0 + u.r.ni && j >= u.r.j0 && j < u.r.j0 + u.r.nj;
  const bool col_lim = col_ring && u.lim(v, i, j);
  const bool col_tile = tile_pos && i < t.i0 + t.ni && j < t.j0 + t.nj;
  const int c = (tx + 3) + (ty + 3) * kSW;  // the column in a slab
  const int xo = col_dx ? xface_order(v, i) : 0, yo = col_dy ? yface_order(v, j) : 0;
  PdTendGeom tg0{};
  unsigned ob = 0;  // the column's output at level kts
  if (col_tile) { tg0 = pd_tend_geom(v, i, kts, j); ob = (unsigned)s * (unsigned)v.ost + (unsigned)v.mo.idx3(i, kts, j); }
  // the call's 1-D columns at kts..ktf (c1, c2, rdzw), read by every level of every column
  float4* const lvt = reinterpret_cast<float4*>(flev + 5 * kNF * kCol);
  // The march itself, for an inner block (constants) or any other (the column's flags).
  auto march_levels = [&](auto inner_c) {
    constexpr bool IN = decltype(inner_c)::value;
    // ONE: a block at a boundary on one code path where the registers allow it (blocks of 22
    // rows, up to 88): every column computes its faces at 5th order in x and y and again at its
    // own order only where that is not 5, every face and ring cell whatever its flags (the
    // coefficients loaded where k_pd_geom wrote them, the limiter replaced by 1 where WRF's does
    // not reach), instead of branching on every order and flag per column: 1.08x faster at 81
    // tracers on 134 x 110, whose blocks are 60% at a boundary (1.06x with specified
    // boundaries). At 28 rows (72 registers) it spills and was 1.03x slower at CONUS
    // (docs/performance.md, "The PD march on one code path").
    constexpr bool ONE = !IN && BY <= 22;
    const bool dx = IN || col_dx, dy = IN || col_dy, dz = IN || col_dz;
    const bool ring = IN ? ring_pos : col_ring, lim = IN ? ring_pos : col_lim, tile = IN ? tile_pos : col_tile;
    PdTendGeom tg = tg0;
    if (IN) { tg.xd = true; tg.yd = true; tg.open = false; }
    // the column's face coefficients and winds at level kts, one float4 per face (k_pd_geom)
    const unsigned gk3 = 3u * (unsigned)fb.ni;
    const float4* gq = geom;
    if (dx || dy || dz)
      gq += 3u * ((unsigned)(i - fb.i0) + (unsigned)fb.ni * ((unsigned)(kts - fb.k0) + (unsigned)fb.nk * (unsigned)(j - fb.j0)));
    auto load_faces = [&](int L) {  // pd_xface, pd_yface at L and pd_zface at L+1; L in order
      Faces f{};
      f.x.order = IN || ONE ? 5 : xo;
      f.y.order = IN || ONE ? 5 : yo;
      if (dx) { const float4 a = gq[0]; f.x.vel = a.w; f.x.up = Upwind{a.x, a.y, a.z}; }
      if (dy) { const float4 a = gq[1]; f.y.vel = a.w; f.y.up = Upwind{a.x, a.y, a.z}; }
      if (dz || ONE) f.z.order = zface_order(v, L + 1);
      if (dz && f.z.order != 0) { const float4 a = gq[gk3 + 2]; f.z.vel = a.w; f.z.up = Upwind{a.x, a.y, a.z}; }
      gq += gk3;
      return f;
    };
    // the column's 2-D operands of pd_cell_geom (limiter) and of pd_tend_geom (tendency)
    float mub = 0, muo = 0, mx = 0, my = 0;
    if (lim) { mub = v.A2(v.mub, i, j); muo = v.A2(v.mu_old, i, j); mx = v.A2(v.msftx, i, j); my = v.A2(v.msfty, i, j); }

    // The column's window before the faces of a level M: F at M-2..M+1, FO at M-1..M. At level
    // L: its z faces L-1, L, L+1 (zprev, zlo, zup; L+2 into zn) and its scales at L-2 and L-1
    // (and L once computed).
    float w0 = 0.0f, w1 = 0.0f, w2 = fslab(kts)[c], w3 = kts + 1 <= ktf ? fslab(kts + 1)[c] : 0.0f;
    float o0 = 0.0f, o1 = foslab(kts)[c];
    float scm = 1.0f, sc0 = 1.0f, scp = 1.0f;
    Flux zprev{0.0f, 0.0f}, zlo{0.0f, 0.0f}, zup{0.0f, 0.0f};
    Faces f = load_faces(kts);
    // The x and y faces of level M into shared memory, its z face M+1 into zn, and the next
    // level's coefficients into f, the registers the faces no longer need (loaded before the
    // faces, they needed a second set and about 25 moves per level: 1.07-1.15x slower). Needs
    // slabs M..M+2 of every thread's copies.
    auto faces_of = [&](int M, Flux& zn) {
      w0 = w1; w1 = w2; w2 = w3;
      w3 = M + 2 <= ktf ? fslab(M + 2)[c] : 0.0f;
      o0 = o1;
      o1 = M + 1 <= ktf ? foslab(M + 1)[c] : 0.0f;
      const SlabPts F{fslab(M) + c}, FO{foslab(M) + c};
      if (ONE) {
        Flux qx = pd_xflux(f.x, F, FO, v.ts), qy = pd_yflux(f.y, F, FO, v.ts);
        if (dx && xo != 5) { Face e = f.x; e.order = xo; qx = pd_xflux(e, F, FO, v.ts); }
        if (dy && yo != 5) { Face e = f.y; e.order = yo; qy = pd_yflux(e, F, FO, v.ts); }
        lev(0, M)[tid] = qx.hi; lev(1, M)[tid] = qx.lo;
        lev(2, M)[tid] = qy.hi; lev(3, M)[tid] = qy.lo;
        zn = pd_zflux(v, f.z, ZWin{w0, w1, w2, w3}, ZWin{0.0f, o0, o1, 0.0f}, M + 1);
      } else {
        if (dx) {
          const Flux q = pd_xflux(f.x, F, FO, v.ts);
          lev(0, M)[tid] = q.hi; lev(1, M)[tid] = q.lo;
        }
        if (dy) {
          const Flux q = pd_yflux(f.y, F, FO, v.ts);
          lev(2, M)[tid] = q.hi; lev(3, M)[tid] = q.lo;
        }
        zn = dz ? pd_zflux(v, f.z, ZWin{w0, w1, w2, w3}, ZWin{0.0f, o0, o1, 0.0f}, M + 1) : Flux{0.0f, 0.0f};
      }
      if (M + 1 <= ktf) f = load_faces(M + 1);
    };
    faces_of(kts, zup);
    mbar_arrive(bar);  // phase 0: the faces of kts
    // Unrolled by 4: the ring slots, the barrier's parity and the rotation of the window's
    // registers become constants and renamings (the inner blocks' loop: 352 instructions a
    // level against 388; 1.03-1.08x faster; by 8: 350, but slower at CONUS and 106 x 75 with 81
    // tracers; docs/performance.md, "The march's level loop unrolled by 4").
#pragma unroll 4
    for (int L = kts; L <= ktf + 1; ++L) {
      const float oL = o0;  // field_old at L, for the limiter
      Flux zn{0.0f, 0.0f};
      // Slab L+6 goes where slab L-2 was, last read by the faces of L-2 (at level L-3), which
      // every thread finished before the wait of level L-1 let this one on.
      load_slab(L + 6);
      // The faces of level L+1 (slabs L+1..L+3): every thread's copies through L+3 landed before
      // its arrival at the end of level L-2, which the wait of level L-1 covered. Their shared
      // memory was last read at level L-2 (the tendencies of L-3), before that arrival too.
      if (L + 1 <= ktf) faces_of(L + 1, zn);
      mbar_wait(bar, (unsigned)(L - kts) & 1u);  // the faces of L and the scales of L-1
      if (L <= ktf && ring) {  // the limiter scale of level L (1 where WRF's limiter does not reach)
        float scn = 1.0f;
        if (lim || ONE) {
          const float4 lv = lvt[L - kts];
          const PdCellGeom g = pd_cell_geom(lv.x, lv.y, mub, muo, mx, my, lv.z);
          CellFlux q;
          q.x0 = Flux{lev(0, L)[tid], lev(1, L)[tid]};
          q.x1 = Flux{lev(0, L)[tid + 1], lev(1, L)[tid + 1]};
          q.y0 = Flux{lev(2, L)[tid], lev(3, L)[tid]};
          q.y1 = Flux{lev(2, L)[tid + kBX], lev(3, L)[tid + kBX]};
          q.z0 = zlo;
          q.z1 = zup;
          scn = pd_scale(pd_ph_low(v, g, q, oL), pd_flux_out(v, g, q));
        }
        if (ONE && !lim) scn = 1.0f;
        lev(4, L)[tid] = scn;
        scp = scn;
      }
      if (L - 1 >= kts && tile) {  // the tendency of level L-1
        const int k = L - 1;
        tg.rdzw = lvt[k - kts].z;  // pd_tend_geom at level k
        CellFlux q{};
        q.z0 = zprev;
        q.z1 = zlo;
        if (tg.xd) {
          q.x0 = Flux{lev(0, k)[tid], lev(1, k)[tid]};
          q.x1 = Flux{lev(0, k)[tid + 1], lev(1, k)[tid + 1]};
        }
        if (tg.yd) {
          q.y0 = Flux{lev(2, k)[tid], lev(3, k)[tid]};
          q.y1 = Flux{lev(2, k)[tid + kBX], lev(3, k)[tid + kBX]};
        }
        // the scales around the cell: its own column's from registers (1 past kts..ktf, as
        // ScaleLookup gives), its neighbours' at level k from shared memory
        const float* scl = lev(4, k);
        const float own = sc0, below = k - 1 >= kts ? scm : 1.0f, above = k + 1 <= ktf ? scp : 1.0f;
        const auto sc = [&](int di, int dk, int dj) {
          return dk < 0 ? below : dk > 0 ? above : (di == 0 && dj == 0) ? own : scl[tid + di + dj * kBX];
        };
        write_pd_tendency(v, tg, q, s, ob + (unsigned)(k - kts) * (unsigned)v.mo.nx(), i, k, j, sc);
      }
      cp_async_wait<1>();  // slab L+5 is in (L+6 may still be on its way)
      mbar_arrive(bar);    // phase L-kts+1: the faces of L+1 and the scales of L
      zprev = zlo; zlo = zup; zup = zn;
      scm = sc0; sc0 = scp;
    }
  };
  // An inner block: every column computes its three faces, at 5th order in x and y, every ring
  // cell is limited, and every tile cell has both divergences and no open-boundary terms. Its
  // march takes those as constants (no order branches, fewer predicates and registers).
  const bool inner = __syncthreads_and(col_dx && col_dy && col_dz && xo == 5 && yo == 5 && col_lim == ring_pos &&
                                       col_tile == tile_pos && (!col_tile || (tg0.xd && tg0.yd && !tg0.open)));
  for (int K = kts + tid; K <= ktf; K += kCol)  // (lvt: above)
    lvt[K - kts] = make_float4(v.A1(v.c1, K), v.A1(v.c2, K), v.A1(v.rdzw, K), 0.0f);
  if (tid == 0) mbar_init(bar, kCol);
  for (int K = kts; K < kts + 6; ++K) load_slab(K);
  cp_async_wait<0>();
  __syncthreads();
  if (inner) march_levels(std::true_type{}); else march_levels(std::false_type{});
}

// The finite check of the tracers on the device (page-locked path): the rows of a RowCheck
// (advection_impl.h: per j of its box, the i-intervals the scheme reads, for every level and
// species of the group) in a group's dense input (layout mem), one block per row. The smallest
// RowCheck code of a NaN/Inf goes to *first (the same code as the host check, so the message
// names the same value).
struct RowTable {
  const int* off;  // [nj + 1]: the first interval of each row j (intervals in iv)
  const int* iv;   // pairs i0, i1
  int i0, ni, j0, nj, k0, nk;  // the RowCheck's box u and levels
};
__global__ void __launch_bounds__(128) k_check_rows(const float* __restrict__ a, KBox mem, RowTable t,
                                                    int s0, unsigned long long* first) {
  const long row = blockIdx.x;
  const int k = t.k0 + (int)(row % t.nk), jj = (int)(row / t.nk % t.nj), s = (int)(row / t.nk / t.nj);
  const int j = t.j0 + jj;
  const float* r = a + (std::size_t)s * mem.ni * mem.nk * mem.nj +
                   (std::size_t)mem.ni * ((std::size_t)(k - mem.k0) + (std::size_t)mem.nk * (j - mem.j0));
  for (int q = t.off[jj]; q < t.off[jj + 1]; ++q)
    for (int i = t.iv[2 * q] + threadIdx.x; i <= t.iv[2 * q + 1]; i += blockDim.x) {
      // non-finite: all exponent bits set (a test that fast math cannot fold away)
      if ((__float_as_uint(r[i - mem.i0]) & 0x7f800000u) == 0x7f800000u) {
        const unsigned long long code =
            ((((unsigned long long)(s0 + s) * t.nj + jj) * t.nk + (k - t.k0)) * t.ni + (i - t.i0));
        atomicMin(first, code);
      }
    }
}

// The fluxes of a face-box cell's faces (dx, dy, dz) for species s0..s1-1 (un_xflux, un_yflux,
// un_zflux). A tracer's stencil is one pointer to the cell (Pts): the x points are then
// immediate offsets of one address (2-3% faster than an index per point). kInner: every lane
// of the warp has 5th-order x and y faces and a 3rd-order z face (a warp away from degradable
// boundaries and the two lowest and highest levels), so that the orders are constants and each
// flux is one code path. Chosen per warp (__all_sync) this is 1.03-1.05x faster; chosen per
// thread it was 5% slower, the warps at a boundary running both loops (docs/performance.md,
// "Advection: flat blocks and open-boundary cells apart").
template <bool kInner>
__device__ __forceinline__ void un_faces_of(const View& v, float* __restrict__ flux, unsigned c0, int sk, int sj, int k,
                                            bool dx, bool dy, bool dz, UnFace fx, UnFace fy, UnFace fz, unsigned c,
                                            unsigned un, int s0, int s1) {
  if (kInner) { fx.order = 5; fy.order = 5; fz.order = 3; dx = dy = dz = true; }
  for (int s = s0; s < s1; ++s) {
    const Pts F{v.f + ((unsigned)s * (unsigned)v.sst + c0), sk, sj};
    float* const o = flux + ((unsigned)s * 3u * un + c);
    // WRF's divisions by 60. and 12. as one double product (DoubleDiv, advection_physics.h):
    // IEEE float division's bits with no branch and no slow path, 1.01-1.06x faster than a float
    // product with an FMA correction, a range test and IEEE division for the tracers outside
    // that range (docs/performance.md, "The quotients as one double product").
    const DoubleDiv d;
    float qx = 0.0f, qy = 0.0f, qz = 0.0f;
    if (dx) qx = un_xflux(fx, F, v.ts, d);
    if (dy) qy = un_yflux(fy, F, v.ts, d);
    if (dz) qz = un_zflux(v, fz, F, k, d);
    if (dx) o[0] = qx;
    if (dy) o[un] = qy;
    if (dz) o[2 * un] = qz;
  }
}

// advect_scalar (RK1/RK2) the same way: each face flux once ([species][3][face box]: x, y, z
// flux of the faces at i, j, k; box = tile plus one face in i, j and k), then the tendency.
// The stencil strides sk, sj come as kernel parameters, read from the constant bank where
// needed: computed from View's bounds they were computed again at every tracer under the
// 40-register cap (with the flux outputs as one pointer per tracer: 1.04x for this kernel, 3%
// fewer instructions; docs/performance.md, "Advection: flat blocks and open-boundary cells
// apart").
//
// A warp whose every cell is in the inner box ib (un_inner_box: every face read, at orders 5, 5
// and 3) takes its winds straight away; the others work out each cell's faces and orders
// (FaceUse::faces_at, un_xface, ...), which took about a fifth of the kernel's instructions
// (1.11x at CONUS with 5 tracers, 1.01x with 81, whose threads share it among 8 tracers;
// docs/performance.md, "Advection: the unlimited scheme's inner box and open cells in one
// launch").
__global__ void __launch_bounds__(128, WRFGPU_UN_FACES_MINB)
    k_un_faces(View v, float* __restrict__ flux, KBox fb, FaceUse u, UnInner ib, int ns, int spt, int sk, int sj) {
  ThreadCell tc;
  if (!thread_cell<Order::Reverse>(fb, tc)) return;
  const int i = tc.i, k = tc.k, j = tc.j;
  const std::size_t n = (std::size_t)fb.ni * fb.nk * fb.nj;
  const std::size_t c = tc.c;
  const int s0 = block_z<Order::Reverse>() * spt, s1 = min(ns, s0 + spt);
  if (__all_sync(__activemask(), ib.has(i, k, j))) {
    const unsigned m = (unsigned)v.mm.idx3(i, k, j);  // ru, rv and rom share a layout
    const UnFace fx{5, v.ru[m]}, fy{5, v.rv[m]}, fz{3, v.rom[m]};
    un_faces_of<true>(v, flux, (unsigned)v.mt.idx3(i, k, j), sk, sj, k, true, true, true, fx, fy, fz, (unsigned)c,
                      (unsigned)n, s0, s1);
    return;
  }
  bool dx, dy, dz;
  u.faces_at(v, i, k, j, dx, dy, dz);
  if (!(dx || dy || dz)) return;
  UnFace fx{}, fy{}, fz{};
  if (dx) fx = un_xface(v, i, k, j);
  if (dy) fy = un_yface(v, i, k, j);
  if (dz) fz = un_zface(v, i, k, j);
  const unsigned c0 = (unsigned)v.mt.idx3(i, k, j);
  const unsigned un = (unsigned)n;
  // the lanes still here (past the box and faceless cells returned above)
  const bool inner = dx && dy && dz && fx.order == 5 && fy.order == 5 && fz.order == 3;
  if (__all_sync(__activemask(), inner))
    un_faces_of<true>(v, flux, c0, sk, sj, k, dx, dy, dz, fx, fy, fz, (unsigned)c, un, s0, s1);
  else
    un_faces_of<false>(v, flux, c0, sk, sj, k, dx, dy, dz, fx, fy, fz, (unsigned)c, un, s0, s1);
}

// The tendencies of tile cell (i,k,j), species s0..s1-1, from its face fluxes.
__device__ void write_un_tendencies(const View& v, const FluxBox& fl, const UnTendGeom& g, int i, int k, int j,
                                    int s0, int s1) {
  const unsigned n = (unsigned)fl.n, f0 = (unsigned)fl.at(i, k, j);
  const unsigned x1 = (unsigned)fl.at(i + 1, k, j), y1 = n + (unsigned)fl.at(i, k, j + 1),
                 z1 = 2 * n + (unsigned)fl.at(i, k + 1, j);
  const unsigned o0 = (unsigned)v.mo.idx3(i, k, j);
  for (int s = s0; s < s1; ++s) {
    const float* p = fl.p;
    const unsigned b = (unsigned)s * 3u * n;
    UnFlux q{};
    if (g.xd) { q.x0 = p[b + f0]; q.x1 = p[b + x1]; }
    if (g.yd) { q.y0 = p[b + n + f0]; q.y1 = p[b + y1]; }
    q.z0 = p[b + 2 * n + f0]; q.z1 = p[b + z1];
    const unsigned o = (unsigned)s * (unsigned)v.ost + o0;
    const float t0 = v.accumulate ? v.tend[o] : 0.0f;
    v.tend[o] = un_cell_tendency_q(v, g, q, (std::size_t)s * v.sst, i, k, j, t0);
  }
}
// Every tile cell. The grid's rows y < t.nj: one thread per cell, looping over the chunk's
// species, but the cells with open-boundary terms. The rows after them (as many as the tile's
// edge columns need, where it holds an open edge): those cells, one thread per cell and
// species. WRF adds the unlimited scheme's open terms between the x and z divergences, so
// these cells are done whole. In one launch they run beside the other blocks, not after
// them in a launch of their own (1.05x at 81 tracers with open boundaries, 1.2x on a 27 x 20
// patch; docs/performance.md, "Advection: the unlimited scheme's inner box and open cells in
// one launch").
__global__ void WRFGPU_ADV_BOUNDS k_un_tend_q(View v, FluxBox fl, KBox t, TileEdge te, int ns, int spt) {
  const int s0 = blockIdx.z * spt, s1 = min(ns, s0 + spt);
  if ((int)blockIdx.y >= t.nj) {
    const int l = ((blockIdx.y - t.nj) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    const int ec = te.ne() * t.nk, s = s0 + l / ec;
    int i, k, j;
    if (s >= s1 || !open_edge_cell(te, t.k0, t.nk, l % ec, i, k, j)) return;
    const UnTendGeom g = un_tend_geom(v, i, k, j);
    if (!g.open) return;
    write_un_tendencies(v, fl, g, i, k, j, s, s + 1);
    return;
  }
  ThreadCell tc;
  if (!thread_cell(t, tc)) return;
  const UnTendGeom g = un_tend_geom(v, tc.i, tc.k, tc.j);
  if (g.open) return;
  write_un_tendencies(v, fl, g, tc.i, tc.k, tc.j, s0, s1);
}

// ---- the unlimited scheme in one kernel: a level march per block (issue 34, item 2) ----------
// k_un_march, one block per block of columns and species: bx x by threads (below); thread
// (tx, ty) owns column (oi + tx, oj + ty), where (oi, oj) is the block's first tile cell. Every
// column computes its lower x and y faces (un_xflux, un_yflux) into shared memory and its z
// faces in registers; tile cells are tx 0..bx-2, ty 0..by-2 (the last column's and the last
// row's faces are the upper faces of the cells before them), so the unlimited scheme, which
// has no limiter ring, recomputes 1.10x of its faces (at 32 x 16) against the PD march's
// 1.36x. The level machinery is k_pd_fused's: the tracer's slabs (i oi-3..oi+bx+1, j
// oj-3..oj+by+1) by cp.async
// six levels ahead, the column's vertical window in registers, the level's barrier as an
// mbarrier split in arrival and wait, the level loop unrolled by 4. At level
// L a thread computes the x and y faces of L+1 and the z face of L+2, waits for every thread's
// faces of L, and writes the tendency of L (un_cell_tendency_q). The open-boundary cells are
// left to k_un_open (WRF adds their open terms between the x and z divergences), which does
// them whole. The same functions and DoubleDiv as k_un_faces: the same bits.
// Every block runs one code path: every column computes its three faces at 5th order in x and
// y, read or not, and again at the face's own order in the lanes of a degraded boundary face;
// the z faces between the two lowest and highest levels at 3rd order as constants; which
// terms a tile cell adds are its own predicates. A block with a boundary column in it took a
// second path with every order and flag per column (337 instructions a level against 218 by
// nvdisasm), and at 81 tracers on 134 x 110 those were 22 of 40 blocks: one path is 1.21x
// faster there, 1.24x at 40 tracers on 106 x 75, 1.08x at CONUS with 5 (docs/performance.md,
// "The unlimited scheme's level march on one code path").
namespace unfused {
// Blocks of bx x by threads, two per SM, fitted to the patch per call (un_march_blocks,
// advection_impl.h: bx <= 32, by <= kUnMarchMaxBY, 400 to 512 threads): 81 tracers on 134 x 110
// take blocks of 28 x 17 over 5 x 7 tiles of 27 x 16 columns, 16,800 threads a level against
// 32 x 16 blocks' 20,480 over 5 x 8 tiles of 31 x 15: 1.07x faster (docs/performance.md,
// "Blocks fitted to the patch"). A slab's rows have the widest block's pitch kSW and the face
// levels' the pitch kFP, so that the stencils' offsets stay constants in any block.
constexpr int kMaxThreads = 512, kMinBlocks = 2;
constexpr int kSW = 32 + 5, kSlab = kSW * (kUnMarchMaxBY + 5);  // a slab: its pitch, its values
constexpr int kFP = 32, kFace = kFP * kUnMarchMaxBY;            // a face level: its pitch, its values
constexpr int kSlabPer = 2;  // slab values per thread: (bx + 5) (by + 5) <= 2 bx by (un_march_blocks)
constexpr int kNB = 8, kNF = 4;  // slab levels and face levels held (as k_pd_fused's)
constexpr std::size_t kSmem = 16 + sizeof(float) * (kNB * kSlab + 2 * kNF * kFace);
}  // namespace unfused

__global__ void __launch_bounds__(unfused::kMaxThreads, unfused::kMinBlocks) k_un_march(View v, KBox t) {
  using namespace unfused;
  using fused::cp_async4;
  using fused::cp_async_commit;
  using fused::cp_async_wait;
  using fused::mbar_arrive;
  using fused::mbar_wait;
  extern __shared__ float4 sm4[];
  float* const sm = reinterpret_cast<float*>(sm4) + 4;  // after the mbarrier
  const unsigned bar = (unsigned)__cvta_generic_to_shared(sm4);
  const int bx = (int)blockDim.x, by = (int)blockDim.y, nth = bx * by;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + bx * ty;
  const int fc = tx + kFP * ty;  // the column in a face level
  const int oi = t.i0 + blockIdx.x * (bx - 1), oj = t.j0 + blockIdx.y * (by - 1);
  const int i = oi + tx, j = oj + ty;
  const int s = blockIdx.z;
  const int kts = v.g.kts, ktf = v.ktf;
  float* const flev = sm + kNB * kSlab;  // x faces [kNF][kFace], y faces [kNF][kFace]
  auto slab = [&](int K) { return sm + ((K - kts) & (kNB - 1)) * kSlab; };
  auto lev = [&](int comp, int K) { return flev + (comp * kNF + ((K - kts) & (kNF - 1))) * kFace; };
  const unsigned sk = (unsigned)v.mt.nx();
  int soff[kSlabPer], sdst[kSlabPer];  // this thread's slab elements
  fused::slab_offsets(v, tid, nth, bx + 5, by + 5, kSW, oi - 3, oj - 3, soff, sdst);
  const float* fk = v.f + ((unsigned)s * (unsigned)v.sst + (unsigned)(kts - v.mt.kms) * sk);
  auto load_slab = [&](int K) {  // K: kts, kts+1, ... in order
    if (K <= ktf) {
#pragma unroll
      for (int q = 0; q < kSlabPer; ++q)
        if (soff[q] >= 0) cp_async4(slab(K) + sdst[q], fk + soff[q]);
      fk += sk;
    }
    cp_async_commit();
  };
  // The tile cell of this thread, if any, and what its tendency adds (un_tend_geom)
  const bool tile_pos = tx < bx - 1 && ty < by - 1;
  bool tile = tile_pos && i < t.i0 + t.ni && j < t.j0 + t.nj;
  UnTendGeom tg{};
  unsigned o = 0;  // its output at level kts
  if (tile) { tg = un_tend_geom(v, i, kts, j); o = (unsigned)s * (unsigned)v.ost + (unsigned)v.mo.idx3(i, kts, j); }
  tile = tile && !tg.open;
  const int xo = xface_order(v, i), yo = yface_order(v, j);
  const int c = (tx + 3) + (ty + 3) * kSW;  // the column in a slab
  // The column's winds at level kts (ru, rv, rom share a layout). Every column computes its
  // three faces, read or not, so that a warp's lanes take one code path at all but the
  // degraded faces; a column outside the region (whose faces no tile cell reads) takes the
  // winds of the nearest region column.
  const unsigned mk = (unsigned)v.mm.nx();
  unsigned m = (unsigned)v.mm.idx3(min(max(i, v.mm.ims), v.mm.ime), kts, min(max(j, v.mm.jms), v.mm.jme));
  UnFace fx{5, 0.0f}, fy{5, 0.0f}, fz{0, 0.0f};
  // ZO: the z face's order where the caller knows it (3 away from the two lowest and highest
  // levels), else -1 (zface_order)
  auto load_winds = [&](int L, auto zo_c) {  // x, y faces at L, z face at L+1; L in order
    constexpr int ZO = decltype(zo_c)::value;
    fx.vel = v.ru[m];
    fy.vel = v.rv[m];
    fz.order = ZO >= 0 ? ZO : zface_order(v, L + 1);
    if (ZO > 0 || fz.order != 0) fz.vel = v.rom[m + mk];
    m += mk;
  };
  using ZAny = std::integral_constant<int, -1>;
  using Z3 = std::integral_constant<int, 3>;
  const DoubleDiv d;
  float w0 = 0.0f, w1 = 0.0f, w2 = 0.0f, w3 = 0.0f;  // the column's window (faces_of)
  float zlo = 0.0f, zup = 0.0f;  // the z faces L and L+1 of the tendency of L
  // The x and y faces of level M into shared memory (at 5th order, then again at the face's
  // own order where that is not 5: the lanes at a degraded boundary alone), its z face M+1
  // into zn, then the winds of M+1 (slabs M..M+2 of every thread's copies).
  auto faces_of = [&](int M, float& zn, auto zo_c) {
    constexpr int ZO = decltype(zo_c)::value;
    w0 = w1; w1 = w2; w2 = w3;
    w3 = ZO > 0 || M + 2 <= ktf ? slab(M + 2)[c] : 0.0f;
    const fused::SlabPts F{slab(M) + c};
    float qx = un_xflux(fx, F, v.ts, d), qy = un_yflux(fy, F, v.ts, d);
    if (xo != 5) qx = un_xflux(UnFace{xo, fx.vel}, F, v.ts, d);
    if (yo != 5) qy = un_yflux(UnFace{yo, fy.vel}, F, v.ts, d);
    lev(0, M)[fc] = qx;
    lev(1, M)[fc] = qy;
    if (ZO == 3)
      zn = fz.vel * un_flux3(w0, w1, w2, w3, -fz.vel, v.ts, d);  // un_zflux at 3rd order
    else
      zn = un_zflux(v, fz, fused::ZWin{w0, w1, w2, w3}, M + 1, d);
    if (ZO > 0 || M + 1 <= ktf) load_winds(M + 1, zo_c);
  };
  // Level L: the faces of L+1 and the z face of L+2, then the tendency of L. The z faces of
  // L+2 and (its winds) L+3 are 3rd order for L <= ktf - 4.
  auto level = [&](int L, auto zo_c) {
    float zn = 0.0f;
    load_slab(L + 6);  // where slab L-2 was (k_pd_fused's argument)
    if (decltype(zo_c)::value > 0 || L + 1 <= ktf) faces_of(L + 1, zn, zo_c);
    mbar_wait(bar, (unsigned)(L - kts) & 1u);  // every thread's faces of L
    if (tile) {
      // rdzw and the output's index before the face loads: in the other order ptxas spilled 14
      // bytes and the march was 1.11x slower at CONUS (docs/performance.md, "Blocks fitted to
      // the patch")
      tg.rdzw = v.A1(v.rdzw, L);
      const unsigned oL = o + (unsigned)(L - kts) * (unsigned)v.mo.nx();
      UnFlux q{};
      if (tg.xd) { q.x0 = lev(0, L)[fc]; q.x1 = lev(0, L)[fc + 1]; }
      if (tg.yd) { q.y0 = lev(1, L)[fc]; q.y1 = lev(1, L)[fc + kFP]; }
      q.z0 = zlo;
      q.z1 = zup;
      const float t0 = v.accumulate ? v.tend[oL] : 0.0f;
      v.tend[oL] = un_cell_tendency_q(v, tg, q, 0, i, L, j, t0);
    }
    cp_async_wait<1>();
    mbar_arrive(bar);  // phase L-kts+1: the faces of L+1
    zlo = zup; zup = zn;
  };
  if (tid == 0) fused::mbar_init(bar, nth);
  for (int K = kts; K < kts + 6; ++K) load_slab(K);
  cp_async_wait<0>();
  __syncthreads();
  w2 = slab(kts)[c];
  w3 = kts + 1 <= ktf ? slab(kts + 1)[c] : 0.0f;
  load_winds(kts, ZAny{});
  faces_of(kts, zup, ZAny{});
  mbar_arrive(bar);  // phase 0: the faces of kts
  int L = kts;
#pragma unroll 4
  for (; L <= ktf - 4; ++L) level(L, Z3{});
  for (; L <= ktf; ++L) level(L, ZAny{});
}
// The unlimited march's open-boundary cells, whole (un_cell_tendency with k_un_faces'
// quotients), one thread per edge-column cell and species.
__global__ void WRFGPU_ADV_BOUNDS k_un_open(View v, TileEdge te, int k0, int nk) {
  int i, k, j;
  if (!open_edge_cell(te, k0, nk, blockIdx.x * blockDim.x + threadIdx.x, i, k, j) || !open_cell(v, i, j)) return;
  const int s = blockIdx.z;
  const unsigned o = (unsigned)s * (unsigned)v.ost + (unsigned)v.mo.idx3(i, k, j);
  const float t0 = v.accumulate ? v.tend[o] : 0.0f;
  v.tend[o] = un_cell_tendency(v, (std::size_t)s * v.sst, i, k, j, t0, DoubleDiv());
}

// Buffers reused across calls (grow only) and the pipeline, one set per numerical mode. The
// pipeline's lock is held for the whole call, because WRF's rk_scalar_tend calls the
// per-species hook from inside its OpenMP tile loop (smpar and dm+sm builds) when a species is
// not batched. A group's inputs are packed into its stream's staging (Staging::PerSlotIn);
// outputs come back into one page-locked buffer for the whole call, so that no output is
// written to the caller's arrays before every group's inputs are packed and checked.
constexpr int kSlots = 2;
struct Slot {
  PinnedBuffer<float> pin_in;
  DeviceBuffer<float> d_in, d_out, d_scale, d_flux;  // the three-kernel forms' scales and face fluxes
};
struct Context {
  StagedPipeline pipe{"advect"};
  PinnedBuffer<float> pin_met, pin_out;
  DeviceBuffer<float> d_met;
  Slot slot[kSlots];
  DeviceBuffer<int> d_rows;                    // page-locked path: RowTables of the checks,
  PinnedBuffer<int> pin_rows;                  // (their copy on the host, for the async H2D)
  DeviceBuffer<unsigned long long> d_first_bad;  // their results (field, field_old),
  PinnedBuffer<unsigned long long> pin_first_bad;  // (read back into here)
  DeviceBuffer<float> d_call_in, d_call_out;     // and every group's inputs and outputs
  DeviceBuffer<float4> d_geom;                   // PD: the call's face coefficients (k_pd_geom)
  // Once per device: its SM count, and the level marches' shared-memory limits raised above the
  // 48 KB default (a per-device attribute of each kernel; k_un_march's 51 KB), not at every
  // launch.
  int sm_dev = -1, sm_n = 0, smem_optin = 0;
  int device_setup() {
    int d = 0;
    WRFGPU_CUDA_CHECK(cudaGetDevice(&d));
    if (d != sm_dev) {
      WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sm_n, cudaDevAttrMultiProcessorCount, d));
      WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, d));
      const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
      static_assert(kPdMarchRows[0] == 22 && kPdMarchRows[1] == 28, "k_pd_fused's instances below");
      static_assert(fused::kTX == 29, "pd_march_tiles_i (advection_impl.h) counts tiles of 29 columns");
      WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(k_pd_fused<true, 22>, a, smem_optin));
      WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(k_pd_fused<false, 22>, a, smem_optin));
      WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(k_pd_fused<true, 28>, a, smem_optin));
      WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(k_pd_fused<false, 28>, a, smem_optin));
      static_assert(unfused::kSW == kUnMarchMaxBX + 5, "un_march_blocks (advection_impl.h) fits k_un_march's slabs");
      WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(k_un_march, a, (int)unfused::kSmem));
      sm_dev = d;
    }
    return sm_n;
  }
};
Context& context() {
  static Context* c = new Context();  // never destroyed: CUDA may be gone at exit
  return *c;
}

// Copy box b of ns species of a WRF 4-D array (caller layout d, species stride sst) into
// dense dst (i fastest, then k, j, species), and back. The rows of all species are spread over
// the host's OpenMP threads in one parallel region (the pageable<->pinned copy is the host
// cost; a region per species and field was 42 regions per group of 14 tracers), with
// streaming stores both ways (stream_copy.h).
// With rc (Prepared::tracer_checks; species s of this call is species s0 + s of rc), each
// copied row is also tested for NaN/Inf as it is copied; a row that holds one is checked where
// the scheme reads it, in the caller's array: the smallest RowCheck code found is returned
// (LONG_MAX if none).
long pack3(const float* src, std::size_t sst, int ns, const WrfDims& d, const Box& b, float* dst,
           const RowCheck* rc = nullptr, int s0 = 0) {
  const std::size_t n = b.ni();
  const int nk = b.nk(), nj = b.nj();
  const long nrow = (long)ns * nj * nk;
  long first = LONG_MAX;
#pragma omp parallel reduction(min : first) if (nrow * (long)n > 65536)
  {
#pragma omp for schedule(static) nowait
    for (long r = 0; r < nrow; ++r) {
      const int k = b.k0 + (int)(r % nk), j = b.j0 + (int)(r / nk % nj), s = (int)(r / nk / nj);
      const float* from = src + sst * s + d.idx3(b.i0, k, j);
      const bool bad = copy_row_stream(dst + n * (std::size_t)r, from, n);
      if (!bad || !rc || j < rc->u.j0 || j > rc->u.j1 || k < rc->k0 || k > rc->k1) continue;
      first = std::min(first, rc->first_in_row(from + (rc->u.i0 - b.i0), s0 + s, k, j));
    }
    stream_fence();
  }
  return first;
}
void pack3(const float* src, const WrfDims& d, const Box& b, float* dst) {
  pack3(src, 0, 1, d, b, dst);
}
// Box b of the 2-D arrays src[0..na) into dst, one after another (b.ni() * b.nj() each); a
// null array is skipped (its part of dst is left as it is). The rows of all arrays are spread
// over the host's OpenMP threads: at CONUS size the five arrays of the PD scheme are 2.7 MB,
// 0.3 ms on one core.
void pack2(const float* const* src, int na, const WrfDims& d, const Box& b, float* dst) {
  const std::size_t n = b.ni();
  const int nj = b.nj();
  const long nrow = (long)na * nj;
#pragma omp parallel for schedule(static) if (nrow * (long)n > 65536)
  for (long r = 0; r < nrow; ++r) {
    const int a = (int)(r / nj), j = b.j0 + (int)(r % nj);
    if (src[a]) std::memcpy(dst + n * (std::size_t)r, src[a] + d.idx2(b.i0, j), n * sizeof(float));
  }
}
// The tendencies of ns species, nout outputs each ([t, h, z] per species in src), back into
// the WRF arrays dst[o] (species stride sst).
void unpack3(const float* src, int nout, float* const* dst, std::size_t sst, int ns,
             const WrfDims& d, const Box& b) {
  const std::size_t n = b.ni(), box = b.size();
  const int nk = b.nk(), nj = b.nj();
  const long nrow = (long)ns * nout * nj * nk;
#pragma omp parallel if (nrow * (long)n > 65536)
  {
#pragma omp for schedule(static) nowait
    for (long r = 0; r < nrow; ++r) {
      const int k = (int)(r % nk), j = (int)(r / nk % nj);
      const int o = (int)(r / nk / nj % nout), s = (int)(r / nk / nj / nout);
      copy_row_stream(dst[o] + sst * s + d.idx3(b.i0, b.k0 + k, b.j0 + j),
                      src + box * ((std::size_t)s * nout + o) + n * ((std::size_t)k + (std::size_t)nk * j),
                      n);
    }
    stream_fence();
  }
}

// Page-locked path. Species s of a WRF array (its base, the caller's layout d) <-> a dense
// device box: whole memory rows (box i0..i1 = ims..ime), one 2-D copy of nj chunks of
// nx * nk values; or any box b, one 3-D copy of its rows (the tiles of the outputs: nothing
// outside the tile is written).
void copy_rows_to_device(const float* host, const WrfDims& d, const Box& b, float* dev, cudaStream_t st) {
  const std::size_t w = sizeof(float) * (std::size_t)d.nx() * b.nk();
  WRFGPU_CUDA_CHECK(cudaMemcpy2DAsync(dev, w, host + d.idx3(d.ims, b.k0, b.j0),
                                      sizeof(float) * (std::size_t)d.nx() * d.nz(), w, b.nj(),
                                      cudaMemcpyHostToDevice, st));
}
void copy_box(float* host, const WrfDims& d, const Box& b, float* dev, bool to_device, cudaStream_t st) {
  copy_wrf_box(host, d, b.i0, b.ni(), b.k0, b.nk(), b.j0, b.nj(), dev, to_device, st);
}
// Are box b's values of all ns species of a caller's array page-locked?
bool box_locked(const float* a, std::size_t sst, int ns, const WrfDims& d, const Box& b) {
  return a == nullptr || host_range_locked(a + d.idx3(b.i0, b.k0, b.j0), a + (std::size_t)(ns - 1) * sst + d.idx3(b.i1, b.k1, b.j1));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// Advection through the staged pipeline (staged_call.h): the met fields are its prologue, a
// chunk is a group of species.
void run_gpu(const Prepared& p, AdvectTimings* tm, const GpuOptions& opt) {
  Context& st = context();
  const auto lock = st.pipe.lock();
  const auto tstart = std::chrono::steady_clock::now();
  const AdvectInputs& in = *p.in;
  const WrfDims& ud = in.dims;
  const Box& R = p.region;  // i/j region, k = kts..ktf
  const Box& T = p.tile;
  const Box& RG = p.ring;
  const int ns = in.nspec;
  const std::size_t r3 = R.size(), r2 = (std::size_t)R.ni() * R.nj(), nk1 = (std::size_t)ud.nz();
  const std::size_t t3 = T.size();
  const bool sep_fo = p.pd ? !p.fo_is_f : (!p.fo_is_f && (p.bc.open_xs || p.bc.open_xe || p.bc.open_ys || p.bc.open_ye));
  const int nout = 1 + (in.h_tendency ? 1 : 0) + (in.z_tendency ? 1 : 0);
  const bool acc = in.accumulate;
  // The page-locked path (GpuOptions::direct_locked): the tracers and the tendency arrays of
  // the call are page-locked. Its tracer box on the device is whole memory rows (RD). A
  // pageable field_old (inside WRF: solve_em's moist_old, an automatic array allocated at
  // every step, while moist is registered) is packed into page-locked staging in that same
  // layout, and checked on the host as it is packed (fo_staged); the rest goes straight.
  Box RD = R;
  RD.i0 = ud.ims; RD.i1 = ud.ime;
  const bool direct = opt.direct_locked && box_locked(in.field, p.sst, ns, ud, RD) &&
                      box_locked(in.tendency, p.sst, ns, ud, T) && box_locked(in.h_tendency, p.sst, ns, ud, T) &&
                      box_locked(in.z_tendency, p.sst, ns, ud, T);
  const bool fo_staged = direct && sep_fo && !box_locked(in.field_old, p.sst, ns, ud, RD);
  const Box& RT = direct ? RD : R;  // the tracers' box on the device
  const std::size_t rt3 = RT.size();
  // species per group
  int G = opt.species_per_group;
  if (G <= 0) G = config::integer("WRFGPU_ADVECT_GROUP").value_or(0);
  const bool chosen_g = G > 0;  // by the caller: the level march's waves do not change it
  if (G <= 0) G = default_group_size(ns);
  G = std::min(G, ns);
  Box FB = p.pd ? RG : T;  // faces of the ring (pd) or tile cells: one more in i, j and k
  FB.i1 += 1; FB.j1 += 1; FB.k1 += 1;
  const std::size_t fb3 = FB.size();
  int G_cap = ns;  // the most species a group may have
  {
    // The kernels index each of a group's device arrays with 32-bit element offsets (species
    // times the per-species size, plus the offset in it): fewer species per group where a
    // patch is that large.
    // The level march's face coefficients (9 per face-box cell) are one array for the call.
    const std::size_t per_sp = std::max({rt3, (std::size_t)(p.pd ? 6 : 3) * fb3, t3});
    const std::size_t lim = 0xffffffffu;
    if (per_sp > lim || (p.pd && 9 * fb3 > lim))
      throw RuntimeError("advection: the region of " + std::to_string(R.size()) +
                         " cells is too large for the GPU kernels' 32-bit offsets; split the patch");
    G_cap = (int)std::min<std::size_t>((std::size_t)ns, lim / per_sp);
    G = std::min(G, G_cap);
  }
  // the most species the level march's plan may put in a group (advection_impl.h)
  const int g_max = std::min(G_cap, pd_march_group_max(sizeof(float) * (rt3 * (sep_fo ? 2 : 1) + t3 * nout)));
  int spt = opt.species_per_thread;
  if (spt <= 0) spt = config::integer("WRFGPU_ADVECT_SPT").value_or(0);
  if (spt <= 0) spt = 8;
  // PD: the level march or the three kernels, and the march's rows, by the cost model of
  // pd_march_plan and pd_march_cheaper (advection_impl.h).
  bool march = false;
  PdMarchPlan mplan;
  std::size_t pd_shm = 0;  // the march's shared memory a block (mplan's rows)
  const FaceUse pd_faces{kbox(RG), T.i0, T.i1, T.j0, T.j1};  // the faces the PD scheme reads
  if (p.pd) {
    const int nsm = st.device_setup();
    GpuOptions::PdKernel k = opt.pd_kernel;
    if (const auto e = config::choice("WRFGPU_ADVECT_PD_KERNEL"))
      k = *e == "march" ? GpuOptions::PdKernel::March : GpuOptions::PdKernel::Three;
    int rows = opt.pd_march_rows;
    if (const auto e = config::choice("WRFGPU_ADVECT_PD_ROWS")) rows = std::stoi(*e);
    if (rows != 0 && rows != kPdMarchRows[0] && rows != kPdMarchRows[1])
      throw RuntimeError("advection: GpuOptions::pd_march_rows = " + std::to_string(rows) + ": the level march has blocks of 22 or 28 rows (0: chosen per call)");
    mplan = pd_march_plan(T.ni(), T.nj(), ns, G, g_max, chosen_g, nsm, rows);
    if (rows == 0 && fused::smem_bytes(mplan.rows, sep_fo, T.nk()) > (std::size_t)st.smem_optin)  // (sm_8x: 99-163 KB)
      mplan = pd_march_plan(T.ni(), T.nj(), ns, G, g_max, chosen_g, nsm, kPdMarchRows[0]);
    // (its 1-D columns in shared memory: some 6,000 levels on an H100, far more than WRF runs)
    pd_shm = fused::smem_bytes(mplan.rows, sep_fo, T.nk());
    const bool fits = pd_shm <= (std::size_t)st.smem_optin;
    if (k == GpuOptions::PdKernel::March && !fits)
      throw RuntimeError("advection: the PD level march was asked for (GpuOptions::pd_kernel or WRFGPU_ADVECT_PD_KERNEL=march) but needs " +
                         std::to_string(pd_shm) + " bytes of shared memory a block for " + std::to_string(T.nk()) +
                         " levels, more than this device's " + std::to_string(st.smem_optin) + "; ask for the three kernels or let the library choose");
    march = fits && (k == GpuOptions::PdKernel::March ||
                     (k == GpuOptions::PdKernel::Auto && pd_march_cheaper(mplan, T.ni(), T.nj(), ns)));
    if (march) G = mplan.group;
  }
  // The unlimited scheme: the level march (k_un_march) or the two kernels, by the cost model of
  // un_march_cheaper (advection_impl.h); the march's groups by its waves, as the PD march's.
  const UnMarchBlocks ub = un_march_blocks(T.ni(), T.nj());
  if (!p.pd) {
    const int nsm = st.device_setup();
    const int g = chosen_g ? G : pd_march_group_size(ns, G, g_max, ub.tiles(), nsm * unfused::kMinBlocks);
    GpuOptions::UnKernel k = opt.un_kernel;
    if (const auto e = config::choice("WRFGPU_ADVECT_UN_KERNEL"))
      k = *e == "march" ? GpuOptions::UnKernel::March : GpuOptions::UnKernel::Two;
    march = k == GpuOptions::UnKernel::March ||
            (k == GpuOptions::UnKernel::Auto && un_march_cheaper(T.ni(), T.nj(), ns, g, G, nsm));
    if (march) G = g;
  }
  const int ngroups = (ns + G - 1) / G;

  // ---- buffers ----------------------------------------------------------------------------
  // The 2-D met fields the scheme reads (advection.cpp's needs): mut, mub, mu_old, msftx and
  // msfty for the PD scheme, msftx alone for the unlimited one.
  const int n2 = p.pd ? 5 : 1;
  const std::size_t met_n = 3 * r3 + n2 * r2 + 5 * nk1;
  float* pm = st.pin_met.reserve(met_n);
  float* dm = st.d_met.reserve(met_n);
  // per-group sizes (elements)
  // (page-locked path: the tendencies that accumulate go straight into the outputs)
  const std::size_t in_per_sp = rt3 * (sep_fo ? 2 : 1) + (acc && !direct ? t3 * (in.h_tendency ? 2 : 1) : 0);
  const std::size_t out_per_sp = t3 * nout;
  float* const pin_out = direct ? nullptr : st.pin_out.reserve(out_per_sp * ns);
  // With the device check of the page-locked path every group's outputs wait on the device
  // until all groups have passed it, so each group has its own input and output buffers (the
  // call's whole working set on the device), not one of the two slots' (which the group after
  // next would overwrite before the outputs are copied back).
  const bool device_check = direct && p.tracers_unchecked;
  float* const call_in = device_check ? st.d_call_in.reserve(in_per_sp * ns) : nullptr;
  float* const call_out = device_check ? st.d_call_out.reserve(out_per_sp * ns) : nullptr;
  for (auto& sl : st.slot) {
    if (!direct) sl.pin_in.reserve(in_per_sp * G);
    if (fo_staged) sl.pin_in.reserve(rt3 * G);
    if (!device_check) {
      sl.d_in.reserve(in_per_sp * G);
      sl.d_out.reserve(out_per_sp * G);
    }
    if (!march) sl.d_flux.reserve(std::max<std::size_t>(1, (p.pd ? 6 : 3) * fb3 * G));
    if (p.pd && !march) sl.d_scale.reserve(std::max<std::size_t>(1, RG.size() * G));
  }
  std::size_t bytes_h2d = met_n * sizeof(float), bytes_d2h = 0;

  // ---- device view ------------------------------------------------------------------------
  View v = cpu_view(p);
  v.mt = RT.as_memory(ud);
  v.mm = R.as_memory(ud);
  v.mo = T.as_memory(ud);
  v.sst = rt3;
  v.ost = t3;
  v.ru = dm; v.rv = dm + r3; v.rom = dm + 2 * r3;
  const float* d2 = dm + 3 * r3;
  if (p.pd) {
    v.mut = d2; v.mub = d2 + r2; v.mu_old = d2 + 2 * r2; v.msftx = d2 + 3 * r2; v.msfty = d2 + 4 * r2;
  } else {
    v.mut = v.mub = v.mu_old = v.msfty = nullptr;
    v.msftx = d2;
  }
  const float* d1 = d2 + n2 * r2;
  v.c1 = d1; v.c2 = d1 + nk1; v.fzm = d1 + 2 * nk1; v.fzp = d1 + 3 * nk1; v.rdzw = d1 + 4 * nk1;
  v.k1d = ud.kms;
  const UnInner un_inner = p.pd ? UnInner{} : un_inner_box(v, T.i0, T.i1, T.j0, T.j1, T.k0);  // k_un_faces' inner warps
  const dim3 blk(128, 1, 1);
  auto grid_for = [&](const Box& b, int g) {
    return dim3((b.ni() * b.nk() + blk.x - 1) / blk.x, b.nj(), (g + spt - 1) / spt);
  };
  // Group g's species, and its device pointers.
  auto first_species = [&](int g) { return g * G; };
  auto species_in = [&](int g) { return std::min(G, ns - g * G); };
  auto group_in = [&](int g) {
    return device_check ? call_in + (std::size_t)first_species(g) * in_per_sp : st.slot[g % kSlots].d_in.data();
  };
  auto group_out = [&](int g) {
    return device_check ? call_out + (std::size_t)first_species(g) * out_per_sp : st.slot[g % kSlots].d_out.data();
  };
  auto group_view = [&](int g) {
    const int gn = species_in(g);
    View vg = v;
    vg.f = group_in(g);
    vg.fo = sep_fo ? vg.f + (std::size_t)gn * rt3 : vg.f;
    float* dout = group_out(g);
    vg.tend = dout;
    vg.htend = in.h_tendency ? dout + (std::size_t)gn * t3 : nullptr;
    vg.ztend = in.z_tendency ? dout + (std::size_t)gn * t3 * (in.h_tendency ? 2 : 1) : nullptr;
    return vg;
  };
  // The first non-finite tracer value per RowCheck (Prepared::tracer_checks), while packing.
  const RowCheck* rc_f = nullptr;
  const RowCheck* rc_fo = nullptr;
  if (p.tracers_unchecked)
    for (const RowCheck& rc : p.tracer_checks)
      (std::string(rc.name) == "field" ? rc_f : rc_fo) = &rc;
  std::vector<std::size_t> nin(ngroups, 0);

  ChunkPlan plan;
  plan.name = p.pd ? "advect_pd" : "advect_unlimited";
  plan.chunks = ngroups;
  plan.streams = kSlots;
  plan.staging = Staging::PerSlotIn;
  ChunkSteps steps;
  // The met fields: one packed buffer (packed here, before the pipeline starts its clock for
  // the copy), one H2D before every group.
  const auto tmet = std::chrono::steady_clock::now();
  // The 3-D met fields straight from the caller's arrays too where they are page-locked (the
  // region's rows, one 3-D copy each); the 2-D and 1-D ones are always packed (a few KB).
  const float* a3[3] = {in.ru, in.rv, in.rom};
  const bool met_direct = opt.direct_locked && box_locked(in.ru, 0, 1, ud, R) &&
                          box_locked(in.rv, 0, 1, ud, R) && box_locked(in.rom, 0, 1, ud, R);
  // Their finite check (Prepared::met_checks): on the device with the tracers' where both are
  // copied straight, else here, on the host, before anything is packed or written. Whatever
  // finds a bad value, validate() names it, so the message is the CPU backend's (the first
  // bad value in its order of the arrays).
  const bool met_device_check = device_check && met_direct;
  if (!met_device_check && !first_bad_met(p).empty()) {
    validate(in, p.pd);
    throw InputError("advection: " + first_bad_met(p));
  }
  {
    float* q = pm;
    for (const float* a : a3) { if (!met_direct) pack3(a, ud, R, q); q += r3; }
    const float* const a2_pd[5] = {in.mut, in.mub, in.mu_old, in.msftx, in.msfty};
    pack2(p.pd ? a2_pd : &in.msftx, n2, ud, R, q);
    q += n2 * r2;
    const float* a1[5] = {in.c1, in.c2, in.fzm, in.fzp, in.rdzw};
    for (const float* a : a1) {
      if (a) std::memcpy(q, a, nk1 * sizeof(float)); else std::memset(q, 0, nk1 * sizeof(float));
      q += nk1;
    }
  }
  const double met_pack_ms = ms_since(tmet);
  steps.prologue = [&](cudaStream_t s0) {
    if (met_direct) {
      for (int a = 0; a < 3; ++a) copy_box(const_cast<float*>(a3[a]), ud, R, dm + a * r3, true, s0);
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(dm + 3 * r3, pm + 3 * r3, (met_n - 3 * r3) * sizeof(float),
                                        cudaMemcpyHostToDevice, s0));
    } else {
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(dm, pm, met_n * sizeof(float), cudaMemcpyHostToDevice, s0));
    }
  };
  // Inputs of group g: [f x gn][fo x gn][tend x gn][htend x gn], each tracer row tested for
  // NaN/Inf as it is copied.
  steps.pack = [&](int g) {
    const int sa = first_species(g), gn = species_in(g);
    float* q0 = st.slot[g % kSlots].pin_in.data();
    if (direct) {  // the device checks what comes straight; a staged field_old is checked here
      if (!fo_staged) return true;
      const std::size_t off = (std::size_t)sa * p.sst;
      return pack3(in.field_old + off, p.sst, gn, ud, RT, q0, rc_fo, sa) == LONG_MAX;
    }
    float* q = q0;
    const std::size_t off = (std::size_t)sa * p.sst;
    long bad = pack3(in.field + off, p.sst, gn, ud, R, q, rc_f, sa); q += gn * rt3;
    if (sep_fo) { bad = std::min(bad, pack3(in.field_old + off, p.sst, gn, ud, R, q, rc_fo, sa)); q += gn * rt3; }
    if (acc) {
      pack3(in.tendency + off, p.sst, gn, ud, T, q); q += gn * t3;
      if (in.h_tendency) { pack3(in.h_tendency + off, p.sst, gn, ud, T, q); q += gn * t3; }
    }
    nin[g] = (std::size_t)(q - q0);
    return bad == LONG_MAX;
  };
  // Bad input: nothing has been written to the caller's arrays; name the first bad value of
  // all tracers, as validate() would.
  steps.report_bad = [&]() {
    validate(in, p.pd);  // throws the CPU backend's message
    const std::string m = first_bad_tracer(p);
    if (!m.empty()) throw InputError("advection: " + m);
    const std::string mm = first_bad_met(p);
    if (!mm.empty()) throw InputError("advection: " + mm);
  };
  steps.copy_in = [&](int g, cudaStream_t strm) {
    Slot& S = st.slot[g % kSlots];
    if (direct) {
      const int sa = first_species(g), gn = species_in(g);
      const View vg = group_view(g);
      for (int s = 0; s < gn; ++s) {
        const std::size_t off = (std::size_t)(sa + s) * p.sst;
        copy_rows_to_device(in.field + off, ud, RT, group_in(g) + (std::size_t)s * rt3, strm);
        if (sep_fo && !fo_staged)
          copy_rows_to_device(in.field_old + off, ud, RT, const_cast<float*>(vg.fo) + (std::size_t)s * rt3, strm);
        if (acc) {  // the tendencies to accumulate onto, straight into the outputs
          copy_box(in.tendency + off, ud, T, vg.tend + (std::size_t)s * t3, true, strm);
          if (vg.htend) copy_box(in.h_tendency + off, ud, T, vg.htend + (std::size_t)s * t3, true, strm);
        }
      }
      if (fo_staged)
        WRFGPU_CUDA_CHECK(cudaMemcpyAsync(const_cast<float*>(vg.fo), S.pin_in.data(), (std::size_t)gn * rt3 * sizeof(float),
                                          cudaMemcpyHostToDevice, strm));
      bytes_h2d += sizeof(float) * gn * (rt3 * (sep_fo ? 2 : 1) + (acc ? t3 * (vg.htend ? 2 : 1) : 0));
      return;
    }
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(S.d_in.data(), S.pin_in.data(), nin[g] * sizeof(float),
                                      cudaMemcpyHostToDevice, strm));
    bytes_h2d += nin[g] * sizeof(float);
  };
  steps.launch = [&](int g, cudaStream_t strm) {
    const int gn = species_in(g);
    Slot& S = st.slot[g % kSlots];
    const View vg = group_view(g);
    if (acc && !direct) {  // the tendencies accumulate onto what came in
      const float* din_t = S.d_in.data() + (std::size_t)gn * rt3 * (sep_fo ? 2 : 1);
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(vg.tend, din_t, (std::size_t)gn * t3 * sizeof(float),
                                        cudaMemcpyDeviceToDevice, strm));
      if (vg.htend)
        WRFGPU_CUDA_CHECK(cudaMemcpyAsync(vg.htend, din_t + (std::size_t)gn * t3,
                                          (std::size_t)gn * t3 * sizeof(float),
                                          cudaMemcpyDeviceToDevice, strm));
    }
    // the tile's open-boundary cells (k_pd_open; k_un_tend_q's last rows), where it holds an open edge
    const bool open = v.bc.open_xs || v.bc.open_xe || v.bc.open_ys || v.bc.open_ye;
    const TileEdge te{T.i0, T.ni(), T.j0, T.nj()};
    const dim3 eg((te.ne() * T.nk() + blk.x - 1) / blk.x, 1, gn);
    if (p.pd && open) {
      k_pd_open<<<eg, blk, 0, strm>>>(vg, te, T.k0, T.nk());
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_open");
    }
    if (march && !p.pd) {
      if (open) {
        k_un_open<<<eg, blk, 0, strm>>>(vg, te, T.k0, T.nk());
        WRFGPU_CUDA_CHECK_LAUNCH("k_un_open");
      }
      k_un_march<<<dim3(ub.nbx, ub.nby, gn), dim3(ub.bx, ub.by), unfused::kSmem, strm>>>(vg, kbox(T));
      WRFGPU_CUDA_CHECK_LAUNCH("k_un_march");
    } else if (march) {
      const int by = mplan.rows;
      const dim3 fb(fused::kBX, by), fg(pd_march_tiles_i(T.ni()), pd_march_tiles_j(T.nj(), by), gn);  // the plan's tiles
      const auto launch = [&](auto kernel) { kernel<<<fg, fb, pd_shm, strm>>>(vg, st.d_geom.data(), kbox(FB), kbox(T), pd_faces); };
      if (by == 22) sep_fo ? launch(k_pd_fused<true, 22>) : launch(k_pd_fused<false, 22>);
      else sep_fo ? launch(k_pd_fused<true, 28>) : launch(k_pd_fused<false, 28>);
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_fused");
    } else if (p.pd) {
      const FluxBox fl{S.d_flux.data(), kbox(FB), fb3};
      k_pd_faces<<<grid_for(FB, gn), blk, 0, strm>>>(vg, S.d_flux.data(), kbox(FB), pd_faces, gn, spt);
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_faces");
      k_pd_scale_q<<<grid_for(RG, gn), blk, 0, strm>>>(vg, fl, S.d_scale.data(), kbox(RG), T.i0,
                                                       T.i1, T.j0, T.j1, gn, spt);
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_scale_q");
      k_pd_tend_q<<<grid_for(T, gn), blk, 0, strm>>>(vg, fl, S.d_scale.data(), kbox(RG), kbox(T), gn, spt);
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_tend_q");
    } else {
      const FluxBox fl{S.d_flux.data(), kbox(FB), fb3};
      FaceUse fu{KBox{0, 0, 0, 0, 0, 0}, T.i0, T.i1, T.j0, T.j1};  // no limiter cells
      k_un_faces<<<grid_for(FB, gn), blk, 0, strm>>>(vg, S.d_flux.data(), kbox(FB), fu, un_inner, gn, spt, v.mt.nx(),
                                                     v.mt.nx() * v.mt.nz());
      WRFGPU_CUDA_CHECK_LAUNCH("k_un_faces");
      dim3 tg = grid_for(T, gn);
      if (open) {  // the rows of the open-boundary cells' blocks
        const long per_row = (long)tg.x * blk.x;
        tg.y += (unsigned)(((long)te.ne() * T.nk() * std::min(spt, gn) + per_row - 1) / per_row);
      }
      k_un_tend_q<<<tg, blk, 0, strm>>>(vg, fl, kbox(T), te, gn, spt);
      WRFGPU_CUDA_CHECK_LAUNCH("k_un_tend_q");
    }
  };
  // D2H of the tile outputs: group layout [t x gn][h x gn][z x gn] -> pinned per species
  // interleaved as the unpacker expects ([t,h,z] per species).
  steps.copy_out = [&](int g, cudaStream_t strm) {
    const int sa = first_species(g), gn = species_in(g);
    const View vg = group_view(g);
    if (direct) {  // straight into the tiles of the caller's arrays
      for (int s = 0; s < gn; ++s) {
        const std::size_t off = (std::size_t)(sa + s) * p.sst;
        copy_box(in.tendency + off, ud, T, vg.tend + (std::size_t)s * t3, false, strm);
        if (vg.htend) copy_box(in.h_tendency + off, ud, T, vg.htend + (std::size_t)s * t3, false, strm);
        if (vg.ztend) copy_box(in.z_tendency + off, ud, T, vg.ztend + (std::size_t)s * t3, false, strm);
      }
      bytes_d2h += (std::size_t)gn * out_per_sp * sizeof(float);
      return;
    }
    float* po = pin_out + (std::size_t)sa * out_per_sp;
    for (int s = 0; s < gn; ++s) {
      for (float* src : {vg.tend, vg.htend, vg.ztend}) {
        if (!src) continue;
        WRFGPU_CUDA_CHECK(cudaMemcpyAsync(po, src + (std::size_t)s * t3, t3 * sizeof(float),
                                          cudaMemcpyDeviceToHost, strm));
        po += t3;
      }
    }
    bytes_d2h += (std::size_t)gn * out_per_sp * sizeof(float);
  };
  steps.unpack = [&](int g) {
    if (direct) return;  // the copies wrote the caller's arrays
    const int sa = first_species(g), gn = species_in(g);
    float* outs[3];
    int no = 0;
    const std::size_t off = (std::size_t)sa * p.sst;
    outs[no++] = in.tendency + off;
    if (in.h_tendency) outs[no++] = in.h_tendency + off;
    if (in.z_tendency) outs[no++] = in.z_tendency + off;
    unpack3(pin_out + (std::size_t)sa * out_per_sp, no, outs, p.sst, gn, ud, T);
  };

  if (march && p.pd) {  // the face coefficients once per call, after the met fields' copy
    float4* dg = st.d_geom.reserve(3 * fb3);
    const auto prologue = steps.prologue;
    steps.prologue = [prologue, &v, dg, FB, blk, &pd_faces, &grid_for](cudaStream_t s0) {
      prologue(s0);
      k_pd_geom<<<grid_for(FB, 1), blk, 0, s0>>>(v, dg, kbox(FB), pd_faces);
      WRFGPU_CUDA_CHECK_LAUNCH("k_pd_geom");
    };
  }
  // Page-locked path: the tracers' finite check on the device, group by group after its H2D;
  // no output is copied back until every group has passed (ChunkPlan::device_check).
  plan.device_check = device_check;
  constexpr int kChecked = 5;
  if (plan.device_check) {
    // field, field_old, then (where checked on the device) ru, rv, rom
    const RowCheck* rcs[kChecked] = {rc_f, sep_fo && !fo_staged ? rc_fo : nullptr, nullptr, nullptr, nullptr};
    if (met_device_check)
      for (const RowCheck& rc : p.met_checks) {
        const std::string n = rc.name;
        rcs[n == "ru" ? 2 : n == "rv" ? 3 : 4] = &rc;
      }
    // Each check's RowTable (row offsets, then the rows' i intervals), written straight into
    // the page-locked copy that goes to the device: where each starts first, then the tables.
    std::size_t at[kChecked + 1] = {};
    for (int a = 0; a < kChecked; ++a) {
      std::size_t len = 0;
      if (rcs[a]) {
        len = (std::size_t)rcs[a]->u.nj() + 1;
        for (const auto& iv : rcs[a]->ivs) len += 2 * iv.size();
      }
      at[a + 1] = at[a] + len;
    }
    const std::size_t nrows = at[kChecked];
    int* drows = st.d_rows.reserve(std::max<std::size_t>(1, nrows));
    int* hrows = st.pin_rows.reserve(std::max<std::size_t>(1, nrows));
    for (int a = 0; a < kChecked; ++a) {
      if (!rcs[a]) continue;
      const RowCheck& rc = *rcs[a];
      const int nj = rc.u.nj();
      int* off = hrows + at[a];
      int* iv = off + nj + 1;
      int q = 0;
      for (int jj = 0; jj < nj; ++jj) {
        off[jj] = q;
        for (const auto& x : rc.ivs[(std::size_t)jj]) { iv[2 * q] = x.first; iv[2 * q + 1] = x.second; ++q; }
      }
      off[nj] = q;
    }
    unsigned long long* dfirst = st.d_first_bad.reserve(kChecked);
    unsigned long long* hfirst = st.pin_first_bad.reserve(kChecked);
    // The tables and the reset of the results go with the prologue, on its stream, which
    // every chunk's stream waits for: no host-blocking copy in the call's set-up (inside WRF
    // a synchronous copy waits behind the other ranks' copies on the link).
    const auto prologue = steps.prologue;
    steps.prologue = [prologue, drows, hrows, nrows, dfirst](cudaStream_t s0) {
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(drows, hrows, nrows * sizeof(int), cudaMemcpyHostToDevice, s0));
      WRFGPU_CUDA_CHECK(cudaMemsetAsync(dfirst, 0xff, kChecked * sizeof(unsigned long long), s0));  // ~0ull: none
      prologue(s0);
    };
    steps.check = [&, rcs, at, drows, dfirst](int g, cudaStream_t strm) {
      const int sa = first_species(g), gn = species_in(g);
      const View vg = group_view(g);
      // the group's tracers, in its dense box RT; the met fields (with group 0: every group
      // waits for their copy) in the region box R of the met buffer
      const float* arr[kChecked] = {vg.f, vg.fo, dm, dm + r3, dm + 2 * r3};
      for (int a = 0; a < kChecked; ++a) {
        if (!rcs[a] || (a >= 2 && g != 0)) continue;
        const RowCheck& rc = *rcs[a];
        const RowTable tb{drows + at[a], drows + at[a] + rc.u.nj() + 1, rc.u.i0, rc.u.ni(), rc.u.j0, rc.u.nj(), rc.k0, rc.nk()};
        const long rows = (long)(a < 2 ? gn : 1) * rc.u.nj() * rc.nk();
        if (rows == 0) continue;
        k_check_rows<<<(unsigned)rows, 128, 0, strm>>>(arr[a], kbox(a < 2 ? RT : R), tb, a < 2 ? sa : 0, dfirst + a);
        WRFGPU_CUDA_CHECK_LAUNCH("k_check_rows");
      }
    };
    // (run() calls it once every chunk's check has completed: the results are final)
    steps.checks_pass = [&, dfirst, hfirst]() {
      WRFGPU_CUDA_CHECK(cudaMemcpy(hfirst, dfirst, kChecked * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      return std::all_of(hfirst, hfirst + kChecked, [](unsigned long long c) { return c == ~0ull; });
    };
  }

  // WRFGPU_TRACE=1: what the call spends before its pipeline (the pipeline prints its own);
  // "checks" is run()'s part before this function (the inputs' bounds, the rows to check).
  const bool trace = config::flag("WRFGPU_TRACE").value_or(false);
  if (trace)
    std::fprintf(stderr, "%s set-up: %.3f ms of checks, then %.3f ms before the pipeline\n", plan.name,
                 tm ? tm->check_ms : 0.0, ms_since(tstart));
  const StagedTimes t = st.pipe.run(plan, steps);
  if (trace) std::fprintf(stderr, "%s call: %.3f ms after the checks\n", plan.name, ms_since(tstart));
  if (tm) {
    tm->h2d_ms = t.h2d_ms;
    tm->kernel_ms = t.kernel_ms;
    tm->d2h_ms = t.d2h_ms;
    tm->pack_ms = met_pack_ms + t.pack_ms + t.unpack_ms;
    tm->total_ms = ms_since(tstart);
    tm->bytes_h2d = bytes_h2d;
    tm->bytes_d2h = bytes_d2h;
    tm->groups = ngroups;
    tm->species_per_group = G;
    tm->direct = direct;
    tm->field_old_staged = fo_staged;
    tm->check_ms += t.check_ms;  // the device check of the page-locked path (run() timed its host checks)
  }
}

}  // namespace WRFGPU_MODE_NS
}  // namespace advection
}  // namespace wrfgpu
