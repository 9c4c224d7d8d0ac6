// make_large_case - builds a large case (default CONUS 12 km: 425x300x35) from a capture.
//   wrfgpu_make_large_case IN.nc OUT.nc [--size NIxNJxNK] [--nscalar N] [--case NAME]
//                                       [--perturbation A] [--deflate 0|1]
#include <cstdio>
#include <cstdlib>
#include <string>
#include "errors.h"
#include "large_case.h"

int main(int argc, char** argv) {
  using namespace wrfgpu;
  try {
    if (argc < 3) {
      std::puts("usage: wrfgpu_make_large_case IN.nc OUT.nc [--size 425x300x35] [--nscalar N] [--case NAME] [--perturbation A] [--deflate 0|1]");
      return 2;
    }
    LargeCaseSpec spec;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (i + 1 >= argc) throw InputError("option " + a + " needs a value");
      std::string v = argv[++i];
      if (a == "--size") {
        if (std::sscanf(v.c_str(), "%dx%dx%d", &spec.ni, &spec.nj, &spec.nk) != 3)
          throw InputError("--size '" + v + "': expected NIxNJxNK, e.g. 425x300x35");
      } else if (a == "--nscalar") spec.nscalar = std::atoi(v.c_str());
      else if (a == "--case") spec.case_name = v;
      else if (a == "--perturbation") spec.perturbation = std::atof(v.c_str());
      else if (a == "--deflate") {
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrfgpu_make_large_case: %s\n", e.what());
    return 1;
  }
}
