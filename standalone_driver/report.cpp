#include "report.h"
#include "errors.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace wrfgpu {

std::string fmt_e(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*e", digits, v);
  return b;
}

void print_file_result(const FileResult& r) {
  std::printf("\n== %s\n", r.file.c_str());
  if (!r.error.empty()) {
    std::printf("   ERROR: %s\n   result: FAIL\n", r.error.c_str());
    return;
  }
  std::printf("   kernel %s, %s, mode %s\n", r.kernel.c_str(), r.summary.c_str(), r.mode.c_str());
  if (!r.note.empty()) std::printf("   note: %s\n", r.note.c_str());
  std::printf("   plmv(WRF): per-level mean variance, skipping levels with |WRF mean| <= the field's floor\n"
              "   or a mean that is a cancellation (|mean| < 1e-4 mean|value|, tendencies);\n"
              "   plmv(lit.): every level with a non-zero WRF mean (the literal definition)\n");
  std::printf("   thresholds: per-level mean variance vs WRF <= %.1e, GPU vs CPU <= %.1e (%s)\n",
              r.thr.plmv_vs_ref, r.thr.plmv_gpu_cpu, r.thr.basis.c_str());
  std::printf("   rule vs WRF: plmv = the per-level mean variance threshold above; maxabs<=T = the\n"
              "   largest cell difference (surface fields); info only = no pass/fail; - = no WRF output\n");
  std::printf("   %-14s %11s %11s %11s %11s %6s | %11s %11s | %-15s | %s\n", "field", "plmv(WRF)",
              "plmv(lit.)", "maxabs", "maxrel", "nonfin", "plmv(G-C)", "maxabs(G-C)", "rule vs WRF", "");
  for (auto& f : r.fields) {
    std::printf("   %-14s %11s %11s %11s %11s %6zu | %11s %11s | %-15s | %s\n", f.name.c_str(),
                f.has_ref ? fmt_e(f.vs_ref.plmv).c_str() : "-",
                f.has_ref ? fmt_e(f.vs_ref.plmv_literal).c_str() : "-",
                f.has_ref ? fmt_e(f.vs_ref.max_abs).c_str() : "-",
                f.has_ref ? fmt_e(f.vs_ref.max_rel).c_str() : "-", f.vs_ref.nonfinite,
                f.has_other ? fmt_e(f.vs_other.plmv).c_str() : "-",
                f.has_other ? fmt_e(f.vs_other.max_abs).c_str() : "-",
                f.has_ref ? f.rule.c_str() : "-", !f.pass ? "FAIL" : f.checked ? "ok" : "-");
  }
  for (auto& f : r.fields)
    if (!f.pass && !f.why.empty()) std::printf("   FAIL %s: %s\n", f.name.c_str(), f.why.c_str());
  std::printf("   %-6s %8s %9s %9s %9s %9s %9s  (ms, median of %d)\n", "backend", "read", "H2D",
              "kernel", "D2H", "total", "best", r.runs.empty() ? 0 : r.runs[0].repeats);
  bool halo = false;
  for (auto& b : r.runs) halo = halo || b.median.halo_ms > 0;
  for (auto& b : r.runs) {
    std::printf("   %-6s %8.2f %9.3f %9.3f %9.3f %9.3f %9.3f", b.backend.c_str(), b.median.read_ms,
                b.median.h2d_ms, b.median.kernel_ms, b.median.d2h_ms, b.median.total_ms,
                b.best.total_ms);
    if (halo) std::printf("  (of which MPI halo exchange %.3f)", b.median.halo_ms);
    std::printf("\n");
  }
  // Nothing held to a rule is not a pass: say so (the exit status stays 0).
  std::printf("   result: %s\n", !r.pass ? "FAIL" : r.verified ? "PASS"
              : "NOT VERIFIED (no WRF output to compare with and one backend only; --backend both compares GPU with CPU)");
}

static std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if ((unsigned char)c < 0x20) { o += ' '; continue; }
    o += c;
  }
  return o + "\"";
}
static std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

static void stats_json(std::ostream& o, const FieldStats& s) {
  o << "{\"plmv\": " << jnum(s.plmv) << ", \"plmv_literal\": " << jnum(s.plmv_literal)
    << ", \"max_abs\": " << jnum(s.max_abs)
    << ", \"max_rel\": " << jnum(s.max_rel) << ", \"nonfinite\": " << s.nonfinite
    << ", \"nonfinite_ref\": " << s.nonfinite_ref << ", \"max_absref\": " << jnum(s.max_absref)
    << ", \"levels_used\": " << s.levels_used << ", \"cells\": " << s.cells << "}";
}

void write_json(const std::string& path, const std::vector<FileResult>& results,
                const std::string& version_line) {
  std::ofstream o(path);
  o << "{\n  \"schema\": \"wrfgpu-replay-report-1\",\n  \"version\": " << jstr(version_line)
    << ",\n  \"files\": [\n";
  for (std::size_t n = 0; n < results.size(); ++n) {
    auto& r = results[n];
    o << "    {\"file\": " << jstr(r.file) << ", \"kernel\": " << jstr(r.kernel)
      << ", \"summary\": " << jstr(r.summary) << ", \"mode\": " << jstr(r.mode)
      << ", \"pass\": " << (r.pass ? "true" : "false") << ", \"verified\": " << (r.verified ? "true" : "false")
      << ", \"error\": " << jstr(r.error)
      << ",\n     \"thresholds\": {\"plmv_vs_ref\": " << jnum(r.thr.plmv_vs_ref)
      << ", \"plmv_gpu_cpu\": " << jnum(r.thr.plmv_gpu_cpu) << ", \"basis\": " << jstr(r.thr.basis)
      << "},\n     \"fields\": [";
    for (std::size_t i = 0; i < r.fields.size(); ++i) {
      auto& f = r.fields[i];
      o << (i ? ",\n       " : "\n       ") << "{\"name\": " << jstr(f.name)
        << ", \"pass\": " << (f.pass ? "true" : "false") << ", \"checked\": " << (f.checked ? "true" : "false")
        << ", \"rule\": " << jstr(f.has_ref ? f.rule : "") << ", \"why\": " << jstr(f.why) << ", \"vs_wrf\": ";
      if (f.has_ref) stats_json(o, f.vs_ref); else o << "null";
      o << ", \"gpu_vs_cpu\": ";
      if (f.has_other) stats_json(o, f.vs_other); else o << "null";
      o << "}";
    }
    o << "],\n     \"timing_ms\": [";
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      auto& b = r.runs[i];
      o << (i ? ", " : "") << "{\"backend\": " << jstr(b.backend) << ", \"repeats\": " << b.repeats
        << ", \"read\": " << jnum(b.median.read_ms) << ", \"h2d\": " << jnum(b.median.h2d_ms)
        << ", \"kernel\": " << jnum(b.median.kernel_ms) << ", \"d2h\": " << jnum(b.median.d2h_ms)
        << ", \"halo\": " << jnum(b.median.halo_ms) << ", \"total\": " << jnum(b.median.total_ms) << ", \"best_total\": " << jnum(b.best.total_ms)
        << "}";
    }
    o << "]}" << (n + 1 < results.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  if (!o) throw RuntimeError("cannot write report " + path);
}

bool write_plots(const std::string& dir, const FileResult& r, std::string* why) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    if (why) *why = "gnuplot not found (Debian package gnuplot-nox)";
    return false;
  }
  mkdir(dir.c_str(), 0755);
  std::string base = r.file.substr(r.file.find_last_of('/') + 1);
  base = base.substr(0, base.rfind('.'));
  for (auto& f : r.fields) {
    if (!f.has_ref || f.mean_ref.size() < 2) continue;
    std::string dat = dir + "/" + base + "_" + f.name + ".dat";
    std::string png = dir + "/" + base + "_" + f.name + ".png";
    {
      std::ofstream d(dat);
      for (std::size_t k = 0; k < f.mean_ref.size(); ++k) {
        double rel = f.mean_ref[k] != 0 ? std::fabs((f.mean_ref[k] - f.mean_ours[k]) / f.mean_ref[k]) : 0;
        d << k + 1 << " " << jnum(f.mean_ref[k]) << " " << jnum(f.mean_ours[k]) << " "
          << (rel > 0 ? jnum(rel) : "NaN") << "\n";
      }
    }
    std::ostringstream g;
    g << "set terminal pngcairo size 900,500 noenhanced; set output '" << png << "';"
      << "set multiplot layout 1,2 title '" << base << ": " << f.name << "';"
      << "set ylabel 'model level'; set xlabel 'level mean'; set key bottom right;"
      << "set format x '%.1e'; set xtics rotate by -30;"
      << "plot '" << dat << "' u 2:1 w lp t 'WRF', '' u 3:1 w l lw 2 t 'wrfgpu';"
      << "set logscale x; set format x '%.0e'; set xlabel '|rel. difference of level means|';"
      << "plot '" << dat << "' u 4:1 w lp t 'relative difference';"
      << "unset multiplot";
    std::string cmd = "gnuplot -e \"" + g.str() + "\" 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) {
      // pngcairo may be missing from gnuplot-nox builds; fall back to the png terminal.
      std::string c2 = cmd;
      auto p = c2.find("pngcairo");
      c2.replace(p, 8, "png");
      if (std::system(c2.c_str()) != 0) {
        if (why) *why = "gnuplot failed for " + png;
        return false;
      }
    }
    std::remove(dat.c_str());
  }
  return true;
}

}  // namespace wrfgpu
