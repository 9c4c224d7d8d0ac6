// wrfgpu_bench - measures the device's ceilings, then times every kernel on its benchmark
// cases on the GPU and on the CPU backend (all cores), side by side, in one run.
//
//   wrfgpu_bench [--data DIR] [--work DIR] [--repeat N] [--cpu-repeat N] [--json FILE]
//                [--kernels K,K...] [--quick] [--no-cpu] [--mode M] [--reference K=CMD]...
//
// Each kernel's replay adapter registers its cases (src/<k>/replay/, RegisterBench in replay.h).
// Cases are made from the bundled captures with the large-case tool (mirror tiling) and kept
// in --work (default /tmp/wrfgpu_bench) for the next run. Speed is proven here, never in tests.
//
// --reference K=CMD runs CMD FILE on each of kernel K's case files after the library's rows, on
// the same host in the same run: WRF's own Fortran of the kernel, in a timing harness the user
// builds from WRF (this repository holds no WRF code; docs/performance.md, "RADM2SORG against
// WRF-Chem's own Fortran", names what such a harness does). CMD prints, for each timed call,
// a line `NAME ... cells=N ... ms=T` (NAME the row's backend, e.g. fortran-16proc); the rows
// are the median of each NAME's lines, and the speed-ups are given against them too.
#include <omp.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <mpi.h>
#include "config.h"
#include "ceilings.h"
#include "device.h"
#include "errors.h"
#include "large_case.h"
#include "modes.h"
#include "replay.h"
#include "version.h"

using namespace wrfgpu;

namespace {

std::string find_capture(const std::string& dir, const std::string& pattern) {
  std::vector<std::string> hits;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.find(pattern) != std::string::npos && n.size() > 3 && n.substr(n.size() - 3) == ".nc")
        hits.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(hits.begin(), hits.end());
  return hits.empty() ? "" : hits.back();  // the latest step
}

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

struct Row {
  std::string kernel, label, backend;  // backend as printed: gpu, gpu-pl, cpu, with "-sp" if single
  bool gpu = false, single = false;
  PhaseTimes t;
  WorkCounts w;
  int repeats = 0;
};

// A repeat count: the whole value must be a number ("abc" is an error, not 1).
int count_option(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < 1 || n > 100000)
    throw InputError("option " + opt + " '" + v + "': expected a whole number from 1 to 100000");
  return (int)n;
}

// --kernels: a comma-separated list of the kernels of the registered cases, or their aliases.
std::set<std::string> kernel_option(const std::string& v) {
  std::set<std::string> known, want;
  for (auto& c : bench_cases()) known.insert(c.second.kernel);
  std::stringstream in(v);
  std::string k;
  while (std::getline(in, k, ',')) {
    if (bench_aliases().count(k)) k = bench_aliases()[k];
    if (!known.count(k)) {
      std::string list;
      for (auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw InputError("option --kernels: unknown kernel '" + k + "' (known: " + list + ")");
    }
    want.insert(k);
  }
  if (want.empty()) throw InputError("option --kernels: no kernel named");
  return want;
}

// --reference K=CMD
std::pair<std::string, std::string> reference_option(const std::string& v) {
  const std::size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
    throw InputError("option --reference '" + v + "': expected KERNEL=COMMAND");
  std::string k = v.substr(0, eq);
  if (bench_aliases().count(k)) k = bench_aliases()[k];
  kernel_option(k);  // an unknown kernel is an error here, before minutes of measuring
  return {k, v.substr(eq + 1)};
}

// One reference command's timings of a case: its lines `NAME ... cells=N ... ms=T`, grouped by
// NAME. A command that fails, prints no timing or names another number of cells than the case
// holds is an error naming the command and the file.
std::vector<std::pair<std::string, std::vector<double>>> run_reference(const std::string& cmd,
                                                                       const std::string& file,
                                                                       long cells) {
  std::string q = "'";
  for (char ch : file) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  q += "'";
  const std::string full = cmd + " " + q;
  // The bench's own OpenMP threads wait actively between regions (make bench sets
  // OMP_WAIT_POLICY=active, "Host side" in docs/performance.md says why): they would spin on the
  // cores the command runs on: WRF's Fortran on 16 threads took 2.2 times our CPU backend's
  // time at CONUS warm beside a spinning bench, 1.08 times alone (docs/performance.md,
  // "RADM2SORG against WRF-Chem's own Fortran"). Release them; the next parallel region starts
  // them again.
  if (omp_pause_resource_all(omp_pause_soft) != 0)
    std::printf("wrfgpu_bench: warning: the OpenMP runtime kept its threads; they may slow '%s'\n", full.c_str());
  std::fflush(stdout);
  FILE* p = popen(full.c_str(), "r");
  if (!p) throw RuntimeError("--reference: cannot run '" + full + "': " + std::strerror(errno));
  std::vector<std::pair<std::string, std::vector<double>>> out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    std::fputs(buf, stdout);  // the harness's own report, as printed
    std::stringstream in(buf);
    std::string name, tok;
    double ms = -1;
    long n = -1;
    in >> name;
    while (in >> tok) {
      if (tok.rfind("ms=", 0) == 0) ms = std::strtod(tok.c_str() + 3, nullptr);
      else if (tok.rfind("cells=", 0) == 0) n = std::strtol(tok.c_str() + 6, nullptr, 10);
    }
    if (ms < 0) continue;
    if (n != cells)
      throw RuntimeError("--reference: '" + full + "' timed " + std::to_string(n) + " cells, the case " +
                         file + " has " + std::to_string(cells));
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == name; });
    if (it == out.end()) out.push_back({name, {}}), it = out.end() - 1;
    it->second.push_back(ms);
  }
  const int rc = pclose(p);
  if (rc != 0)
    throw RuntimeError("--reference: '" + full + "' failed (status " + std::to_string(rc) + ")");
  if (out.empty())
    throw RuntimeError("--reference: '" + full + "' printed no line with cells= and ms=");
  return out;
}

PhaseTimes median(std::vector<PhaseTimes> v) {
  std::sort(v.begin(), v.end(), [](const PhaseTimes& a, const PhaseTimes& b) { return a.total_ms < b.total_ms; });
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    std::string data = "test_data", work = "/tmp/wrfgpu_bench", json = "bench.json";
    std::set<std::string> kernels;  // empty: all
    std::map<std::string, std::vector<std::string>> refs;  // --reference: kernel -> commands
    int repeat = 10, cpu_repeat = 3;
    bool quick = false, no_cpu = false;
    Mode mode = Mode::Strict;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto val = [&]() -> std::string {
        if (i + 1 >= argc) throw InputError("option " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--data") data = val();
      else if (a == "--work") work = val();
      else if (a == "--repeat") repeat = count_option(a, val());
      else if (a == "--cpu-repeat") cpu_repeat = count_option(a, val());
      else if (a == "--json") json = val();
      else if (a == "--kernels") kernels = kernel_option(val());
      else if (a == "--mode") mode = parse_mode(val());
      else if (a == "--quick") quick = true;
      else if (a == "--no-cpu") no_cpu = true;
      else if (a == "--reference") {
        auto r = reference_option(val());
        refs[r.first].push_back(r.second);
      }
      else throw InputError("unknown option '" + a + "'");
    }
    // Checked before minutes of measuring: where the cases come from and where the JSON goes.
    struct stat st;
    if (stat(data.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw InputError("--data " + data + ": no such folder (the bundled captures, e.g. test_data)");
    const std::size_t slash = json.find_last_of('/');
    const std::string json_dir = slash == std::string::npos ? "." : slash == 0 ? "/" : json.substr(0, slash);
    if (access(json_dir.c_str(), W_OK) != 0)
      throw InputError("--json " + json + ": cannot write in " + json_dir + ": " + std::strerror(errno));
    mkdir(work.c_str(), 0755);
    std::string why;
    bool gpu = gpu_count(&why) > 0;
    if (!gpu && no_cpu) throw RuntimeError("nothing to measure: --no-cpu and no GPU (" + why + ")");
    Ceilings c;
    // The host side of the GPU calls (packing, checks) runs in OpenMP regions between waits
    // on the GPU: with libgomp's default the idle threads go to sleep, and waking them is
    // slow on some hosts (a virtual machine: the 81-tracer advection call took 85 ms end to
    // end, median of 20, against 18 ms with OMP_WAIT_POLICY=active). make bench sets active.
    const std::string wp = config::external("OMP_WAIT_POLICY").value_or("unset");
    std::printf("wrfgpu_bench %s, mode %s, CPU backend on %d threads, OMP_WAIT_POLICY=%s\n",
                WRFGPU_VERSION, to_string(mode), omp_get_max_threads(), wp.c_str());
    if (gpu) {
      int dev = gpu_select(-1, 0);
      DeviceInfo d = gpu_info(dev);
      std::printf("GPU %d: %s (cc %d.%d, %d SMs, %.1f GiB), %s\n", dev, d.name.c_str(), d.cc_major,
                  d.cc_minor, d.sm_count, d.total_mem / 1073741824.0, cuda_version_string().c_str());
      c = measure_ceilings();
      std::printf("\nmeasured ceilings:\n");
      std::printf("  device copy (read+write) %8.1f GB/s\n", c.d2d_gbs);
      std::printf("  pinned H2D               %8.1f GB/s\n", c.h2d_gbs);
      std::printf("  pinned D2H               %8.1f GB/s\n", c.d2h_gbs);
      std::printf("  FP32 FMA                 %8.1f GFLOP/s\n", c.fp32_gflops);
      std::printf("  FP64 FMA                 %8.1f GFLOP/s\n", c.fp64_gflops);
    } else {
      std::printf("no GPU (%s): CPU backend only\n", why.c_str());
    }

    std::vector<Row> rows;
    for (const auto& kc : bench_cases()) {
      const BenchCase& cd = kc.second;
      if (!kernels.empty() && !kernels.count(cd.kernel)) continue;
      if (quick && cd.ni > 200) continue;
      std::string cap = find_capture(data, cd.pattern);
      if (cap.empty()) {
        std::printf("\n[%s %s] skipped: no capture matching '%s' in %s\n", cd.kernel.c_str(),
                    cd.label.c_str(), cd.pattern.c_str(), data.c_str());
        continue;
      }
      try {
      std::string file = cap;
      if (cd.ni > 0) {
        file = work + "/" + cd.pattern + "_" + cd.kernel + "_" + std::to_string(cd.ni) + "x" + std::to_string(cd.nj) +
               "x" + std::to_string(cd.nk) + (cd.nscalar ? "_n" + std::to_string(cd.nscalar) : "") + ".nc";
        if (!exists(file)) {
          LargeCaseSpec s;
          s.ni = cd.ni; s.nj = cd.nj; s.nk = cd.nk; s.nscalar = cd.nscalar;
          s.kernel = cd.kernel;  // e.g. the unlimited scheme's case from a PD capture
          std::printf("\nmaking %s from %s ...\n", file.c_str(), cap.c_str());
          make_large_case(cap, file, s);
          // Wait for the new file's pages to reach the disk: the kernel's background
          // write-back of hundreds of MB otherwise competes with the timed calls' host side
          // for memory bandwidth and cores (measured on an H100 host: the 81-tracer advection
          // call took 64 ms end to end right after its case was made, 16 ms on a second run).
          ::sync();
        }
      }
      auto rp = open_replay(file);
      std::printf("\n[%s %s] %s\n", cd.kernel.c_str(), cd.label.c_str(), rp->summary().c_str());
      std::fflush(stdout);
      // GPU with the caller's arrays pageable (as WRF's are: the backend packs them into
      // pinned buffers), GPU with them page-locked (where the kernel has that path), CPU;
      // where the kernel computes in double, each of them again in single precision.
      const bool has_single = rp->set_single(false);
      for (int prec = 0; prec < (has_single ? 2 : 1); ++prec)
      for (int variant = 0; variant < 5; ++variant) {
        // 0 gpu, 1 gpu-pl, 2 cpu, 3 gpu-wrf (through the WRF-array entry point, double only),
        // 4 gpu-mix (page-locked as inside WRF with wrf_patch: solve_em's automatic arrays not)
        const Backend b = variant == 2 ? Backend::Cpu : Backend::Gpu;
        if (b == Backend::Gpu && !gpu) continue;
        if (b == Backend::Cpu && no_cpu) continue;
        const bool locked = variant == 1 || variant == 4;
        if (!rp->set_host_locked(locked) && locked) continue;
        if (variant == 3 && (prec == 1 || !rp->set_wrf_arrays(true))) continue;
        if (variant == 4 && (prec == 1 || !rp->set_wrf_mix(true))) { rp->set_host_locked(false); continue; }
        rp->set_single(prec == 1);
        int n = b == Backend::Gpu ? repeat : cpu_repeat;
        std::vector<PhaseTimes> ts;
        PhaseTimes warm;
        if (b == Backend::Gpu) rp->run(b, mode, warm);  // warm-up: device allocation, module load
        // Long calls (a cold CONUS chemistry call takes 1.5 minutes on the CPU) stop repeating
        // once a row has taken 60 s, after at least 3 GPU calls or 1 CPU call: the median of
        // what ran is reported, with the count ("repeats" in the JSON).
        double spent_ms = 0;
        for (int r = 0; r < n; ++r) {
          if (spent_ms > 60e3 && r >= (b == Backend::Gpu ? 3 : 1)) break;
          PhaseTimes t;
          rp->run(b, mode, t);
          ts.push_back(t);
          spent_ms += t.total_ms;
        }
        n = (int)ts.size();
        rp->set_host_locked(false);
        rp->set_wrf_mix(false);
        rp->set_single(false);
        rp->set_wrf_arrays(false);
        const std::string be = std::string(variant == 1 ? "gpu-pl" : variant == 3 ? "gpu-wrf"
                                           : variant == 4 ? "gpu-mix" : to_string(b)) +
                               (prec ? "-sp" : "");
        Row row{cd.kernel, cd.label, be, b == Backend::Gpu, prec == 1, median(ts), rp->work(), n};
        rows.push_back(row);
      }
      // WRF's own code on the same case file, after the library's rows (--reference).
      if (refs.count(cd.kernel))
        for (const std::string& cmd : refs[cd.kernel]) {
          const WorkCounts w = rp->work();
          for (auto& named : run_reference(cmd, file, (long)w.cells)) {
            std::vector<PhaseTimes> ts;
            for (double ms : named.second) {
              PhaseTimes t;
              t.kernel_ms = t.total_ms = ms;
              ts.push_back(t);
            }
            rows.push_back(Row{cd.kernel, cd.label, named.first, false, false, median(ts), w, (int)ts.size()});
          }
        }
      } catch (const std::exception& e) {
        // One case that cannot run does not hide the others.
        std::printf("\n[%s %s] FAILED: %s\n", cd.kernel.c_str(), cd.label.c_str(), e.what());
        status = 1;
      }
    }

    if (rows.empty()) throw RuntimeError("nothing was measured (every case was skipped or failed); no JSON written");
    std::printf("\n%-16s %-34s %-7s %9s %8s %8s %7s %9s %8s %6s %9s %6s %8s %8s\n", "kernel", "case", "be",
                "kernel", "H2D", "D2H", "check", "end2end", "xfer", "e2e/x", "GB/s", "%bw", "GFLOP/s",
                "Mcell/s");
    for (auto& r : rows) {
      const bool g = r.gpu;
      // Pure transfer time, for the kernels that time their copies apart from the kernels
      // (RADM2SORG's copies are inside its timed call: no e2e/x for it).
      const bool timed_copies = r.t.h2d_ms > 0 || r.t.d2h_ms > 0;
      double xfer = g && timed_copies && c.h2d_gbs > 0
                        ? r.w.h2d_bytes / (c.h2d_gbs * 1e6) + r.w.d2h_bytes / (c.d2h_gbs * 1e6) : 0;
      double t_k = g ? r.t.kernel_ms : r.t.total_ms;
      double gbs = t_k > 0 ? r.w.dev_bytes / (t_k * 1e6) : 0;
      double gfl = t_k > 0 ? r.w.flops / (t_k * 1e6) : 0;
      std::printf("%-16s %-34s %-7s %9.3f %8.3f %8.3f %7.3f %9.3f %8.3f %6.2f %9.1f %6.1f %8.1f",
                  r.kernel.c_str(), r.label.c_str(), r.backend.c_str(), r.t.kernel_ms, r.t.h2d_ms,
                  r.t.d2h_ms, r.t.check_ms, r.t.total_ms, xfer, xfer > 0 ? r.t.total_ms / xfer : 0.0, gbs,
                  g && c.d2d_gbs > 0 ? 100 * gbs / c.d2d_gbs : 0.0, gfl);
      if (r.w.cells > 0 && r.t.total_ms > 0) std::printf(" %8.2f\n", r.w.cells / (r.t.total_ms * 1e3));
      else std::printf(" %8s\n", "-");
    }
    std::printf("(ms, median; gpu: the caller's arrays pageable, as WRF's; gpu-pl: page-locked, copied\n"
                " straight to and from them; kernel = GPU kernels only (CPU: whole call); check = input checks\n"
                " (NaN/Inf, positivity) on the host, and WSM5's and advection's on the GPU with page-locked arrays, part of end2end\n"
                " where reported (advection, and WSM5 with pageable arrays, check the 3-D inputs as they pack\n"
                " them, which this column leaves out); xfer = pure transfer time of the\n"
                " call's bytes at the measured pinned rates; GB/s = minimum device-memory bytes / kernel time;\n"
                " %%bw against the measured device copy rate; -sp: single precision where the kernel computes in\n"
                " double; gpu-wrf: through the WRF-array entry point the Fortran bridge calls (end2end times the\n"
                " whole call); gpu-mix: page-locked as inside WRF with wrf_patch (WSM5: th, pii, p, dz\n"
                " pageable, the rest page-locked); Mcell/s = million grid cells per second of end2end;\n"
                " radm2sorg_kpp gpu: the warps take the cells longest first by the step counts of the previous call\n"
                " on the same cells, the warm-up's for the first repeat, as WRF's previous chemistry step gives them)\n");
    // speedups
    for (auto& r : rows)
      if (r.gpu)
        for (auto& q : rows)
          if (q.kernel == r.kernel && q.label == r.label && !q.gpu && q.single == r.single)
            std::printf("speed-up %s %s (%s): GPU end-to-end %.2fx, GPU kernel %.2fx over %s\n",
                        r.kernel.c_str(), r.label.c_str(), r.backend.c_str(), q.t.total_ms / r.t.total_ms,
                        q.t.total_ms / r.t.kernel_ms,
                        q.backend == "cpu" ? "the CPU backend" : q.backend.c_str());

    std::ofstream o(json);
    o << "{\"schema\": \"wrfgpu-bench-1\", \"version\": \"" << WRFGPU_VERSION << "\", \"mode\": \""
      << to_string(mode) << "\", \"cpu_threads\": " << omp_get_max_threads()
      << ", \"omp_wait_policy\": \"" << wp << "\""
      << ",\n \"ceilings\": {\"d2d_gbs\": " << c.d2d_gbs << ", \"h2d_gbs\": " << c.h2d_gbs
      << ", \"d2h_gbs\": " << c.d2h_gbs << ", \"fp32_gflops\": " << c.fp32_gflops
      << ", \"fp64_gflops\": " << c.fp64_gflops << "},\n \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto& r = rows[i];
      o << (i ? ",\n  " : "\n  ") << "{\"kernel\": \"" << r.kernel << "\", \"case\": \"" << r.label
        << "\", \"backend\": \"" << r.backend << "\", \"repeats\": " << r.repeats
        << ", \"kernel_ms\": " << r.t.kernel_ms << ", \"h2d_ms\": " << r.t.h2d_ms
        << ", \"d2h_ms\": " << r.t.d2h_ms << ", \"check_ms\": " << r.t.check_ms
        << ", \"total_ms\": " << r.t.total_ms
        << ", \"h2d_bytes\": " << r.w.h2d_bytes << ", \"d2h_bytes\": " << r.w.d2h_bytes
        << ", \"dev_bytes\": " << r.w.dev_bytes << ", \"flops\": " << r.w.flops
        << ", \"cells\": " << r.w.cells << "}";
    }
    o << "\n ]}\n";
    o.close();
    if (!o) throw RuntimeError("--json " + json + ": cannot write the file");
    std::printf("\nJSON written to %s\n", json.c_str());
  } catch (const InputError& e) {
    std::fprintf(stderr, "wrfgpu_bench: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrfgpu_bench: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
