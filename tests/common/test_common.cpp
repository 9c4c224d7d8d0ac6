// Tests of the shared layer: backend/mode parsing, the verification figures, capture I/O.
#include <sched.h>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "both.h"
#include "capture_io.h"
#include "device.h"
#include "errors.h"
#include "host_cores.h"
#include "modes.h"
#include "stream_copy.h"
#include "test_util.h"
#include "verify.h"
#include "wrf_dims.h"
#include <cstdlib>

using namespace wrfgpu;

TEST(Modes, ParseKnownAndRejectUnknown) {
  EXPECT_EQ(parse_backend("cpu"), Backend::Cpu);
  EXPECT_EQ(parse_backend("gpu"), Backend::Gpu);
  EXPECT_EQ(parse_backend("both"), Backend::Both);
  EXPECT_EQ(parse_backend("auto"), Backend::Auto);
  EXPECT_EQ(parse_mode("fast"), Mode::Fast);
  try {
    parse_backend("tpu");
    FAIL() << "no error for an unknown backend";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_mode("ieee"), InputError);
}

// WRFGPU_BACKEND is how a WRF run picks the backend (the Fortran bridges read it).
TEST(Modes, BackendFromEnvironment) {
  const char* old = std::getenv("WRFGPU_BACKEND");
  const std::string saved = old ? old : "";
  unsetenv("WRFGPU_BACKEND");
  EXPECT_EQ(backend_from_env(Backend::Gpu), Backend::Gpu);  // unset: the caller's default
  setenv("WRFGPU_BACKEND", "", 1);
  EXPECT_EQ(backend_from_env(Backend::Auto), Backend::Auto);  // empty: the same
  setenv("WRFGPU_BACKEND", "cpu", 1);
  EXPECT_EQ(backend_from_env(Backend::Gpu), Backend::Cpu);
  setenv("WRFGPU_BACKEND", "both", 1);
  EXPECT_EQ(backend_from_env(Backend::Cpu), Backend::Both);
  setenv("WRFGPU_BACKEND", "GPU0", 1);
  try {
    backend_from_env(Backend::Cpu);
    ADD_FAILURE() << "no error for WRFGPU_BACKEND=GPU0";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("WRFGPU_BACKEND"), std::string::npos) << m;
    EXPECT_NE(m.find("GPU0"), std::string::npos) << m;
  }
  if (old) setenv("WRFGPU_BACKEND", saved.c_str(), 1);
  else unsetenv("WRFGPU_BACKEND");
}

TEST(Modes, GpuRequestWithoutGpuIsAnErrorNotACpuRun) {
  std::string why;
  if (gpu_count(&why) > 0) GTEST_SKIP() << "a GPU is visible here";
  EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Cpu);
  EXPECT_EQ(resolve_backend(Backend::Cpu), Backend::Cpu);
  try {
    resolve_backend(Backend::Gpu);
    FAIL() << "asking for the GPU without one must fail";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_backend(Backend::Both), RuntimeError);
}

TEST(Modes, GpuVisibleResolvesAutoToGpu) {
  WRFGPU_REQUIRE_GPU();
  EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Gpu);
  int id = gpu_select(-1, 0);
  DeviceInfo d = gpu_info(id);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_FALSE(d.name.empty());
}

// Backend::Both's comparison (both.h), on outputs made here: a one-ulp difference in one
// value is outside a bitwise limit and inside a 1e-6 one; a 1% difference of a whole level is
// outside 1e-6; the message names the output and its first differing value.
TEST(Both, ComparisonHoldsEachOutputToItsLimit) {
  auto output = [](const char* name, double limit) {
    BothOutput o;
    o.name = name;
    o.ni = 4; o.nk = 3; o.nj = 2;
    for (int x = 0; x < 24; ++x) o.cpu.push_back(1.0f + 0.125f * (float)x);
    o.gpu = o.cpu;
    o.plmv_limit = limit;
    o.where = [](std::size_t x) { return "index " + std::to_string(x); };
    return o;
  };
  BothOutput same = output("same", 0);
  BothOutput ulp = output("ulp", 0);
  ulp.gpu[5] = std::nextafter(ulp.cpu[5], 10.0f);
  // equal outputs, bitwise: no error; nothing differs
  BothSummary s = compare_both("test", Mode::Strict, {same});
  EXPECT_EQ(s.differing, 0u);
  // one ulp, bitwise: an error naming the output and where
  try {
    compare_both("test", Mode::Strict, {same, ulp});
    ADD_FAILURE() << "a one-ulp difference passed a bitwise limit";
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ulp"), std::string::npos) << m;
    EXPECT_NE(m.find("index 5"), std::string::npos) << m;
  }
  // one ulp against 1e-6: within
  ulp.plmv_limit = 1e-6;
  s = compare_both("test", Mode::Strict, {ulp});
  EXPECT_EQ(s.differing, 1u);
  EXPECT_GT(s.max_abs, 0.0);
  // a level 1% off against 1e-6: outside, in fast mode too
  BothOutput level = output("level", 1e-6);
  for (int x = 0; x < 4; ++x) level.gpu[4 + x] *= 1.01f;
  EXPECT_THROW(compare_both("test", Mode::Fast, {level}), RuntimeError);
  level.plmv_limit = 0.1;
  EXPECT_NO_THROW(compare_both("test", Mode::Fast, {level}));
}

TEST(WrfDims, IndexIsFortranColumnMajorFromMemoryBounds) {
  WrfDims d;
  d.ims = -3; d.ime = 10; d.kms = 1; d.kme = 5; d.jms = 0; d.jme = 7;
  EXPECT_EQ(d.idx3(-3, 1, 0), 0u);
  EXPECT_EQ(d.idx3(-2, 1, 0), 1u);
  EXPECT_EQ(d.idx3(-3, 2, 0), 14u);
  EXPECT_EQ(d.idx3(-3, 1, 1), 14u * 5u);
  EXPECT_EQ(d.idx2(10, 7), 14u * 8u - 1u);
}

TEST(Verify, PerLevelMeanVarianceByHand) {
  // 2x1x2 horizontal cells, 2 levels. Level 1 means: ref 2, ours 2.5 -> 0.25.
  // Level 2: ref mean 0 -> skipped.
  std::vector<float> ref = {1, 3, 0, 0, 2, 2, 0, 0};
  std::vector<float> x = {1, 4, 0, 0, 2, 3, 0, 0};
  // layout i fastest (ni=2), then k (nk=2), then j (nj=2)
  auto s = compare_field("f", ref.data(), x.data(), 2, 2, 2);
  EXPECT_EQ(s.levels_used, 1u);
  EXPECT_DOUBLE_EQ(s.plmv, 0.25);
  EXPECT_DOUBLE_EQ(s.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.5);
  EXPECT_EQ(s.nonfinite, 0u);
  x[0] = NAN;
  EXPECT_EQ(compare_field("f", ref.data(), x.data(), 2, 2, 2).nonfinite, 1u);
}

TEST(CaptureIo, RoundTripAndErrorsNameTheVariable) {
  std::string path = ::testing::TempDir() + "wrfgpu_io_test.nc";
  {
    NcFile f(path, true);
    f.put_att("capture_format", "1");
    f.put_att_int("itimestep", 42);
    f.def_dim("south_north", 2);
    f.def_dim("west_east", 3);
    f.def_var("rainnc", false, {"south_north", "west_east"}, "mm", "accumulated rain");
    f.put_float("rainnc", {1, 2, 3, 4, 5, 6});
  }
  NcFile f(path);
  EXPECT_EQ(f.att_string("capture_format"), "1");
  EXPECT_EQ(f.att_int("itimestep"), 42);
  auto v = f.read_float("rainnc", {2, 3});
  EXPECT_EQ(v[5], 6.0f);
  EXPECT_EQ(f.att_string("units", "rainnc"), "mm");
  try {
    f.read_float("qrain");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'qrain' is missing"), std::string::npos) << e.what();
  }
  try {
    f.read_float("rainnc", {3, 2});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(2,3)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.att_double("dt"), InputError);
  EXPECT_THROW(NcFile("/nonexistent/x.nc"), InputError);
  std::remove(path.c_str());
}

// A rank bound to one core (mpirun's default binding for one or two ranks) is told so at
// start-up: the host side of the GPU calls would run on one thread.
TEST(HostCores, OneCoreIsReported) {
  const int online = host_cores_online();
  const int allowed = host_cores_allowed();
  ASSERT_GE(allowed, 1);
  ASSERT_GE(online, 1);
  if (allowed > 1) {
    EXPECT_EQ(host_cores_note(), "");
  }
  cpu_set_t was, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof was, &was), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &was)) ++cpu;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(host_cores_allowed(), 1);
  const std::string note = host_cores_note();
  ASSERT_EQ(sched_setaffinity(0, sizeof was, &was), 0);
  if (online > 1) {
    EXPECT_NE(note.find("bound to 1 of " + std::to_string(online) + " cores"), std::string::npos) << note;
  } else {
    EXPECT_EQ(note, "");
  }
  EXPECT_EQ(host_cores_allowed(), allowed);
}

// The packing copy: every length and destination alignment (head, vector body, tail), bits
// kept exactly (NaN payloads, -0, subnormals), and a NaN or Inf found wherever it sits.
TEST(StreamCopy, CopiesBitsAndFindsNonFiniteAnywhere) {
  const float specials[] = {-0.0f, 1e-45f, -3.4028235e38f, 1.17549435e-38f};
  std::vector<float> src(80), dst(96);
  for (std::size_t i = 0; i < src.size(); ++i)
    src[i] = i < 4 ? specials[i] : std::ldexp((float)i - 40.5f, (int)(i % 17) - 8);
  for (int shift = 0; shift < 8; ++shift)
    for (std::size_t n = 0; n <= 70; ++n) {
      std::fill(dst.begin(), dst.end(), 7.0f);
      const float* from = src.data() + (shift % 3);
      EXPECT_FALSE(copy_row_stream(dst.data() + shift, from, n)) << n << " " << shift;
      stream_fence();
      EXPECT_EQ(std::memcmp(dst.data() + shift, from, n * sizeof(float)), 0) << n << " " << shift;
      EXPECT_EQ(dst[shift + n], 7.0f) << "wrote past the row: " << n << " " << shift;
      if (shift > 0) {
        EXPECT_EQ(dst[shift - 1], 7.0f) << "wrote before the row";
      }
    }
  const std::uint32_t bad_bits[] = {0x7fc00001u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0x7f800001u};
  for (std::uint32_t bits : bad_bits)
    for (int shift = 0; shift < 4; ++shift)
      for (std::size_t at = 0; at < 37; ++at) {
        std::vector<float> row(src.begin(), src.begin() + 37);
        std::memcpy(&row[at], &bits, sizeof bits);
        EXPECT_TRUE(copy_row_stream(dst.data() + shift, row.data(), row.size()))
            << std::hex << bits << " at " << at;
        stream_fence();
        std::uint32_t got;
        std::memcpy(&got, &dst[shift + at], sizeof got);
        EXPECT_EQ(got, bits) << "payload not kept";
      }
  // the largest finite floats are not "non-finite"
  const float big[3] = {3.4028235e38f, -3.4028235e38f, 0.0f};
  EXPECT_FALSE(copy_row_stream(dst.data(), big, 3));
  // Positive (WSM5's th, den, pii, p, delz): 0, -0 and negatives are bad too, wherever they sit;
  // the smallest subnormal is > 0 and fine.
  std::vector<float> pos(37);
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = 1e-45f + (float)i;
  for (int shift = 0; shift < 4; ++shift) {
    EXPECT_FALSE(copy_row_stream<true>(dst.data() + shift, pos.data(), pos.size()));
    for (float bad : {0.0f, -0.0f, -1e-45f, -2.5f, std::nanf(""), INFINITY, -INFINITY})
      for (std::size_t at = 0; at < pos.size(); ++at) {
        std::vector<float> row = pos;
        row[at] = bad;
        EXPECT_TRUE(copy_row_stream<true>(dst.data() + shift, row.data(), row.size()))
            << bad << " at " << at << " shift " << shift;
        EXPECT_EQ(copy_row_stream<false>(dst.data() + shift, row.data(), row.size()), !std::isfinite(bad));
        stream_fence();
        EXPECT_EQ(std::memcmp(dst.data() + shift, row.data(), row.size() * sizeof(float)), 0);
      }
  }
}
