// make_large_case - builds a large case (default CONUS 12 km: 425x300x35) from a capture.
//   wrfgpu_make_large_case IN.nc OUT.nc [--size NIxNJxNK] [--nscalar N] [--case NAME]
//                                       [--perturbation A] [--deflate 0|1] [--kernel K]
// --kernel advect_scalar makes a case of the unlimited scheme (RK steps 1 and 2) from an
// advect_scalar_pd capture (the same layout).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include "errors.h"
#include "large_case.h"

namespace {

using wrfgpu::InputError;

// The whole of `v` must be a number: "10abc", "" and "abc" are errors naming the option.
long whole(const std::string& opt, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < lo || n > hi)
    throw InputError(opt + " '" + v + "': expected a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi));
  return n;
}

double number(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(d)) throw InputError(opt + " '" + v + "': expected a number");
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wrfgpu;
  try {
    if (argc < 3) {
      std::puts("usage: wrfgpu_make_large_case IN.nc OUT.nc [--size 425x300x35] [--nscalar N] [--case NAME] [--perturbation A] [--deflate 0|1] [--kernel advect_scalar]");
      return 2;
    }
    LargeCaseSpec spec;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (i + 1 >= argc) throw InputError("option " + a + " needs a value");
      std::string v = argv[++i];
      if (a == "--size") {
        // NIxNJxNK, each a whole number (the memory check in make_large_case bounds the product).
        const std::string want = "--size '" + v + "': expected NIxNJxNK, e.g. 425x300x35 (";
        std::size_t x1 = v.find('x'), x2 = x1 == std::string::npos ? x1 : v.find('x', x1 + 1);
        if (x2 == std::string::npos) throw InputError(want + "three whole numbers)");
        try {
          spec.ni = (int)whole("NI", v.substr(0, x1), 1, 1000000);
          spec.nj = (int)whole("NJ", v.substr(x1 + 1, x2 - x1 - 1), 1, 1000000);
          spec.nk = (int)whole("NK", v.substr(x2 + 1), 2, 100000);
        } catch (const InputError& e) {
          throw InputError(want + e.what() + ")");
        }
      } else if (a == "--nscalar") spec.nscalar = (int)whole(a, v, 0, 100000);
      else if (a == "--case") spec.case_name = v;
      else if (a == "--kernel") spec.kernel = v;
      else if (a == "--perturbation") {
        spec.perturbation = number(a, v);
        if (!(spec.perturbation >= 0 && spec.perturbation < 1))
          throw InputError("--perturbation '" + v + "': expected an amplitude in [0, 1) (1 + A sin cos must stay positive)");
      } else if (a == "--deflate") {
        if (v != "0" && v != "1") throw InputError("--deflate '" + v + "': expected 0 or 1");
        spec.deflate = v == "1";
      }
      else throw InputError("unknown option '" + a + "'");
    }
    make_large_case(argv[1], argv[2], spec);
    std::printf("wrote %s (%dx%dx%d)\n", argv[2], spec.ni, spec.nj, spec.nk);
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "wrfgpu_make_large_case: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "wrfgpu_make_large_case: %s: out of memory; no output written\n", argv[2]);
    return 1;
  } catch (const std::exception& e) {
    // make_large_case has removed its partial output.
    std::fprintf(stderr, "wrfgpu_make_large_case: %s: %s\n", argv[2], e.what());
    return 1;
  }
}
