// replay.h - what the replay driver needs from each kernel: run the captured call on one
// backend and hand back the outputs in capture layout, named as the capture names WRF's
// outputs. One adapter per kernel (src/<k>/replay/replay_<k>.cpp) registers itself by `kernel`
// name, and its benchmark cases.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include "capture_io.h"
#include "device.h"  // LockedArray
#include "modes.h"

namespace wrfgpu {

struct PhaseTimes {
  double read_ms = 0, h2d_ms = 0, kernel_ms = 0, d2h_ms = 0, total_ms = 0;
  double halo_ms = 0;  // MPI halo exchange between steps (multi-step runs)
  double check_ms = 0; // input checks on the host, included in total_ms (where reported)
};

// A rank's part of a captured tile: columns i0..i0+ni-1, j0..j0+nj-1 as 0-based offsets
// within the tile (mass points), as WRF decomposes a domain into patches. The default is the
// whole tile (one rank).
struct Patch : TileWindow {  // i0, ni, j0, nj; ni/nj < 0: the whole tile
  int rank = 0, nranks = 1, px = 1, py = 1;
};
// WRF-like 2-D decomposition of ni x nj columns over nranks: px x py tasks with px <= py and
// px*py = nranks as close to square as possible; remainder columns go to the first patches.
Patch decompose(int ni, int nj, int rank, int nranks);

// One output field of a call, dense in capture order (NetCDF order: slowest first), for the
// patch this rank ran. The last dimension is west_east; south_north is 3rd from last (2nd
// for 2-D fields).
struct OutputField {
  std::string name;                 // our name, e.g. "th"
  std::string ref_var;              // the capture variable holding WRF's value, e.g. "th_out"
  std::vector<std::size_t> shape;   // e.g. {south_north, bottom_top, west_east} of the patch
  std::vector<float> data;
  bool compare_plmv = true;         // 3-D fields get the per-level mean variance
  // Pass/fail by the largest cell difference instead (surface fields, where a level mean is
  // one number): max|ref - x| <= max_abs + max_abs_ulps * FLT_EPSILON * max|ref|. The second
  // term allows float rounding of an accumulated total. max_abs < 0: no such rule.
  double max_abs = -1, max_abs_ulps = 0;
  double level_floor = 0;           // level means below this count as zero levels (verify.h)
  double level_cancel = 0;          // skip levels whose mean is a cancellation (verify.h)
  std::size_t off_i = 0, off_j = 0; // the patch's offset within the capture's full field
  // For an output with no counterpart in the capture (ref_var absent from the file): the
  // NetCDF dimensions of the full field, so that it can still be gathered and written.
  std::vector<std::string> dims;
};

// Work of one call, for rates: bytes across PCIe each way, the fewest bytes the kernels must
// move through device memory (each input read once, each output written once), and flops.
struct WorkCounts {
  double h2d_bytes = 0, d2h_bytes = 0, dev_bytes = 0, flops = 0;
  double cells = 0;  // grid cells of one call (for cells per second; 0: not reported)
};

struct Thresholds {
  double plmv_vs_ref = 0;           // per-level mean variance against the capture's outputs
  double plmv_gpu_cpu = 0;          // against the other backend
  std::string basis;                // one line: where the number comes from
};

class Replay {
 public:
  virtual ~Replay() = default;
  virtual std::string kernel() const = 0;
  virtual std::string summary() const = 0;  // e.g. "71x58x27, dt 12 s"
  // Run the call on `b` (Cpu or Gpu) in mode `m`, from the captured inputs (never from a
  // previous run's outputs). Returns the outputs; fills the phase times.
  virtual std::vector<OutputField> run(Backend b, Mode m, PhaseTimes& t) = 0;
  virtual Thresholds thresholds(Mode m) const = 0;
  virtual WorkCounts work() const { return {}; }
  // Multi-step replay (steps > 1): false when the kernel has none. Called before run().
  virtual bool set_steps(int /*steps*/) { return false; }
  // GPU runs with the caller's arrays in page-locked memory (a host model that keeps its
  // state pinned): false when the kernel has no such path. Called before run().
  virtual bool set_host_locked(bool /*locked*/) { return false; }
  // With set_host_locked(true): page-locked as inside WRF with wrf_patch, the grid state
  // page-locked and solve_em's automatic (Registry i1) arrays pageable: false when the kernel
  // reads no such array. Called before run().
  virtual bool set_wrf_mix(bool /*mix*/) { return false; }
  // Single instead of double precision where the kernel computes in double by default
  // (RADM2SORG's Rosenbrock solver): false when it has no such option. Called before run().
  virtual bool set_single(bool /*single*/) { return false; }
  // Through the WRF-array entry point the Fortran bridge takes (memory-dimensioned 3-D and
  // 4-D arrays) instead of the dense batch: false when the kernel has no separate one.
  // Called before run().
  virtual bool set_wrf_arrays(bool /*wrf*/) { return false; }
};

using ReplayFactory = std::function<std::unique_ptr<Replay>(const NcFile&, const Patch&)>;
// Registry keyed by the capture's `kernel` attribute.
std::map<std::string, ReplayFactory>& replay_registry();
struct RegisterReplay {
  RegisterReplay(const std::string& kernel, ReplayFactory f) { replay_registry()[kernel] = f; }
};
// A case of wrfgpu_bench, registered by the kernel's adapter: the latest bundled capture whose
// name contains `pattern`, as it is or grown to ni x nj x nk (nscalar tracers) by mirror tiling.
struct BenchCase {
  std::string kernel, label, pattern;
  int ni, nj, nk, nscalar;  // 0 = the capture as it is
};
// Every kernel's cases by their order key, in the order wrfgpu_bench runs them (a key's cases
// as registered).
std::multimap<int, BenchCase>& bench_cases();
// --kernels names: a kernel, or an alias of one (e.g. "radm2sorg" for radm2sorg_kpp).
std::map<std::string, std::string>& bench_aliases();
struct RegisterBench {
  RegisterBench(int order, const std::vector<BenchCase>& cases, const std::string& alias = "");
};
// Opens `path`, checks capture_format, dispatches on `kernel`. InputError on anything wrong.
std::unique_ptr<Replay> open_replay(const std::string& path, const Patch& patch = Patch());

}  // namespace wrfgpu
