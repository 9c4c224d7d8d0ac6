// config.cpp - the settings table and its getters (config.h says the rules).
#include "config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "errors.h"

extern char** environ;

namespace wrfgpu {
namespace config {

namespace {
constexpr Audience U = Audience::User, T = Audience::Tuning, X = Audience::Test;
constexpr Kind F = Kind::Flag, I = Kind::Int, C = Kind::Choice, S = Kind::Text;
constexpr int kMaxInt = 1 << 30;
}  // namespace

const std::vector<Setting>& table() {
  static const std::vector<Setting> t = {
      // --- for users ------------------------------------------------------------------------
      {"WRFGPU_BACKEND", C, "gpu|cpu|auto|both", 0, 0,
       "gpu in the Fortran interfaces (inside WRF, every kernel); auto in the C++ API and the replay", U,
       "library",
       "where the kernels run: gpu (stop with the cause when no GPU can be used), cpu (the CPU "
       "backend, OpenMP), auto (the GPU when one is usable), both (the GPU, and the CPU on copies: "
       "every output compared, a difference stops a strict run)"},
      {"WRFGPU_MODE", C, "strict|fast", 0, 0, "strict", U, "library",
       "strict: bitwise WRF's Fortran (no fast maths, no FMA contraction); fast: fast maths with "
       "IEEE division (docs/performance.md)"},
      {"WRFGPU_TIMING", F, "", 0, 0, "0", U, "library",
       "1: each process prints, at exit, the calls, kernel, copy and wall times of every kernel "
       "WRF called (rsl.error.* under MPI)"},
      {"WRFGPU_RADM2SORG", F, "", 0, 0, "1", U, "WRF patch",
       "0: chem_opt = 106 runs WRF's own KPP code in the same wrf.exe (an A/B run)"},
      {"WRFGPU_WDM5_AS_WSM5", F, "", 0, 0, "0", U, "WRF patch",
       "1: mp_physics = 14 (WDM5) runs as WSM5 in libwrfgpu instead of stopping"},
      {"WRFGPU_ADVECT_CHECK", F, "", 0, 0, "1", U, "library",
       "0: advection skips the NaN/Inf scan of its inputs (benchmarks)"},
      {"WRFGPU_HOST_REGISTER", F, "", 0, 0, "1", U, "WRF patch",
       "0: WRF's grid arrays are not page-locked in place (module_wrfgpu_host), so the hooks copy "
       "them through staging buffers (an A/B run, or a host with a low `ulimit -l`)"},
      // --- for tuning and measurement -------------------------------------------------------
      {"WRFGPU_WSM5_SLABS", I, "", 1, kMaxInt, "computed: about one slab per 32,768 columns", T,
       "library", "WSM5 GPU: slabs of rows per call (copies of one overlap the kernels of another)"},
      {"WRFGPU_WSM5_TEAM", C, "1|2|4|8|16|32", 0, 0, "8", T, "library",
       "WSM5 GPU: lanes per column in the sedimentation (1: one thread per column, the kernels "
       "used past about 3,400 levels)"},
      {"WRFGPU_TRACE", F, "", 0, 0, "0", T, "library",
       "1: every GPU call prints its chunks' timeline (host packing, copies, kernels, "
       "unpacking; WSM5 slabs, advection groups, RADM2SORG chunks), and WSM5 and advection their "
       "set-up and whole call"},
      {"WRFGPU_ADVECT_GROUP", I, "", 1, 16, "computed: about 6 groups, 3 to 16 species each; for the level marches (PD and unlimited) the size of up to 24 (192 MiB of buffers at most) whose launches take the fewest waves", T,
       "library", "advection GPU: species per transfer group"},
      {"WRFGPU_ADVECT_SPT", I, "", 1, 64, "8", T, "library",
       "advection GPU, face-flux kernels (not the level marches): species per thread"},
      {"WRFGPU_ADVECT_PD_KERNEL", C, "march|three", 0, 0,
       "computed: march where 41,000 x its waves x (rows + 4) / 26 < 10,000 + columns x species (its waves: of the "
       "group launches, one block per SM)", T, "library",
       "advection GPU, PD scheme: one level-march kernel or three kernels (measurement)"},
      {"WRFGPU_ADVECT_PD_ROWS", C, "22|28", 0, 0, "computed: the fewer waves x (rows + 4), 22 where equal", T, "library",
       "advection GPU, PD level march: blocks of 32 x 22 or 32 x 28 threads (measurement)"},
      {"WRFGPU_ADVECT_UN_KERNEL", C, "march|two", 0, 0,
       "computed: march where its launches (43 us each, 21 us more per further block of 16 warps on the busiest SM) take less "
       "than the two kernels' groups (16 us each) and 0.6 ns per column and species", T, "library",
       "advection GPU, unlimited scheme: one level-march kernel or two kernels (measurement)"},
      {"WRFGPU_ADVECT_CPU_TILE", S, "WxH or 0", 0, 0, "16x8", T, "library",
       "advection CPU: blocks of W x H columns marching up the levels; 0: the per-cell forms"},
      {"WRFGPU_RADM2SORG_TEAM_WARPS", I, "", 1, 20, "computed: most warps per SM that fit", T,
       "library", "RADM2SORG GPU, warp kernel: warps (cells in flight) per block"},
      {"WRFGPU_RADM2SORG_BATCH", I, "", 1, kMaxInt, "262144", T, "library",
       "RADM2SORG GPU: cells per chunk at most (device scratch)"},
      {"WRFGPU_RADM2SORG_CHUNKS", I, "", 1, 4096,
       "computed: as few as the batch allows; with narrow step counts chunks of at most 1,024 "
       "cells per SM, and two where each takes the lane kernel; with a tail about 1,152 per SM, "
       "each at least 1,024, and for the split kernel chunks of that size at both ends of the call with "
       "chunks of up to the batch between them", T,
       "library", "RADM2SORG GPU: chunks per call (at least the computed count; set, the chunks are equal)"},
      {"WRFGPU_RADM2SORG_ORDER", C, "longest|index", 0, 0, "longest", T, "library",
       "RADM2SORG GPU: cells handed out longest first (by the previous call's step counts) or "
       "in index order"},
      {"WRFGPU_RADM2SORG_SOLVER", C, "warp|lane|split", 0, 0,
       "computed: split for Ros3 in double (WRF's); otherwise lane for chunks of at least 1,024 cells per SM (135,168 on an H100), or 300 when the previous call's longest cell took at most twice the mean steps", T,
       "library", "RADM2SORG GPU: a warp per cell, a lane per cell, or cells split over warps (measurement)"},
      {"WRFGPU_RADM2SORG_VERBOSE", F, "", 0, 0, "0", T, "library",
       "1: RADM2SORG GPU prints its launch shape"},
      // --- for tests and captures -----------------------------------------------------------
      {"WRFGPU_TEST_FAULT", S, "R:fail or R:die", 0, 0, "unset", X, "replay",
       "wrfgpu_replay under MPI: rank R fails after its first kernel call (fail) or exits at once "
       "(die), for tests/driver/mpi_faults.sh"},
      {"WRFGPU_TEST_DATA", S, "folder", 0, 0, "test_data/ of the source tree", X, "tests",
       "where the tests find the captures"},
      {"WRFGPU_WRF_DIR", S, "folder", 0, 0, "unset", X, "tests",
       "a WRF source tree: the KPP generator test also reads its mechanisms"},
      {"WRFGPU_CAPTURE_DIR", S, "folder", 0, 0, ".", X, "capture patch",
       "capture mode: where captures are written"},
      {"WRFGPU_CAPTURE_STEPS", S, "list of steps", 0, 0, "wrf_patch/capture/README.md", X,
       "capture patch", "capture mode: which calls are written"},
      {"WRFGPU_CAPTURE_CASE", S, "name", 0, 0, "wrf_patch/capture/README.md", X, "capture patch",
       "capture mode: the case name written into each capture"},
      {"WRFGPU_CAPTURE_KERNELS", S, "list", 0, 0, "all", X, "capture patch",
       "capture mode: which kernels are captured"},
  };
  return t;
}

const Setting& setting(const char* name) {
  for (const Setting& s : table())
    if (std::strcmp(s.name, name) == 0) return s;
  throw std::logic_error(std::string("wrfgpu config: ") + name + " is not in the settings table");
}

namespace {

// The value of a setting's variable, or nullptr when unset or empty.
const char* raw(const Setting& s) {
  const char* e = std::getenv(s.name);
  return (e && *e) ? e : nullptr;
}

[[noreturn]] void bad(const Setting& s, const char* v, const std::string& expected) {
  throw InputError(std::string(s.name) + "='" + v + "': expected " + expected);
}

}  // namespace

std::optional<bool> flag(const char* name) {
  const Setting& s = setting(name);
  const char* v = raw(s);
  if (!v) return std::nullopt;
  const std::string x(v);
  if (x == "1" || x == "yes" || x == "true" || x == "on") return true;
  if (x == "0" || x == "no" || x == "false" || x == "off") return false;
  bad(s, v, "0 or 1");
}

std::optional<int> integer(const char* name) {
  const Setting& s = setting(name);
  const char* v = raw(s);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < s.min || n > s.max)
    bad(s, v, "a whole number from " + std::to_string(s.min) + " to " + std::to_string(s.max));
  return (int)n;
}

std::optional<std::string> choice(const char* name) {
  const Setting& s = setting(name);
  const char* v = raw(s);
  if (!v) return std::nullopt;
  std::stringstream ch(s.choices);
  std::string c;
  while (std::getline(ch, c, '|'))
    if (c == v) return c;
  std::string list = s.choices;
  for (char& q : list)
    if (q == '|') q = ',';
  bad(s, v, "one of " + list);
}

std::optional<std::string> external(const char* name) {
  static const char* const known[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                      "PMI_RANK", "CUDA_MPS_PIPE_DIRECTORY", "OMP_WAIT_POLICY"};
  bool ok = false;
  for (const char* k : known) ok = ok || std::strcmp(k, name) == 0;
  if (!ok) throw std::logic_error(std::string("wrfgpu config: ") + name + " is not a known outside variable");
  const char* e = std::getenv(name);
  if (!e || !*e) return std::nullopt;
  return std::string(e);
}

std::optional<std::string> text(const char* name) {
  const char* v = raw(setting(name));
  if (!v) return std::nullopt;
  return std::string(v);
}

void warn_unknown_settings() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (char** e = environ; e && *e; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (std::strncmp(*e, "WRFGPU_", 7) != 0 || !eq) continue;
      const std::string name(*e, eq - *e);
      bool known = false;
      for (const Setting& s : table()) known = known || name == s.name;
      if (!known)
        std::fprintf(stderr,
                     "wrfgpu: %s is set but is not a wrfgpu setting: ignored (wrfgpu_replay "
                     "--list-config lists them; docs/configuration.md)\n",
                     name.c_str());
    }
  });
}

namespace {
const char* audience_name(Audience a) {
  return a == Audience::User ? "user" : a == Audience::Tuning ? "tuning" : "test";
}
std::string form(const Setting& s) {
  switch (s.kind) {
    case Kind::Flag: return "0|1";
    case Kind::Int: return std::to_string(s.min) + ".." + (s.max == kMaxInt ? std::string("") : std::to_string(s.max));
    default: return s.choices;
  }
}
}  // namespace

std::string markdown() {
  std::ostringstream o;
  o << "# Configuration\n\n"
       "<!-- Made by `bin/wrfgpu_replay --list-config=markdown > docs/configuration.md` from "
       "src/common/config.cpp, the only place the library reads the environment; "
       "tests/driver/config.sh checks that this file is up to date. -->\n\n"
       "Every run-time setting of wrfgpu is an environment variable in this table. One rule for "
       "all: a value the caller passes explicitly (an Options field, a Fortran argument, a "
       "command-line flag) wins, then the environment, then the default. The library reads the "
       "environment at each call (a program may change a setting between calls). A value that "
       "does not parse or lies outside the range stops the call with exit status 2 and a "
       "message naming the variable and the value; a `WRFGPU_*` variable that is not in the "
       "table is reported once (a typo) and ignored.\n";
  const Audience order[] = {Audience::User, Audience::Tuning, Audience::Test};
  const char* heading[] = {"For users", "For tuning and measurement",
                           "For tests and captures"};
  for (int a = 0; a < 3; ++a) {
    o << "\n## " << heading[a] << "\n\n| variable | values | default | read by | what |\n"
      << "|---|---|---|---|---|\n";
    for (const Setting& s : table())
      if (s.who == order[a]) {
        std::string f = form(s);  // a '|' would split the Markdown cell
        for (std::size_t p; (p = f.find('|')) != std::string::npos;) f.replace(p, 1, ", ");
        o << "| `" << s.name << "` | " << f << " | " << s.dflt << " | " << s.read_by
          << " | " << s.doc << " |\n";
      }
  }
  return o.str();
}

std::string plain_text() {
  std::ostringstream o;
  for (const Setting& s : table())
    o << s.name << "  [" << audience_name(s.who) << ", " << s.read_by << "]  " << form(s)
      << "  default: " << s.dflt << "\n    " << s.doc << "\n";
  return o.str();
}

}  // namespace config
}  // namespace wrfgpu
