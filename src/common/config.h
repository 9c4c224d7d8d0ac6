// config.h - every run-time setting of wrfgpu, in one table, and the only code of the library
// that reads the environment.
//
// Rules, the same for every setting:
// - Precedence: a value the caller sets explicitly (an Options field, a Fortran argument, a
//   command-line flag) wins; else the environment variable; else the default in the table.
//   The getters below return std::nullopt for an unset or empty variable, so the caller's
//   `value_or(default)` is the last step.
// - Reading: the environment is read at each call of a getter, never cached, so that a
//   program may change a setting between two calls of the library (tests do).
// - Bad values: a set variable whose value does not parse, or lies outside the table's range
//   or choices, throws InputError naming the variable and the value (exit status 2).
// - Unknown names: a WRFGPU_* variable in the environment that the table lacks (a typo) is
//   reported once per process, on stderr, by warn_unknown_settings().
// `wrfgpu_replay --list-config` prints the table; docs/configuration.md is made from it
// (tests/driver/config.sh checks that the two agree).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace wrfgpu {
namespace config {

enum class Kind { Flag, Int, Choice, Text };
// Who a setting is for: users of WRF and the replay driver; performance tuning and
// measurement; the test suite and the capture patches.
enum class Audience { User, Tuning, Test };

struct Setting {
  const char* name;     // the environment variable
  Kind kind;
  const char* choices;  // Choice: "a|b|c"; Text: the form, e.g. "WxH"; else ""
  int min, max;         // Int: the accepted range
  const char* dflt;     // the default, as text (what happens when unset)
  Audience who;
  const char* read_by;  // "library", "WRF patch", "capture patch", "replay", "tests"
  const char* doc;      // one line
};

const std::vector<Setting>& table();
const Setting& setting(const char* name);  // std::logic_error for a name not in the table

std::optional<bool> flag(const char* name);            // 0/1 (also no/yes, false/true, off/on)
std::optional<int> integer(const char* name);          // within [min, max]
std::optional<std::string> choice(const char* name);   // one of the table's choices
std::optional<std::string> text(const char* name);     // as given

// Variables other software sets that the library looks at (read only, never settings of
// ours): OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_SIZE, PMI_RANK (MPI launchers: which rank
// prints), CUDA_MPS_PIPE_DIRECTORY (the user means CUDA MPS), OMP_WAIT_POLICY (the benchmark
// reports it). std::logic_error for any other name.
std::optional<std::string> external(const char* name);

// One line per WRFGPU_* variable of the environment that the table lacks, once per process.
void warn_unknown_settings();

// The table as a Markdown document (docs/configuration.md) and as plain text (--list-config).
std::string markdown();
std::string plain_text();

}  // namespace config
}  // namespace wrfgpu
