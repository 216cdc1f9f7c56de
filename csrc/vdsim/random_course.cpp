#include "vdsim/random_course.hpp"

#include <cmath>
#include <cstring>

namespace vdsim {

namespace {

// Generator.uniform's bounds of each draw, in draw order (see the header).
struct DrawBounds {
  double lo, hi;
};
constexpr double kTwoPi = 2.0 * 3.141592653589793;  // Python's 2.0 * np.pi
constexpr DrawBounds kBounds[kRandomCourseDraws] = {
    {40.0, 200.0}, {40.0, 200.0}, {40.0, 200.0}, {40.0, 200.0},  // curvature wavelengths
    {0.2, 1.0},    {0.2, 1.0},    {0.2, 1.0},    {0.2, 1.0},     // amplitudes
    {0.0, kTwoPi}, {0.0, kTwoPi}, {0.0, kTwoPi}, {0.0, kTwoPi},  // phases
    {0.3, 1.0},                                                  // curvature scale
    {80.0, 400.0}, {80.0, 400.0}, {80.0, 400.0},                 // speed wavelengths
    {0.2, 1.0},    {0.2, 1.0},    {0.2, 1.0},                    // amplitudes
    {0.0, kTwoPi}, {0.0, kTwoPi}, {0.0, kTwoPi},                 // phases
};

inline double draw(const double* d, int k) {
  return kBounds[k].lo + (kBounds[k].hi - kBounds[k].lo) * d[k];
}

// Row r's (wavelength, amplitude, phase) draw indices.
inline void row_draws(int r, int& lam, int& amp, int& phase) {
  if (r < 4) {
    lam = r, amp = 4 + r, phase = 8 + r;
  } else {
    lam = 13 + (r - 4), amp = 16 + (r - 4), phase = 19 + (r - 4);
  }
}

// numpy's minimum (NaN-propagating) and clip (minimum(maximum(x, lo), hi)).
inline double np_minimum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a <= b ? a : b;
}
inline double np_maximum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a >= b ? a : b;
}

}  // namespace

double random_course_arguments(const double* d, int64_t n, double length, double ramp,
                               double* work) {
  // np.linspace(0.0, length, n): arange(n) * (length / (n - 1)) + 0.0, the last = length;
  // a step that underflows to 0 divides first (numpy's gh-5437 branch). s goes into row 7
  // first (t replaces it at the end), so that the rows' loops below vectorize.
  const double delta = length - 0.0;
  const double div = static_cast<double>(n - 1);
  const double step = delta / div;
  double* s = work + kRandomCourseRows * n;
  if (step == 0.0) {
    for (int64_t i = 0; i < n; ++i) s[i] = (static_cast<double>(i) / div) * delta + 0.0;
  } else {
    for (int64_t i = 0; i < n; ++i) s[i] = static_cast<double>(i) * step + 0.0;
  }
  s[n - 1] = length;
  for (int r = 0; r < kRandomCourseRows; ++r) {
    int li, ai, pi;
    row_draws(r, li, ai, pi);
    const double lam = draw(d, li), phase = draw(d, pi);
    double* row = work + r * n;
    for (int64_t i = 0; i < n; ++i) row[i] = kTwoPi * s[i] / lam + phase;
  }
  const double ds = s[1] - s[0];
  for (int64_t i = 0; i < n; ++i) s[i] = np_minimum(np_maximum(s[i] / ramp, 0.0), 1.0);  // t
  return ds;
}

double random_course_profile(const double* work, const double* t3, const double* d,
                             int64_t n, double ds, double k_bound, double v_lo, double v_hi,
                             double max_lat_accel, double long_accel, double* v, double* mid,
                             bool* finite) {
  double amp[kRandomCourseRows];
  for (int r = 0; r < kRandomCourseRows; ++r) {
    int li, ai, pi;
    row_draws(r, li, ai, pi);
    amp[r] = draw(d, ai);
  }
  const double* t = work + kRandomCourseRows * n;
  // amp.sum() and terms.sum(axis=0): sequential for these few rows.
  const double amp4 = ((amp[0] + amp[1]) + amp[2]) + amp[3];
  const double amp3 = (amp[4] + amp[5]) + amp[6];
  // The curvature's shape, then the curvature itself, live in v's storage until the
  // speed loop below overwrites each slot after reading it.
  double* shape = v;
  double peak = 0.0;
  bool nan_peak = false;
  for (int64_t i = 0; i < n; ++i) {
    double sum = amp[0] * work[i];
    for (int r = 1; r < 4; ++r) sum = sum + amp[r] * work[r * n + i];
    const double ti = t[i];
    const double ramp = t3[i] * ((10.0 - 15.0 * ti) + 6.0 * (ti * ti));
    shape[i] = (sum / amp4) * ramp;
    const double a = std::fabs(shape[i]);
    if (std::isnan(a)) nan_peak = true;
    else if (a > peak) peak = a;
  }
  if (nan_peak) peak = std::nan("");
  const double factor = peak > 0.0 ? draw(d, 12) * k_bound / peak : 0.0;
  for (int64_t i = 0; i < n; ++i) shape[i] = shape[i] * factor;  // kappa
  const double* kappa = shape;
  // Heading: psi = [0, cumsum(0.5 * (kappa[1:] + kappa[:-1]) * ds)]; cumsum's first
  // element is its first term (not 0 + term: the sign of a zero survives). Only mid is
  // kept, psi runs in a scalar.
  double psi_prev = 0.0;
  for (int64_t j = 0; j + 1 < n; ++j) {
    const double e = 0.5 * (kappa[j + 1] + kappa[j]) * ds;
    const double psi_next = j == 0 ? e : psi_prev + e;
    mid[j] = 0.5 * (psi_next + psi_prev);
    psi_prev = psi_next;
  }
  // Speed: v_lo + (v_hi - v_lo) * 0.5 * (1 + sines3), capped by sqrt(a_lat / |kappa|),
  // clipped to [v_lo, v_hi] (kappa is read before its slot is overwritten).
  const double f = (v_hi - v_lo) * 0.5;
  for (int64_t i = 0; i < n; ++i) {
    double sum = amp[4] * work[4 * n + i];
    for (int r = 5; r < kRandomCourseRows; ++r) sum = sum + amp[r] * work[r * n + i];
    const double vi = v_lo + f * (1.0 + sum / amp3);
    const double cap = std::sqrt(max_lat_accel / std::fabs(kappa[i]));
    v[i] = np_minimum(np_maximum(np_minimum(vi, cap), v_lo), v_hi);
  }
  limit_long_accel(v, n, ds, long_accel);
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) ok = ok && std::isfinite(v[i]);
  for (int64_t j = 0; j + 1 < n; ++j) ok = ok && std::isfinite(mid[j]);
  *finite = ok;
  return peak;
}

void random_course_path(const double* cos_mid, const double* sin_mid, int64_t n, double ds,
                        double* path) {
  path[0] = 0.0;
  path[1] = 0.0;
  double x = 0.0, y = 0.0;
  for (int64_t j = 0; j + 1 < n; ++j) {
    const double dx = ds * cos_mid[j], dy = ds * sin_mid[j];
    x = j == 0 ? dx : x + dx;  // cumsum: the first element is the first term
    y = j == 0 ? dy : y + dy;
    path[2 * (j + 1)] = x;
    path[2 * (j + 1) + 1] = y;
  }
}

void limit_long_accel(double* v, int64_t n, double ds, double accel) {
  const double dv2 = 2.0 * accel * ds;
  // Python's min(v[i], sqrt(v[i +- 1] ** 2 + dv2)): the first unless the second is
  // smaller. pow(x, 2) >= fl(x * x * (1 - 1e-12)) and rounding and sqrt are monotone: when
  // that bound plus dv2 is at least fl(v[i]^2 (1 + 1e-12)) > v[i]^2, the candidate is >=
  // v[i] and v[i] stays, without computing it (a branch, so that stretches where the
  // limit does not bind do not wait on the previous point). NaN takes the exact path.
  constexpr double kLow = 1.0 - 1e-12, kHigh = 1.0 + 1e-12;
  auto relax = [&](double vi, double x) {
    if (x * x * kLow + dv2 >= vi * vi * kHigh) return vi;
    const double cand = std::sqrt(libm_square(x) + dv2);
    return cand < vi ? cand : vi;
  };
  for (int64_t i = n - 2; i >= 0; --i) v[i] = relax(v[i], v[i + 1]);
  for (int64_t i = 1; i < n; ++i) v[i] = relax(v[i], v[i - 1]);
}

}  // namespace vdsim
