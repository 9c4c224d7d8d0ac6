// wrfgpu_replay - replays calls captured from WRF through wrfgpu's kernels and says how
// closely they reproduce WRF's own outputs (per-level mean variance, max per-cell errors),
// how the GPU and CPU backends agree, and how long every phase took.
//
//   wrfgpu_replay FILE... [--backend gpu|cpu|both|auto] [--mode strict|fast] [--repeat N]
//                 [--report out.json] [--plot DIR] [--write-outputs FILE] [--device N]
//                 [--max-plmv X] [--max-plmv-gpu-cpu X] [--steps N] [--page-locked] [--version]
//
// Exit status: 0 all files pass (or have nothing to compare with: NOT VERIFIED); 1 a
// threshold exceeded or a file failed to run; 2 bad input. A failing file does not stop the others.
#include <mpi.h>
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>
#include "capture_io.h"
#include "config.h"
#include "device.h"
#include "host_cores.h"
#include "errors.h"
#include "modes.h"
#include "replay.h"
#include "report.h"
#include "version.h"

using namespace wrfgpu;

namespace {

struct Options {
  std::vector<std::string> files;
  Backend backend = Backend::Auto;
  Mode mode = Mode::Strict;
  int repeat = 1, device = -1, steps = 1;
  std::string report, plot_dir, write_outputs;
  double max_plmv = -1, max_plmv_gc = -1;
  bool version = false, quiet = false, page_locked = false;
};

void usage() {
  std::puts(
      "usage: wrfgpu_replay FILE... [--backend gpu|cpu|both|auto] [--mode strict|fast]\n"
      "                     [--repeat N] [--report out.json] [--plot DIR] [--write-outputs FILE]\n"
      "                     [--device N] [--max-plmv X] [--max-plmv-gpu-cpu X] [--steps N]\n"
      "                     [--page-locked] [--quiet] [--version] [--list-config[=markdown]]\n"
      "Under mpirun each rank takes a patch of the captured tile (WRF-like 2-D decomposition) and\n"
      "the GPU of its node-local rank; the report is reduced over ranks.\n"
      "--steps N (advection): N steps with frozen winds, halos exchanged with MPI between steps;\n"
      "the result is the tracers after the last step (no WRF reference; GPU vs CPU is checked).\n"
      "--page-locked: the call's arrays in page-locked host memory, as inside WRF with wrf_patch\n"
      "(the GPU backend then copies straight between them and the device); default pageable.\n"
      "Replays wrfgpu capture files (format 1) and compares with WRF's recorded outputs.\n"
      "Defaults: WRFGPU_BACKEND, else auto (the GPU when one is visible); WRFGPU_MODE, else strict.\n"
      "--list-config prints every WRFGPU_* setting (=markdown: docs/configuration.md).\n"
      "Exit status: 0 pass (or NOT VERIFIED: nothing to compare with), 1 threshold exceeded or\n"
      "run failed, 2 bad input.");
}

Options parse(int argc, char** argv) {
  // --list-config[=markdown]: the settings table (src/common/config.cpp), before anything
  // reads a setting, so that it works whatever the environment holds.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list-config" || a == "--list-config=markdown") {
      std::fputs((a == "--list-config" ? config::plain_text() : config::markdown()).c_str(), stdout);
      std::exit(0);
    }
  }
  Options o;
  o.backend = backend_from_env(Backend::Auto);  // the flags below win over the environment
  o.mode = mode_from_env(Mode::Strict);
  auto need = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw InputError(std::string("option ") + argv[i] + " needs a value");
    return argv[++i];
  };
  auto num = [](const std::string& opt, const std::string& v) {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) throw InputError("option " + opt + ": '" + v + "' is not a number");
    return d;
  };
  // Counts are checked before the cast to int, which would overflow (1e12 runs once).
  auto whole = [&](const std::string& opt, const std::string& v, int lo, int hi) {
    double d = num(opt, v);
    if (!(d >= lo && d <= hi) || d != std::floor(d))
      throw InputError("option " + opt + ": '" + v + "' is not a whole number from " + std::to_string(lo) +
                       " to " + std::to_string(hi));
    return (int)d;
  };
  auto threshold = [&](const std::string& opt, const std::string& v) {
    double d = num(opt, v);
    if (!(d >= 0 && std::isfinite(d)))
      throw InputError("option " + opt + ": '" + v + "' is not a finite threshold >= 0");
    return d;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend") o.backend = parse_backend(need(i));
    else if (a == "--mode") o.mode = parse_mode(need(i));
    else if (a == "--repeat") o.repeat = whole(a, need(i), 1, 1000000);
    else if (a == "--steps") o.steps = whole(a, need(i), 1, 1000000);
    else if (a == "--report") o.report = need(i);
    else if (a == "--plot") o.plot_dir = need(i);
    else if (a == "--write-outputs") o.write_outputs = need(i);
    else if (a == "--device") o.device = whole(a, need(i), 0, 1023);
    else if (a == "--max-plmv") o.max_plmv = threshold(a, need(i));
    else if (a == "--max-plmv-gpu-cpu") o.max_plmv_gc = threshold(a, need(i));
    else if (a == "--version") o.version = true;
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--page-locked") o.page_locked = true;
    else if (a == "-h" || a == "--help") { usage(); std::exit(0); }
    else if (!a.empty() && a[0] == '-') throw InputError("unknown option '" + a + "' (see --help)");
    else o.files.push_back(a);
  }
  if (!o.version && o.files.empty()) throw InputError("no capture file given (see --help)");
  return o;
}

std::string version_text() {
  std::string s = std::string("wrfgpu ") + WRFGPU_VERSION + "\n";
  s += "  " + cuda_version_string() + "\n";
  std::string why;
  int n = gpu_count(&why);
  if (n == 0) s += "  GPU: none (" + why + ")\n";
  for (int d = 0; d < n; ++d) {
    DeviceInfo info = gpu_info(d);
    char b[256];
    std::snprintf(b, sizeof b, "  GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, PCI %s\n",
                  d, info.name.c_str(), info.cc_major, info.cc_minor, info.sm_count,
                  info.total_mem / 1073741824.0, info.pci_bus_id.c_str());
    s += b;
  }
  s += "  NetCDF " + netcdf_version() + "\n";
  char mpiv[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpiv, &len);
  std::string m(mpiv, len);
  s += "  MPI: " + m.substr(0, m.find_first_of(",\n")) + "\n";
  return s;
}

PhaseTimes median_of(std::vector<PhaseTimes> v) {
  if (v.empty()) return PhaseTimes{};
  auto med = [&](double PhaseTimes::*f) {
    std::vector<double> x;
    for (auto& t : v) x.push_back(t.*f);
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  PhaseTimes m;
  m.read_ms = med(&PhaseTimes::read_ms);
  m.h2d_ms = med(&PhaseTimes::h2d_ms);
  m.kernel_ms = med(&PhaseTimes::kernel_ms);
  m.d2h_ms = med(&PhaseTimes::d2h_ms);
  m.total_ms = med(&PhaseTimes::total_ms);
  m.halo_ms = med(&PhaseTimes::halo_ms);
  return m;
}

// ni, nk, nj of a field in capture order: (..., south_north, bottom_top, west_east) or 2-D.
void field_extent(const std::vector<std::size_t>& s, std::size_t n, std::size_t& ni, std::size_t& nk,
                  std::size_t& nj, std::size_t& nlead) {
  nlead = 1;
  if (s.size() == 2) { nj = s[0]; nk = 1; ni = s[1]; return; }
  if (s.size() >= 3) {
    nj = s[s.size() - 3]; nk = s[s.size() - 2]; ni = s[s.size() - 1];
    for (std::size_t d = 0; d + 3 < s.size(); ++d) nlead *= s[d];
    return;
  }
  ni = n; nk = 1; nj = 1;
}

// The statistics of verify.h, computed on each rank's patch and reduced over ranks, so that
// the report of an N-rank run equals the one-rank report (level means are global means).
FieldStats reduced_stats(const std::string& name, const float* ref, const float* x, std::size_t ni,
                         std::size_t nk, std::size_t nj, double level_floor, double level_cancel,
                         std::vector<double>* mref_out, std::vector<double>* mx_out) {
  LevelSums s = accumulate_levels(ref, x, ni, nk, nj);
  // One buffer per reduction kind: per-level sums of ref, ours, |ref| and the column count.
  std::vector<double> sums(3 * nk + 1);
  std::copy(s.ref.begin(), s.ref.end(), sums.begin());
  std::copy(s.x.begin(), s.x.end(), sums.begin() + nk);
  std::copy(s.absref.begin(), s.absref.end(), sums.begin() + 2 * nk);
  sums[3 * nk] = s.cols;
  double mx[3] = {s.max_abs, s.max_rel, s.max_absref};
  long long nonfinite[2] = {(long long)s.nonfinite, (long long)s.nonfinite_ref};
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), (int)sums.size(), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, nonfinite, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  s.ref.assign(sums.begin(), sums.begin() + nk);
  s.x.assign(sums.begin() + nk, sums.begin() + 2 * nk);
  s.absref.assign(sums.begin() + 2 * nk, sums.begin() + 3 * nk);
  s.cols = sums[3 * nk];
  s.max_abs = mx[0];
  s.max_rel = mx[1];
  s.max_absref = mx[2];
  s.nonfinite = (std::size_t)nonfinite[0];
  s.nonfinite_ref = (std::size_t)nonfinite[1];
  return finish_stats(name, s, level_floor, level_cancel, mref_out, mx_out);
}

// The slab of a reference variable that matches an output field's patch. The reference must
// have the field's shape: the same extent in every dimension but the horizontal ones, which
// must hold the patch at its offset.
std::vector<float> read_ref_patch(const NcFile& f, const OutputField& o) {
  std::vector<std::size_t> full = f.var_shape(o.ref_var);
  if (full.size() != o.shape.size())
    throw InputError(f.path() + ": variable '" + o.ref_var + "' has " + std::to_string(full.size()) +
                     " dimensions, the kernel produced " + std::to_string(o.shape.size()));
  std::vector<std::size_t> start(full.size(), 0);
  const std::size_t id = full.size() - 1, jd = full.size() == 2 ? 0 : full.size() - 3;
  start[id] = o.off_i;
  start[jd] = o.off_j;
  const std::vector<std::string> names = f.var_dim_names(o.ref_var);
  for (std::size_t d = 0; d < full.size(); ++d) {
    const bool horiz = d == id || d == jd;
    if (horiz ? start[d] + o.shape[d] > full[d] : full[d] != o.shape[d])
      throw InputError(f.path() + ": variable '" + o.ref_var + "': dimension " + names[d] + " has length " +
                       std::to_string(full[d]) + ", the output " + o.name + " needs " +
                       std::to_string(start[d] + o.shape[d]));
  }
  return f.read_float_slab(o.ref_var, start, o.shape);
}

// Fault injection for tests/driver/mpi_faults.sh: WRFGPU_TEST_FAULT=R:fail makes rank R fail
// after its first kernel call as a device failing mid-run would (an exception), R:die makes
// it exit at once without a word (a rank that dies). Either way the job must stop with one
// message naming the rank, never hang.
void injected_fault(int rank) {
  const std::optional<std::string> f = config::text("WRFGPU_TEST_FAULT");
  if (!f) return;
  const char* e = f->c_str();
  int r = -1;
  char kind[16] = {0};
  if (std::sscanf(e, "%d:%15s", &r, kind) != 2 || r != rank) return;
  if (std::strcmp(kind, "die") == 0) std::_Exit(7);
  if (std::strcmp(kind, "fail") == 0)
    throw RuntimeError("device failure injected by WRFGPU_TEST_FAULT (as a GPU that fails mid-run)");
}

// An error every rank knows of, so that all of them can leave the file together; status is
// the exit status it calls for (2 bad input, 1 anything else).
struct FileError : std::runtime_error {
  int status;
  FileError(const std::string& m, int st) : std::runtime_error(m), status(st) {}
};

// Runs f on every rank and agrees on the outcome: when it throws on any rank, every rank
// throws the same FileError (the message of the lowest failing rank). Used for the phases
// that read and check input before any collective of the file, where one rank alone may
// fail (its patch, its hyperslab): never leaves a rank waiting for the others.
template <class F>
void on_all_ranks(F f, int rank, int nranks) {
  int st = 0;
  std::string msg;
  try {
    f();
  } catch (const InputError& e) {
    st = 2; msg = e.what();
  } catch (const std::exception& e) {
    st = 1; msg = e.what();
  }
  if (nranks > 1) {
    int worst = st, first = st ? rank : nranks;
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (worst == 0) return;
    int len = (int)msg.size();
    MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
    msg.resize(len);
    MPI_Bcast(&msg[0], len, MPI_CHAR, first, MPI_COMM_WORLD);
    if (first != 0) msg = "rank " + std::to_string(first) + ": " + msg;
    st = worst;
  }
  if (st) throw FileError(msg, st);
}

FileResult replay_file(const std::string& path, const Options& opt, Backend resolved, int rank,
                       int nranks, std::vector<OutputField>* first_outputs) {
  FileResult r;
  r.file = path;
  r.mode = to_string(opt.mode);
  auto t0 = std::chrono::steady_clock::now();
  Patch patch;
  std::unique_ptr<Replay> rp;
  bool locked = false;
  // Opening checks the input; every rank agrees on it before the first collective.
  on_all_ranks([&] {
    if (nranks > 1) {
      NcFile f(path);
      int ni = f.att_int("ite") - f.att_int("its") + 1, nj = f.att_int("jte") - f.att_int("jts") + 1;
      const std::string k = f.att_string_or("kernel", "");
      if (k == "advect_scalar_pd" || k == "advect_scalar") {
        // The stored ite/jte may be the staggered domain end; patches cover mass points.
        ni = std::min(f.att_int("ite"), f.att_int("ide") - 1) - f.att_int("its") + 1;
        nj = std::min(f.att_int("jte"), f.att_int("jde") - 1) - f.att_int("jts") + 1;
      }
      patch = decompose(ni, nj, rank, nranks);
    }
    rp = open_replay(path, patch);
    if (opt.steps > 1 && !rp->set_steps(opt.steps))
      r.note = "--steps applies to positive-definite advection captures; this file is replayed once";
    // (after --steps: a stepped run keeps its tracers pageable, and says so)
    locked = opt.page_locked && rp->set_host_locked(true);
    if (opt.page_locked && !locked)
      r.note = (r.note.empty() ? "" : r.note + "; ") + "--page-locked: this kernel's replay" +
               (opt.steps > 1 ? " with --steps" : "") + " has no page-locked arrays; replayed with pageable ones";
  }, rank, nranks);
  double read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.kernel = rp->kernel();
  r.summary = rp->summary();
  if (nranks > 1) r.summary += ", " + std::to_string(patch.px) + "x" + std::to_string(patch.py) + " patches";
  if (locked) r.summary += ", page-locked arrays";
  r.thr = rp->thresholds(opt.mode);
  if (opt.max_plmv >= 0) { r.thr.plmv_vs_ref = opt.max_plmv; r.thr.basis = "set by --max-plmv"; }
  if (opt.max_plmv_gc >= 0) r.thr.plmv_gpu_cpu = opt.max_plmv_gc;

  std::vector<Backend> order;
  if (resolved == Backend::Both) order = {Backend::Gpu, Backend::Cpu};
  else order = {resolved};

  // An error from here to the references (a kernel's input check on one rank's patch, a
  // device failure) may strand other ranks inside a collective: main stops the job.
  std::vector<std::vector<OutputField>> outs;
  for (Backend b : order) {
    std::vector<PhaseTimes> times;
    std::vector<OutputField> last;
    for (int n = 0; n < opt.repeat; ++n) {
      PhaseTimes t;
      MPI_Barrier(MPI_COMM_WORLD);
      last = rp->run(b, opt.mode, t);
      injected_fault(rank);
      t.read_ms = read_ms;
      // The slowest rank sets the time of a parallel call.
      double v[6] = {t.read_ms, t.h2d_ms, t.kernel_ms, t.d2h_ms, t.total_ms, t.halo_ms};
      MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t = PhaseTimes{v[0], v[1], v[2], v[3], v[4], v[5]};
      times.push_back(t);
    }
    BackendRun br;
    br.backend = to_string(b);
    br.repeats = opt.repeat;
    br.median = median_of(times);
    br.best = *std::min_element(times.begin(), times.end(), [](const PhaseTimes& a, const PhaseTimes& c) {
      return a.total_ms < c.total_ms;
    });
    r.runs.push_back(br);
    outs.push_back(std::move(last));
  }

  // WRF's outputs, all read (and agreed on) before the reductions of the comparison.
  std::vector<std::vector<float>> refs(outs[0].size());
  std::vector<char> has_ref(outs[0].size(), 0);
  on_all_ranks([&] {
    NcFile f(path);
    for (std::size_t n = 0; n < outs[0].size(); ++n) {
      const OutputField& ours = outs[0][n];
      has_ref[n] = !ours.ref_var.empty() && f.has_var(ours.ref_var);
      if (has_ref[n]) refs[n] = read_ref_patch(f, ours);
    }
  }, rank, nranks);

  for (std::size_t n = 0; n < outs[0].size(); ++n) {
    const OutputField& ours = outs[0][n];
    std::size_t ni, nk, nj, nlead;
    field_extent(ours.shape, ours.data.size(), ni, nk, nj, nlead);
    for (std::size_t l = 0; l < nlead; ++l) {
      FieldResult fr;
      fr.name = nlead > 1 ? ours.name + "[" + std::to_string(l) + "]" : ours.name;
      std::size_t off = l * ni * nk * nj;
      const float* x = ours.data.data() + off;
      fr.has_ref = has_ref[n];
      fr.vs_ref = reduced_stats(fr.name, fr.has_ref ? refs[n].data() + off : x, x, ni, nk, nj, ours.level_floor,
                                ours.level_cancel, fr.has_ref ? &fr.mean_ref : nullptr,
                                fr.has_ref ? &fr.mean_ours : nullptr);
      auto fail = [&](const std::string& why) {
        fr.pass = false;
        fr.why += (fr.why.empty() ? "" : "; ") + why;
      };
      if (fr.has_ref) {
        // Written as !(x <= limit) so that a NaN figure fails.
        if (ours.max_abs >= 0) {
          const double limit = ours.max_abs + ours.max_abs_ulps * FLT_EPSILON * fr.vs_ref.max_absref;
          fr.rule = "maxabs<=" + fmt_e(limit, 1);
          fr.checked = true;
          if (!(fr.vs_ref.max_abs <= limit)) fail("max abs difference above " + fmt_e(limit, 1));
        } else if (ours.compare_plmv) {
          fr.rule = "plmv";
          fr.checked = true;
          if (!(fr.vs_ref.plmv <= r.thr.plmv_vs_ref)) fail("plmv above " + fmt_e(r.thr.plmv_vs_ref, 1));
        } else {
          fr.rule = "info only";
        }
        if (fr.vs_ref.nonfinite_ref)
          fail("the WRF reference " + ours.ref_var + " holds " + std::to_string(fr.vs_ref.nonfinite_ref) +
               " non-finite values");
      }
      if (fr.vs_ref.nonfinite) fail("the output holds " + std::to_string(fr.vs_ref.nonfinite) + " non-finite values");
      if (outs.size() > 1) {
        fr.has_other = true;
        fr.checked = true;
        fr.vs_other = reduced_stats(fr.name, outs[1][n].data.data() + off, x, ni, nk, nj, ours.level_floor, ours.level_cancel,
                                    nullptr, nullptr);
        if (!(fr.vs_other.plmv <= r.thr.plmv_gpu_cpu)) fail("GPU vs CPU plmv above " + fmt_e(r.thr.plmv_gpu_cpu, 1));
        if (fr.vs_other.nonfinite_ref)
          fail("the CPU output holds " + std::to_string(fr.vs_other.nonfinite_ref) + " non-finite values");
      }
      r.pass = r.pass && fr.pass;
      r.verified = r.verified || fr.checked;
      r.fields.push_back(fr);
    }
  }
  if (first_outputs) *first_outputs = std::move(outs[0]);
  return r;
}

// Gathers every rank's patch of each output field into the full field on rank 0.
void gather_outputs(std::vector<OutputField>& outs, const NcFile& f, int rank, int nranks) {
  for (auto& o : outs) {
    std::vector<std::size_t> full;
    if (!o.ref_var.empty() && f.has_var(o.ref_var)) full = f.var_shape(o.ref_var);
    else if (!o.dims.empty()) for (auto& dn : o.dims) full.push_back(f.dim_len(dn));
    else continue;
    std::size_t jd = full.size() == 2 ? 0 : full.size() - 3, id = full.size() - 1;
    if (nranks == 1 && o.shape == full) continue;
    if (rank != 0) {
      unsigned long long hdr[4] = {o.off_i, o.off_j, o.shape[id], o.shape[jd]};
      MPI_Send(hdr, 4, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
      MPI_Send(o.data.data(), (int)o.data.size(), MPI_FLOAT, 0, 2, MPI_COMM_WORLD);
      continue;
    }
    std::size_t total = 1;
    for (auto d : full) total *= d;
    std::vector<float> all(total);
    auto place = [&](const std::vector<float>& part, std::size_t oi, std::size_t oj, std::size_t pni,
                     std::size_t pnj) {
      // dims: lead..., j, [k], i
      std::size_t inner = 1;  // size between j and i (the k extent for 3-D)
      for (std::size_t d = jd + 1; d < id; ++d) inner *= full[d];
      std::size_t lead = 1;
      for (std::size_t d = 0; d < jd; ++d) lead *= full[d];
      for (std::size_t l = 0; l < lead; ++l)
        for (std::size_t j = 0; j < pnj; ++j)
          for (std::size_t k = 0; k < inner; ++k)
            for (std::size_t i = 0; i < pni; ++i)
              all[(((l * full[jd]) + oj + j) * inner + k) * full[id] + oi + i] =
                  part[((l * pnj + j) * inner + k) * pni + i];
    };
    place(o.data, o.off_i, o.off_j, o.shape[id], o.shape[jd]);
    for (int src = 1; src < nranks; ++src) {
      unsigned long long hdr[4];
      MPI_Recv(hdr, 4, MPI_UNSIGNED_LONG_LONG, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::size_t cnt = total / (full[id] * full[jd]) * hdr[2] * hdr[3];
      std::vector<float> part(cnt);
      MPI_Recv(part.data(), (int)cnt, MPI_FLOAT, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      place(part, hdr[0], hdr[1], hdr[2], hdr[3]);
    }
    o.data = std::move(all);
    o.shape = full;
    o.off_i = o.off_j = 0;
  }
}

void write_outputs(const std::string& in, const std::string& outpath,
                   const std::vector<OutputField>& outs, const std::string& how) {
  NcFile src(in);
  std::vector<std::string> skip;
  for (auto& o : outs) if (!o.ref_var.empty()) skip.push_back(o.ref_var);
  NcFile dst(outpath, true);
  dst.copy_from(src, skip);
  for (auto& o : outs) {
    if (o.ref_var.empty()) continue;
    // A dimension only WRF's outputs use (e.g. RADM2SORG's ldrog) was not copied above.
    for (auto& d : src.has_var(o.ref_var) ? src.var_dim_names(o.ref_var) : o.dims) dst.def_dim(d, src.dim_len(d));
    if (src.has_var(o.ref_var)) {
      auto dims = src.var_dim_names(o.ref_var);
      dst.def_var(o.ref_var, false, dims, src.att_string_or("units", "", o.ref_var),
                  src.att_string_or("description", "", o.ref_var));
    } else if (!o.dims.empty()) {
      dst.def_var(o.ref_var, false, o.dims, "", o.name + " computed by wrfgpu_replay (no WRF counterpart)");
    } else {
      continue;
    }
    dst.put_float(o.ref_var, o.data);
  }
  dst.put_att("source", "wrfgpu_replay " + std::string(WRFGPU_VERSION) + " (" + how + ")");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    Options opt = parse(argc, argv);
    if (opt.version) {
      if (rank == 0) std::fputs(version_text().c_str(), stdout);
      MPI_Finalize();
      return 0;
    }
    // One GPU per rank: node-local rank modulo the visible devices (or --device).
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    Backend resolved = resolve_backend(opt.backend);
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    std::string line;
    if (resolved == Backend::Gpu || resolved == Backend::Both) {
      int dev = gpu_select(opt.device, local_rank);
      DeviceInfo d = gpu_info(dev);
      char b[512];
      std::snprintf(b, sizeof b, "rank %d on %s: GPU %d %s (cc %d.%d, PCI %s)%s", rank, host, dev,
                    d.name.c_str(), d.cc_major, d.cc_minor, d.pci_bus_id.c_str(),
                    local_size > gpu_count() ? " [shared: more ranks than GPUs on this node]" : "");
      line = b + host_cores_note();
    } else {
      line = "rank " + std::to_string(rank) + " on " + host + ": CPU backend";
    }
    // Every rank reports its binding once; rank 0 prints them in rank order.
    {
      const int L = 512;
      std::vector<char> mine(L, 0), all(rank == 0 ? (std::size_t)L * size : 1, 0);
      std::snprintf(mine.data(), L, "%s", line.c_str());
      MPI_Gather(mine.data(), L, MPI_CHAR, all.data(), L, MPI_CHAR, 0, MPI_COMM_WORLD);
      if (rank == 0 && !opt.quiet)
        for (int r = 0; r < size; ++r) std::printf("wrfgpu_replay: %s\n", all.data() + (std::size_t)r * L);
    }
    if (rank == 0)
      std::printf("wrfgpu_replay: %d rank%s, backend %s, mode %s\n", size, size > 1 ? "s" : "",
                  to_string(resolved), to_string(opt.mode));
    std::vector<FileResult> results;
    bool all_pass = true;
    int file_status = 0;  // the worst of the files: 2 bad input, 1 failed
    for (std::size_t n = 0; n < opt.files.size(); ++n) {
      const std::string& path = opt.files[n];
      std::vector<OutputField> outs;
      FileResult r;
      // Each file's failure is its own: recorded, named, and the next file goes on.
      auto failed = [&](const std::string& what, int st) {
        r = FileResult();
        r.file = path;
        r.error = what.find(path) == std::string::npos ? path + ": " + what : what;
        r.pass = false;
        file_status = std::max(file_status, st);
        if (rank == 0) std::fprintf(stderr, "wrfgpu_replay: %s\n", r.error.c_str());
      };
      auto stranded = [&](const std::exception& e, int st) {
        // Failed on this rank alone, where the others may be inside a collective: stop the
        // job with the message, never hang.
        std::string m = e.what();
        if (m.find(path) == std::string::npos) m = path + ": " + m;
        if (size == 1) return failed(m, st);
        std::fprintf(stderr, "wrfgpu_replay: rank %d: %s\n", rank, m.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, st);
      };
      try {
        r = replay_file(path, opt, resolved, rank, size, opt.write_outputs.empty() ? nullptr : &outs);
      } catch (const FileError& e) {
        failed(e.what(), e.status);  // every rank has it
      } catch (const InputError& e) {
        stranded(e, 2);
      } catch (const std::exception& e) {
        stranded(e, 1);
      }
      if (!opt.write_outputs.empty() && r.error.empty()) {
        NcFile f(path);
        gather_outputs(outs, f, rank, size);
      }
      if (rank != 0) { results.push_back(r); continue; }
      print_file_result(r);
      if (!opt.plot_dir.empty() && r.error.empty()) {
        std::string why;
        if (!write_plots(opt.plot_dir, r, &why)) std::printf("   (no plots: %s)\n", why.c_str());
        else std::printf("   plots written to %s/\n", opt.plot_dir.c_str());
      }
      if (!opt.write_outputs.empty() && r.error.empty()) {
        std::string out = opt.write_outputs;
        if (opt.files.size() > 1) out += "." + std::to_string(n);
        try {
          write_outputs(path, out, outs,
                        std::string(to_string(resolved == Backend::Both ? Backend::Gpu : resolved)) + ", " +
                            to_string(opt.mode));
          std::printf("   outputs written to %s\n", out.c_str());
        } catch (const std::exception& e) {
          std::fprintf(stderr, "wrfgpu_replay: %s: outputs not written: %s\n", path.c_str(), e.what());
          file_status = std::max(file_status, 1);
        }
      }
      all_pass = all_pass && r.pass;
      results.push_back(r);
    }
    if (rank != 0) {
      MPI_Finalize();
      return file_status ? file_status : (all_pass ? 0 : 1);
    }
    if (!opt.report.empty()) {
      try {
        std::string v = version_text();
        write_json(opt.report, results, v.substr(0, v.find('\n')));
        std::printf("\nreport written to %s\n", opt.report.c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wrfgpu_replay: %s\n", e.what());
        file_status = std::max(file_status, 1);
      }
    }
    std::size_t npass = 0, unverified = 0;
    for (auto& r : results) {
      npass += r.pass && r.verified;
      unverified += r.pass && !r.verified;
    }
    std::printf("\nwrfgpu_replay: %zu of %zu files pass", npass, results.size());
    if (unverified) std::printf(", %zu not verified (nothing to compare with)", unverified);
    std::printf("\n");
    // Not verified is not a failure: a large case has no WRF outputs by design.
    status = file_status ? file_status : (all_pass ? 0 : 1);
  } catch (const InputError& e) {
    status = 2;
    std::fprintf(stderr, "wrfgpu_replay: rank %d: %s\n", rank, e.what());
    // Under MPI the other ranks may be waiting in a collective: stop them all, never hang.
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, status);
  } catch (const std::exception& e) {
    status = 1;
    std::fprintf(stderr, "wrfgpu_replay: rank %d: %s\n", rank, e.what());
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
  return status;
}
