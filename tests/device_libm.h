// device_libm.h - one libm for both halves of the device tests (tests/*/test_*_device.cu).
//
// CUDA's exp, log, pow, log10, log1p, hypot and atan2 are not glibc's: they differ by an ulp or
// so on some arguments. A device test that compares the GPU's and the host's bits of physics
// that calls them sends those calls here instead (by name lookup: the test declares expf, exp,
// pow, ... in the physics' namespaces, calling these), written with IEEE double operations only
// (+ - * /, sqrt, floor, frexp, ldexp, copysign), so both halves get the same bits. What is
// left to compare is the compiled physics itself. Accuracy against glibc:
// Radm2sorgDeviceLibm.CloseToGlibc and Wsm5Radar.DeviceComplexSqrtLogPortsMatchGlibc.
#pragma once
#include <cmath>

#include "wrfgpu_hd.h"

namespace wrfgpu_devtest_libm {

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // log(2) split as in fdlibm
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLog2e = 1.44269504088896338700e+00;
constexpr double kInvLn10 = 4.34294481903251827651e-01;
constexpr double kPi = 3.14159265358979311600e+00;
constexpr double kPiO2 = 1.57079632679489655800e+00;
constexpr double kPiO4 = 7.85398163397448278999e-01;

// x*2^n with one rounding (x in [0.5, 2), -1100 < n < 1100).
WRFGPU_HD double scale2(double x, int n) {
  if (n > 1023) return (x * 2.0) * ldexp(1.0, n - 1);
  if (n < -1022) return (x * ldexp(1.0, n + 64)) * ldexp(1.0, -64);
  return x * ldexp(1.0, n);
}
// exp: x = k*log(2) + r, |r| <= log(2)/2, exp(r) by its Taylor series (Horner, 14 terms).
WRFGPU_HD double exp_d(double x) {
  if (!(x == x)) return x;
  if (x > 709.8) return INFINITY;
  if (x < -745.2) return 0.0;
  const double k = floor(x * kLog2e + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0;
  for (int i = 14; i >= 1; --i) p = 1.0 + p * r / (double)i;
  return scale2(p, (int)k);
}
// log: x = m*2^e, m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m-1)/(m+1).
WRFGPU_HD double log_d(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -INFINITY : NAN;
  if (x == INFINITY) return x;
  int e;
  double m = frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m = m * 2.0;
    e = e - 1;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double t = 0.0;
  for (int j = 23; j >= 3; j -= 2) t = (t + 1.0 / (double)j) * s2;
  const double lm = 2.0 * s + 2.0 * s * t;
  return (double)e * kLn2Hi + (lm + (double)e * kLn2Lo);
}
WRFGPU_HD double pow_d(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (!(x == x) || !(y == y)) return NAN;
  if (x == 0.0) return y > 0.0 ? 0.0 : INFINITY;
  if (x < 0.0) {
    if (floor(y) != y) return NAN;
    const double r = exp_d(y * log_d(-x));
    return floor(y * 0.5) * 2.0 != y ? -r : r;
  }
  return exp_d(y * log_d(x));
}
WRFGPU_HD double log1p_d(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  return log_d(u) * (x / (u - 1.0));
}
WRFGPU_HD double hypot_d(double x, double y) {
  double a = fabs(x), b = fabs(y);
  if (a < b) {
    const double t = a;
    a = b;
    b = t;
  }
  if (a == INFINITY) return INFINITY;
  if (b == 0.0) return a;
  const double r = b / a;
  return a * sqrt(1.0 + r * r);
}
// atan(u) for |u| <= tan(pi/8): u - u*(u^2/3 - u^4/5 + ...), 29 terms.
WRFGPU_HD double atan_core(double u) {
  const double u2 = u * u;
  double s = 0.0;
  for (int j = 59; j >= 3; j -= 2) s = (1.0 / (double)j - s) * u2;
  return u - u * s;
}
WRFGPU_HD double atan_pos(double t) {  // t >= 0
  const bool inv = t > 1.0;
  if (inv) t = 1.0 / t;
  const double a = t > 0.41421356237309503 ? kPiO4 + atan_core((t - 1.0) / (t + 1.0)) : atan_core(t);
  return inv ? kPiO2 - a : a;
}
WRFGPU_HD double atan2_d(double y, double x) {
  if (!(x == x) || !(y == y)) return NAN;
  if (y == 0.0) return (x > 0.0 || (x == 0.0 && copysign(1.0, x) > 0.0)) ? y : copysign(kPi, y);
  if (x == 0.0) return copysign(kPiO2, y);
  const double a = atan_pos(fabs(y) / fabs(x));
  return copysign(x > 0.0 ? a : kPi - a, y);
}

WRFGPU_HD double log10_d(double x) { return log_d(x) * kInvLn10; }

}  // namespace wrfgpu_devtest_libm
