// The exact-arithmetic stages of a random course (vdsim_gym.envs.courses.random_course).
//
// The course's sines, cosines and the ramp's cube stay in numpy: its SIMD builds of sin,
// cos and pow may differ from the C library's in the last bit, and the courses (and every
// golden result on them) are numpy's. What lies between them is +, -, *, /, sqrt, min and
// max, correctly rounded everywhere, so these stages repeat numpy's element-wise
// operations in numpy's order and give the same doubles (the tests compare them with the
// plain numpy reference over many seeds and parameters). They replace about sixty numpy
// calls on arrays of ~600 points, whose call overhead was most of a reset.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace vdsim {

// Uniform draws of a random course, in the order the numpy reference drew them:
// 4 curvature wavelengths, amplitudes and phases, the curvature scale, then 3 speed
// wavelengths, amplitudes and phases. From doubles d in [0, 1) (Generator.random):
// u = low + (high - low) * d, as Generator.uniform computes it.
constexpr int kRandomCourseDraws = 22;
constexpr int kRandomCourseRows = 7;  // sinusoids: 4 curvature, 3 speed

// Stage 1: the arc-length grid s = linspace(0, length, n) (numpy's formula), each
// sinusoid's argument 2 pi s / lambda + phase (rows 0-6 of `work`, n each) and the ramp's
// t = clip(s / ramp, 0, 1) (row 7). `work` holds 8 n doubles. Returns the spacing ds.
double random_course_arguments(const double* d, int64_t n, double length, double ramp,
                               double* work);

// Stage 2, after numpy's sin of rows 0-6 (in place) and t3 = t ** 3: curvature (the
// curvature sines' sum times the quintic ramp, scaled to the drawn peak), the speed
// profile (capped by the lateral acceleration, clipped, limited to +-long_accel along
// the path), the heading by the trapezoid rule and its midpoints. Writes v (n) and mid
// (n - 1), and *finite: whether every value of both is finite (so is then the path);
// returns the shape's peak |value| (the reference draws the curvature scale only when it
// is > 0, so the caller redraws otherwise).
double random_course_profile(const double* work, const double* t3, const double* d,
                             int64_t n, double ds, double k_bound, double v_lo, double v_hi,
                             double max_lat_accel, double long_accel, double* v, double* mid,
                             bool* finite);

// Stage 3, after numpy's cos and sin of the midpoints: the path from (0, 0) by steps of
// ds along each midpoint heading (n x 2, row-major).
void random_course_path(const double* cos_mid, const double* sin_mid, int64_t n, double ds,
                        double* path);

// pow(x, 2) as the C library computes it, without the call where that is certain.
// x * x is x^2 correctly rounded; its rounding error lo is exact by Dekker's product
// (Veltkamp's split, no FMA). When |lo| < 0.45 ulp of x * x, every other double lies
// more than 0.55 ulp from x^2, while glibc's pow errs by at most 0.54 ulp
// (sysdeps/ieee754/dbl-64/e_pow.c; musl's is the same code): pow returns x * x.
// Otherwise (x^2 near a rounding midpoint or a power of two, NaN, or out of the split's
// range) pow is called. The exponent is volatile: a literal 2.0 lets the compiler fold
// pow(x, 2.0) into x * x.
inline double libm_square(double x) {
  const double ax = std::fabs(x);
  if (ax > 1e-140 && ax < 1e150) {
    const double hi = x * x;
    uint64_t bits;
    std::memcpy(&bits, &hi, sizeof bits);
    if ((bits & 0x000fffffffffffffULL) != 0) {  // not a power of two (its lower
      // neighbour is only half an ulp away)
      const uint64_t ulp_bits = (bits & 0x7ff0000000000000ULL) - (52ULL << 52);
      double ulp;
      std::memcpy(&ulp, &ulp_bits, sizeof ulp);
      const double c = 134217729.0 * x;  // 2^27 + 1
      const double xh = c - (c - x), xl = x - xh;
      const double lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl;
      if (std::fabs(lo) < 0.45 * ulp) return hi;
    }
  }
  volatile double two = 2.0;
  return std::pow(x, two);
}

// v lowered so that |v dv/ds| <= accel: a backward (braking) then a forward
// (accelerating) pass, v[i] = min(v[i], sqrt(pow(v[i +- 1], 2) + 2 accel ds)), with
// Python's min and the C library's pow (as numpy's scalar v ** 2), bit for bit the plain
// Python loops of the tests.
void limit_long_accel(double* v, int64_t n, double ds, double accel);

}  // namespace vdsim
