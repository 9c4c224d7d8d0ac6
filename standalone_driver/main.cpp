// wrfgpu_replay - replays calls captured from WRF through wrfgpu's kernels and says how
// closely they reproduce WRF's own outputs (per-level mean variance, max per-cell errors),
// how the GPU and CPU backends agree, and how long every phase took.
//
//   wrfgpu_replay FILE... [--backend gpu|cpu|both|auto] [--mode strict|fast] [--repeat N]
//                 [--report out.json] [--plot DIR] [--write-outputs FILE] [--device N]
//                 [--max-plmv X] [--max-plmv-gpu-cpu X] [--version]
//
// Exit status: 0 all files pass; 1 a threshold exceeded or the run failed; 2 bad input.
#include <mpi.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "capture_io.h"
#include "device.h"
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
  int repeat = 1, device = -1;
  std::string report, plot_dir, write_outputs;
  double max_plmv = -1, max_plmv_gc = -1;
  bool version = false;
};

void usage() {
  std::puts(
      "usage: wrfgpu_replay FILE... [--backend gpu|cpu|both|auto] [--mode strict|fast]\n"
      "                     [--repeat N] [--report out.json] [--plot DIR] [--write-outputs FILE]\n"
      "                     [--device N] [--max-plmv X] [--max-plmv-gpu-cpu X] [--version]\n"
      "Replays wrfgpu capture files (format 1) and compares with WRF's recorded outputs.\n"
      "Backend default: WRFGPU_BACKEND, else auto (the GPU when one is visible).\n"
      "Exit status: 0 pass, 1 threshold exceeded or run failed, 2 bad input.");
}

Options parse(int argc, char** argv) {
  Options o;
  o.backend = backend_from_env(Backend::Auto);
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend") o.backend = parse_backend(need(i));
    else if (a == "--mode") o.mode = parse_mode(need(i));
    else if (a == "--repeat") {
      double r = num(a, need(i));
      if (r < 1 || r != std::floor(r)) throw InputError("--repeat needs a whole number >= 1");
      o.repeat = (int)r;
    } else if (a == "--report") o.report = need(i);
    else if (a == "--plot") o.plot_dir = need(i);
    else if (a == "--write-outputs") o.write_outputs = need(i);
    else if (a == "--device") o.device = (int)num(a, need(i));
    else if (a == "--max-plmv") o.max_plmv = num(a, need(i));
    else if (a == "--max-plmv-gpu-cpu") o.max_plmv_gc = num(a, need(i));
    else if (a == "--version") o.version = true;
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
  return m;
}

// ni, nk, nj of a field in capture order: (..., south_north, bottom_top, west_east) or 2-D.
void field_extent(const OutputField& f, std::size_t& ni, std::size_t& nk, std::size_t& nj,
                  std::size_t& nlead) {
  const auto& s = f.shape;
  nlead = 1;
  if (s.size() == 2) { nj = s[0]; nk = 1; ni = s[1]; return; }
  if (s.size() >= 3) {
    nj = s[s.size() - 3]; nk = s[s.size() - 2]; ni = s[s.size() - 1];
    for (std::size_t d = 0; d + 3 < s.size(); ++d) nlead *= s[d];
    return;
  }
  ni = f.data.size(); nk = 1; nj = 1;
}

FileResult replay_file(const std::string& path, const Options& opt, Backend resolved,
                       std::vector<OutputField>* first_outputs) {
  FileResult r;
  r.file = path;
  r.mode = to_string(opt.mode);
  auto t0 = std::chrono::steady_clock::now();
  auto rp = open_replay(path);
  double read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.kernel = rp->kernel();
  r.summary = rp->summary();
  r.thr = rp->thresholds(opt.mode);
  if (opt.max_plmv >= 0) { r.thr.plmv_vs_ref = opt.max_plmv; r.thr.basis = "set by --max-plmv"; }
  if (opt.max_plmv_gc >= 0) r.thr.plmv_gpu_cpu = opt.max_plmv_gc;

  std::vector<Backend> order;
  if (resolved == Backend::Both) order = {Backend::Gpu, Backend::Cpu};
  else order = {resolved};

  std::vector<std::vector<OutputField>> outs;
  for (Backend b : order) {
    std::vector<PhaseTimes> times;
    std::vector<OutputField> last;
    for (int n = 0; n < opt.repeat; ++n) {
      PhaseTimes t;
      last = rp->run(b, opt.mode, t);
      t.read_ms = read_ms;
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

  NcFile f(path);
  for (std::size_t n = 0; n < outs[0].size(); ++n) {
    const OutputField& ours = outs[0][n];
    std::size_t ni, nk, nj, nlead;
    field_extent(ours, ni, nk, nj, nlead);
    std::vector<float> ref;
    bool has_ref = !ours.ref_var.empty() && f.has_var(ours.ref_var);
    if (has_ref) ref = f.read_float(ours.ref_var, ours.shape);
    for (std::size_t l = 0; l < nlead; ++l) {
      FieldResult fr;
      fr.name = nlead > 1 ? ours.name + "[" + std::to_string(l) + "]" : ours.name;
      std::size_t off = l * ni * nk * nj;
      const float* x = ours.data.data() + off;
      if (has_ref) {
        fr.has_ref = true;
        fr.vs_ref = compare_field(fr.name, ref.data() + off, x, ni, nk, nj);
        for (std::size_t k = 0; k < nk; ++k) {
          double a = 0, b = 0;
          for (std::size_t j = 0; j < nj; ++j)
            for (std::size_t i = 0; i < ni; ++i) {
              std::size_t c = off + i + ni * (k + nk * j);
              a += ref[c];
              b += ours.data[c];
            }
          fr.mean_ref.push_back(a / (ni * nj));
          fr.mean_ours.push_back(b / (ni * nj));
        }
        if (ours.compare_plmv && fr.vs_ref.plmv > r.thr.plmv_vs_ref) fr.pass = false;
      } else {
        fr.vs_ref = compare_field(fr.name, x, x, ni, nk, nj);  // counts non-finite values
      }
      if (fr.vs_ref.nonfinite) fr.pass = false;
      if (outs.size() > 1) {
        fr.has_other = true;
        fr.vs_other = compare_field(fr.name, outs[1][n].data.data() + off, x, ni, nk, nj);
        if (fr.vs_other.plmv > r.thr.plmv_gpu_cpu || fr.vs_other.nonfinite) fr.pass = false;
      }
      r.pass = r.pass && fr.pass;
      r.fields.push_back(fr);
    }
  }
  if (first_outputs) *first_outputs = std::move(outs[0]);
  return r;
}

void write_outputs(const std::string& in, const std::string& outpath,
                   const std::vector<OutputField>& outs, const std::string& how) {
  NcFile src(in);
  std::vector<std::string> skip;
  for (auto& o : outs) if (!o.ref_var.empty()) skip.push_back(o.ref_var);
  NcFile dst(outpath, true);
  dst.copy_from(src, skip);
  NcFile* d = &dst;
  for (auto& o : outs) {
    if (o.ref_var.empty()) continue;
    auto dims = src.has_var(o.ref_var) ? src.var_dim_names(o.ref_var) : std::vector<std::string>{};
    if (dims.empty()) continue;
    std::string units = src.att_string_or("units", "", o.ref_var);
    std::string desc = src.att_string_or("description", "", o.ref_var);
    d->def_var(o.ref_var, false, dims, units, desc);
    d->put_float(o.ref_var, o.data);
  }
  d->put_att("source", "wrfgpu_replay " + std::string(WRFGPU_VERSION) + " (" + how + ")");
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
    if (size > 1)
      throw RuntimeError("wrfgpu_replay: multi-rank replay (domain decomposition) is not implemented yet; run with one rank");
    Backend resolved = resolve_backend(opt.backend);
    if (resolved == Backend::Gpu || resolved == Backend::Both) {
      int dev = gpu_select(opt.device, rank);
      DeviceInfo d = gpu_info(dev);
      std::printf("wrfgpu_replay: GPU %d %s (cc %d.%d, PCI %s), backend %s, mode %s\n", dev,
                  d.name.c_str(), d.cc_major, d.cc_minor, d.pci_bus_id.c_str(), to_string(resolved),
                  to_string(opt.mode));
    } else {
      std::printf("wrfgpu_replay: backend cpu, mode %s\n", to_string(opt.mode));
    }
    std::vector<FileResult> results;
    bool all_pass = true;
    bool input_error = false;
    for (std::size_t n = 0; n < opt.files.size(); ++n) {
      std::vector<OutputField> outs;
      FileResult r;
      try {
        r = replay_file(opt.files[n], opt, resolved, opt.write_outputs.empty() ? nullptr : &outs);
      } catch (const InputError& e) {
        r.file = opt.files[n];
        r.error = e.what();
        r.pass = false;
        input_error = true;
        std::fprintf(stderr, "wrfgpu_replay: %s\n", e.what());
      }
      print_file_result(r);
      if (!opt.plot_dir.empty() && r.error.empty()) {
        std::string why;
        if (!write_plots(opt.plot_dir, r, &why)) std::printf("   (no plots: %s)\n", why.c_str());
        else std::printf("   plots written to %s/\n", opt.plot_dir.c_str());
      }
      if (!opt.write_outputs.empty() && r.error.empty()) {
        std::string out = opt.write_outputs;
        if (opt.files.size() > 1) out += "." + std::to_string(n);
        write_outputs(opt.files[n], out, outs,
                      std::string(to_string(resolved == Backend::Both ? Backend::Gpu : resolved)) + ", " +
                          to_string(opt.mode));
        std::printf("   outputs written to %s\n", out.c_str());
      }
      all_pass = all_pass && r.pass;
      results.push_back(r);
    }
    if (!opt.report.empty()) {
      std::string v = version_text();
      write_json(opt.report, results, v.substr(0, v.find('\n')));
      std::printf("\nreport written to %s\n", opt.report.c_str());
    }
    std::size_t npass = 0;
    for (auto& r : results) npass += r.pass;
    std::printf("\nwrfgpu_replay: %zu of %zu files pass\n", npass, results.size());
    status = input_error ? 2 : (all_pass ? 0 : 1);
  } catch (const InputError& e) {
    std::fprintf(stderr, "wrfgpu_replay: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrfgpu_replay: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
