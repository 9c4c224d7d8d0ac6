// report.h - the driver's verification and timing tables, JSON report and profile plots.
#pragma once
#include <string>
#include <vector>
#include "replay.h"
#include "verify.h"

namespace wrfgpu {

struct FieldResult {
  std::string name;
  bool has_ref = false, has_other = false;
  FieldStats vs_ref;     // ours (first backend) against WRF's output in the capture
  FieldStats vs_other;   // GPU against CPU when both ran
  bool pass = true;
  bool checked = false;  // a pass/fail rule was applied (else the row is information only)
  std::string rule;      // the rule against WRF, as printed, e.g. "plmv<=1.2e-05"
  std::string why;       // why it failed, when that is not a figure of the table
  std::vector<double> mean_ref, mean_ours;  // per-level means, for plots
};

struct BackendRun {
  std::string backend;   // "cpu" or "gpu"
  PhaseTimes median;     // median over --repeat runs
  PhaseTimes best;
  int repeats = 0;
};

struct FileResult {
  std::string file, kernel, summary, mode;
  Thresholds thr;
  std::vector<FieldResult> fields;
  std::vector<BackendRun> runs;
  bool pass = true;
  bool verified = false; // at least one field was held to a rule (else NOT VERIFIED)
  std::string error;     // non-empty when the file could not be replayed
  std::string note;      // printed under the summary when non-empty
};

// v in %.<digits>e, e.g. fmt_e(1e-5, 1) = "1.0e-05" (the report's figures, the pass rules).
std::string fmt_e(double v, int digits = 3);
void print_file_result(const FileResult& r);
void write_json(const std::string& path, const std::vector<FileResult>& results,
                const std::string& version_line);
// Per field: per-level means of WRF and ours, and the relative error per level, as PNG.
// Returns false (with the reason in *why) when gnuplot is not there.
bool write_plots(const std::string& dir, const FileResult& r, std::string* why);

}  // namespace wrfgpu
