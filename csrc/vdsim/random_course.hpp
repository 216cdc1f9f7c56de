// A random course (vdsim_gym.envs.courses.random_course) drawn and built in C++: the
// uniforms from the env's numpy generator (numpy_draws.hpp), the curvature's and the
// speed's sinusoids, the speed profile's limits and the path, in the plain numpy
// version's order of operations. The sinusoids and the heading's cos and sin take the C
// library's values every kRandomCourseAnchor points and rotate them between (a reset
// costs ~300 calls instead of ~5,000): the same doubles on every CPU, within a few ulps
// of the C library's at every point (tests/envs/test_courses.py keeps the plain numpy
// version, the C library's functions element by element, as the reference).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "numpy_draws.hpp"

namespace vdsim {

// Uniform draws of a random course, in the order the numpy reference drew them:
// 4 curvature wavelengths, amplitudes and phases, the curvature scale (only when the
// curvature's shape has a nonzero point), then 3 speed wavelengths, amplitudes and
// phases: u = low + (high - low) * d for d from Generator.random.
constexpr int kRandomCourseDraws = 22;
constexpr int kRandomCourseRows = 7;  // sinusoids: 4 curvature, 3 speed
constexpr double kRandomCourseRamp = 20.0;       // [m] the curvature fades in over it
constexpr double kRandomCourseLongAccel = 2.0;   // [m/s^2] |dv/dt| along the path
// Every this many points the sinusoids and the heading take the C library's sin and cos;
// the points between rotate the last one (random_course.cpp).
constexpr int64_t kRandomCourseAnchor = 32;

// A random course's parameters: n points (max(round(length / spacing), 1) + 1, n >= 2)
// over `length` [m], the curvature bound k_bound [1/m], speeds in [v_lo, v_hi] [m/s]
// capped by the lateral acceleration max_lat_accel [m/s^2].
struct RandomCourseSpec {
  int64_t n = 2;
  double length = 0.0, k_bound = 0.0, v_lo = 0.0, v_hi = 0.0, max_lat_accel = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(n, length, k_bound, v_lo, v_hi, max_lat_accel); }
};

// The path of a drawn course, built segment by segment when asked (the heading's rotation
// is serial; a short episode reads the start of its course only). Segments [0, next) are
// built: points 0 .. next final in x and y; segment j's mid heading waits in x[j + 1].
struct CoursePathBuilder {
  int64_t next = 0;
  double ds = 0.0, mid_prev = 0.0, cm = 1.0, sm = 0.0, x = 0.0, y = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(next, ds, mid_prev, cm, sm, x, y); }
  // Builds segments [next, upto) (upto <= n - 1): the points x[j + 1], y[j + 1]. The same
  // doubles however the building is split.
  void build(int64_t upto, double* x, double* y);
};

// Draws a course from `rng` into x, y and speed (n points each; `kappa`: the curvature,
// the draw's scratch); false when a value is not finite (e.g. a path so short that the
// curvature's scale overflows). The vectors keep their capacity: a caller that draws a
// course every episode into the same buffers allocates nothing. With `path`, only the
// start point of x and y is set (x holds the mid headings): `path.build` makes the rest.
bool draw_random_course(const RandomCourseSpec& spec, NumpyDraws& rng, std::vector<double>& x,
                        std::vector<double>& y, std::vector<double>& speed,
                        std::vector<double>& kappa, CoursePathBuilder& path);
bool draw_random_course(const RandomCourseSpec& spec, NumpyDraws& rng, std::vector<double>& x,
                        std::vector<double>& y, std::vector<double>& speed,
                        std::vector<double>& kappa);  // the whole path built

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

// pow(x, 3) as the C library computes it, without the call where that is certain, as
// libm_square: the exact cube is hi + lo with hi = fl(fl(x * x) * x), from Dekker's
// products (x * x = sq + sq_lo and sq * x = hi + prod_lo exactly) and lo = prod_lo +
// sq_lo * x (whose roundings are below 1e-15 ulp of hi). r = fl(hi + lo) is then the
// double nearest x^3 and rem = (hi - r) + lo its distance (hi - r exact). When |rem| <
// 0.45 ulp of r, every other double lies more than 0.55 ulp from x^3 and pow, erring by
// at most 0.54 ulp, returns r. Otherwise (near a midpoint or a power of two, NaN, out of
// the splits' range) pow is called.
inline bool cube_without_pow(double x, double& out) {  // libm_cube's certain case
  const double ax = std::fabs(x);
  if (!(ax > 1e-90 && ax < 1e90)) return false;
  const double sq = x * x, hi = sq * x;
  const double c = 134217729.0 * x;  // 2^27 + 1
  const double xh = c - (c - x), xl = x - xh;
  const double sq_lo = ((xh * xh - sq) + 2.0 * xh * xl) + xl * xl;
  const double cs = 134217729.0 * sq;
  const double sh = cs - (cs - sq), sl = sq - sh;
  const double prod_lo = ((sh * xh - hi) + sh * xl + sl * xh) + sl * xl;
  const double lo = prod_lo + sq_lo * x;
  const double r = hi + lo;
  const double rem = (hi - r) + lo;
  uint64_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  if ((bits & 0x000fffffffffffffULL) == 0) return false;  // a power of two
  const uint64_t ulp_bits = (bits & 0x7ff0000000000000ULL) - (52ULL << 52);
  double ulp;
  std::memcpy(&ulp, &ulp_bits, sizeof ulp);
  if (!(std::fabs(rem) < 0.45 * ulp)) return false;
  out = r;
  return true;
}
inline double libm_cube(double x) {
  double r;
  if (cube_without_pow(x, r)) return r;
  volatile double three = 3.0;
  return std::pow(x, three);
}

// v lowered so that |v dv/ds| <= accel: a backward (braking) then a forward
// (accelerating) pass, v[i] = min(v[i], sqrt(pow(v[i +- 1], 2) + 2 accel ds)), with
// Python's min and the C library's pow (as numpy's scalar v ** 2), bit for bit the plain
// Python loops of the tests.
void limit_long_accel(double* v, int64_t n, double ds, double accel);

}  // namespace vdsim
