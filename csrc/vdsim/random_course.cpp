#include "vdsim/random_course.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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

// numpy's minimum and maximum (NaN-propagating: a NaN a, else a NaN b, else the smaller
// (larger), a on a tie), as selects of one comparison each, so that loops of them
// vectorize.
inline double np_minimum(double a, double b) {
  double r = b < a ? b : a;
  r = b != b ? b : r;
  return a != a ? a : r;
}
inline double np_maximum(double a, double b) {
  double r = b > a ? b : a;
  r = b != b ? b : r;
  return a != a ? a : r;
}

// np.linspace(0.0, length, n)'s points, computed when asked: arange(n) * (length / (n - 1))
// + 0.0, the last = length; a step that underflows to 0 divides first (numpy's gh-5437
// branch).
struct Linspace {
  int64_t n;
  double length, div, step;
  Linspace(int64_t n_points, double len)
      : n(n_points), length(len), div(static_cast<double>(n_points - 1)),
        step((len - 0.0) / div) {}
  double operator[](int64_t i) const {
    if (i == n - 1) return length;
    return step == 0.0 ? (static_cast<double>(i) / div) * (length - 0.0) + 0.0
                       : static_cast<double>(i) * step + 0.0;
  }
};

// The sum of the sinusoids amp[r] * sin(kTwoPi * s[i] / lam[r] + phase[r]), r = 0 .. M - 1,
// at every point, added in r's order into out[i]. Every kRandomCourseAnchor-th point takes
// the C library's sin and cos of each angle; the points between rotate the previous one by
// the step's angle (its sin and cos from the C library once): a few ulps from the C
// library's values (the rotation's roundings, at most kRandomCourseAnchor - 1 of them),
// the same doubles on every CPU (plain IEEE operations, no FMA on the baseline target).
// The anchors cut the points into independent blocks: two blocks rotate side by side as
// the lanes of SSE2 pairs, so that the rotations' latencies overlap. Each lane's
// operations are the scalar ones: the doubles do not depend on the pairing.
typedef double Pair __attribute__((vector_size(16)));

template <int M>
void sum_sinusoids(const Linspace& s, double step, const double* amp, const double* lam,
                   const double* phase, double* out) {
  constexpr int64_t kA = kRandomCourseAnchor;
  const int64_t n = s.n;
  Pair ct[M], st[M], a[M];
  for (int r = 0; r < M; ++r) {
    const double turn = kTwoPi * step / lam[r];
    const double c = std::cos(turn), sn = std::sin(turn);
    ct[r] = Pair{c, c}, st[r] = Pair{sn, sn}, a[r] = Pair{amp[r], amp[r]};
  }
  for (int64_t i0 = 0; i0 < n; i0 += 2 * kA) {
    const int64_t i1 = i0 + kA;  // the second lane's block (past the end: not stored)
    Pair sn[M], cs[M];
    for (int r = 0; r < M; ++r) {
      const double angle0 = kTwoPi * s[i0] / lam[r] + phase[r];
      double sn1 = 0.0, cs1 = 0.0;
      if (i1 < n) {
        const double angle1 = kTwoPi * s[i1] / lam[r] + phase[r];
        sn1 = std::sin(angle1);
        cs1 = std::cos(angle1);
      }
      sn[r] = Pair{std::sin(angle0), sn1};
      cs[r] = Pair{std::cos(angle0), cs1};
    }
    for (int64_t k = 0; k < kA && i0 + k < n; ++k) {
      if (k > 0) {
        for (int r = 0; r < M; ++r) {
          const Pair next = sn[r] * ct[r] + cs[r] * st[r];
          cs[r] = cs[r] * ct[r] - sn[r] * st[r];
          sn[r] = next;
        }
      }
      Pair sum = a[0] * sn[0];
      for (int r = 1; r < M; ++r) sum = sum + a[r] * sn[r];
      out[i0 + k] = sum[0];
      if (i1 + k < n) out[i1 + k] = sum[1];
    }
  }
}

// sin and cos of a small angle d (|d| <= kSmallAngle) by their Taylor series to the
// 13th and 12th power: the truncation is below 1e-19 of the value.
constexpr double kSmallAngle = 0.25;
inline void small_sincos(double d, double& sn, double& cs) {
  const double d2 = d * d;
  sn = d * (1.0 - d2 / 6.0 * (1.0 - d2 / 20.0 * (1.0 - d2 / 42.0 * (1.0 - d2 / 72.0 *
          (1.0 - d2 / 110.0 * (1.0 - d2 / 156.0))))));
  cs = 1.0 - d2 / 2.0 * (1.0 - d2 / 12.0 * (1.0 - d2 / 30.0 * (1.0 - d2 / 56.0 *
          (1.0 - d2 / 90.0 * (1.0 - d2 / 132.0)))));
}

// small_sincos of the turns d[k], k = 0 .. m - 1, into st[k] and ct[k] (a turn wider than
// kSmallAngle gets a value that is not used). The same IEEE operations in every lane of
// any vector width: the same doubles as one at a time.
void small_sincos_turns(const double* __restrict d, int64_t m, double* __restrict st,
                        double* __restrict ct) {
  for (int64_t k = 0; k < m; ++k) small_sincos(d[k], st[k], ct[k]);
}

// The largest |x[i]| of the points that are not NaN (0 without any), and whether one is
// NaN; four partial maxima (a maximum does not depend on the order), a loop that
// vectorizes.
void abs_peak(const double* __restrict x, int64_t n, double& peak, bool& any_nan) {
  double m[4] = {0.0, 0.0, 0.0, 0.0};
  int nan[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) {
      const double a = std::fabs(x[i + k]);
      nan[k] |= a != a;
      m[k] = a > m[k] ? a : m[k];  // a NaN a leaves it
    }
  }
  for (; i < n; ++i) {
    const double a = std::fabs(x[i]);
    nan[0] |= a != a;
    m[0] = a > m[0] ? a : m[0];
  }
  peak = std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  any_nan = (nan[0] | nan[1] | nan[2] | nan[3]) != 0;
}

// The speed before its acceleration limit, in place: from the sines' sum v[i], v_lo + f (1
// + v[i] / amp3), capped by sqrt(a_lat / |kappa[i]|), clipped to [v_lo, v_hi] (numpy's
// minimum and maximum).
void speed_caps(double* __restrict v, const double* __restrict kappa, int64_t n,
                const RandomCourseSpec& c, double f, double amp3) {
  const double v_lo = c.v_lo, v_hi = c.v_hi, lat = c.max_lat_accel;
  for (int64_t i = 0; i < n; ++i) {
    const double vi = v_lo + f * (1.0 + v[i] / amp3);
    const double cap = std::sqrt(lat / std::fabs(kappa[i]));
    v[i] = np_minimum(np_maximum(np_minimum(vi, cap), v_lo), v_hi);
  }
}

}  // namespace

bool draw_random_course(const RandomCourseSpec& c, NumpyDraws& rng, std::vector<double>& x_out,
                        std::vector<double>& y_out, std::vector<double>& v,
                        std::vector<double>& shape, CoursePathBuilder& path) {
  const int64_t n = c.n;
  double d[kRandomCourseDraws] = {};
  for (int k = 0; k < 12; ++k) d[k] = rng.random();  // curvature wavelengths, amps, phases
  const Linspace s(n, c.length);
  const double step = s.step;
  const double ds = s[1] - s[0];
  // resize keeps the values of the last course (overwritten below): no fill
  shape.resize(static_cast<size_t>(n));
  // The curvature's shape: the sum of its sines over the amplitudes' sum, faded in by the
  // quintic ramp t^3 (10 - 15 t + 6 t^2), t = clip(s / ramp, 0, 1).
  double amp[kRandomCourseRows], lam[kRandomCourseRows], phase[kRandomCourseRows];
  auto row = [&](int r) {
    int li, ai, pi;
    row_draws(r, li, ai, pi);
    lam[r] = draw(d, li), amp[r] = draw(d, ai), phase[r] = draw(d, pi);
  };
  for (int r = 0; r < 4; ++r) row(r);
  const double amp4 = ((amp[0] + amp[1]) + amp[2]) + amp[3];
  double peak = 0.0;
  bool nan_peak = false;  // some point is NaN
  sum_sinusoids<4>(s, step, amp, lam, phase, shape.data());
  auto ramp_point = [&](int64_t i) {
    const double sum = shape[i];
    const double ti = np_minimum(np_maximum(s[i] / kRandomCourseRamp, 0.0), 1.0);
    // numpy's t ** 3: the C library's pow (past the ramp pow(1, 3) = 1 exactly)
    const double cube = ti == 1.0 ? 1.0 : libm_cube(ti);
    const double ramp = cube * ((10.0 - 15.0 * ti) + 6.0 * (ti * ti));
    shape[i] = (sum / amp4) * ramp;
  };
  // The ramp's points, then those past it (s >= kRandomCourseRamp, so s / ramp >= 1, t = 1
  // and the ramp's factor (10 - 15) + 6 = 1 exactly: the shape is sum / amp4, a loop that
  // vectorizes). linspace's points before the last rise with i; the last is the general
  // case.
  int64_t i = 0;
  for (; i < n - 1 && !(s[i] >= kRandomCourseRamp); ++i) ramp_point(i);
  for (; i < n - 1; ++i) shape[i] = shape[i] / amp4;
  ramp_point(n - 1);
  abs_peak(shape.data(), n, peak, nan_peak);
  if (nan_peak) peak = std::nan("");
  // The curvature's scale is drawn only for a shape with a nonzero point (the 13th
  // uniform); the speed's draws follow.
  if (peak > 0.0) d[12] = rng.random();
  for (int k = 13; k < kRandomCourseDraws; ++k) d[k] = rng.random();
  for (int r = 4; r < kRandomCourseRows; ++r) row(r);
  const double factor = peak > 0.0 ? draw(d, 12) * c.k_bound / peak : 0.0;
  for (int64_t i = 0; i < n; ++i) shape[i] = shape[i] * factor;  // kappa
  const std::vector<double>& kappa = shape;
  // Heading: psi = [0, cumsum(0.5 * (kappa[1:] + kappa[:-1]) * ds)]; cumsum's first
  // element is its first term (not 0 + term: the sign of a zero survives). The path steps
  // ds along each segment's mid heading, from (0, 0).
  // The mid heading's cos and sin: the C library's every kRandomCourseAnchor-th segment
  // (and after a turn wider than kSmallAngle), rotated by the turn between (its Taylor
  // series) in between.
  x_out.resize(static_cast<size_t>(n));
  y_out.resize(static_cast<size_t>(n));
  v.resize(static_cast<size_t>(n));
  bool ok = true;
  // The mid headings into x_out[1..] (x_out[0] = 0: the start point); the points follow
  // from them when asked (CoursePathBuilder::build).
  double* const mids = x_out.data();
  double psi_prev = 0.0;
  for (int64_t j = 0; j + 1 < n; ++j) {
    const double e = 0.5 * (kappa[j + 1] + kappa[j]) * ds;
    const double psi_next = j == 0 ? e : psi_prev + e;
    const double mid = 0.5 * (psi_next + psi_prev);
    ok = ok && std::isfinite(mid);
    psi_prev = psi_next;
    mids[j + 1] = mid;
  }
  x_out[0] = 0.0;
  y_out[0] = 0.0;
  path = CoursePathBuilder{};
  path.ds = ds;
  // Speed: v_lo + (v_hi - v_lo) * 0.5 * (1 + sines3), capped by sqrt(a_lat / |kappa|),
  // clipped to [v_lo, v_hi], limited to +-long_accel along the path.
  const double amp3 = (amp[4] + amp[5]) + amp[6];
  const double f = (c.v_hi - c.v_lo) * 0.5;
  sum_sinusoids<kRandomCourseRows - 4>(s, step, amp + 4, lam + 4, phase + 4, v.data());
  speed_caps(v.data(), kappa.data(), n, c, f, amp3);
  limit_long_accel(v.data(), n, ds, kRandomCourseLongAccel);
  for (int64_t i = 0; i < n; ++i) ok = ok && std::isfinite(v[i]);
  return ok;
}

bool draw_random_course(const RandomCourseSpec& spec, NumpyDraws& rng, std::vector<double>& x,
                        std::vector<double>& y, std::vector<double>& speed,
                        std::vector<double>& kappa) {
  CoursePathBuilder path;
  const bool ok = draw_random_course(spec, rng, x, y, speed, kappa, path);
  path.build(spec.n - 1, x.data(), y.data());
  return ok;
}

void CoursePathBuilder::build(int64_t upto, double* x_out, double* y_out) {
  // In chunks: the chunk's turns' Taylor series first (divisions independent across
  // segments, as vector pairs), then the serial rotation and the path. Segment j's mid
  // heading is x_out[j + 1] until the segment is built. The state in locals: the outputs
  // may not alias it.
  constexpr int64_t kChunk = 64;
  double turn[kChunk], st[kChunk], ct[kChunk];
  int64_t j0 = next;
  double mp = mid_prev, c = cm, sn = sm, px = x, py = y;
  while (j0 < upto) {
    const int64_t m = std::min(kChunk, upto - j0);
    turn[0] = x_out[j0 + 1] - mp;
    for (int64_t k = 1; k < m; ++k) turn[k] = x_out[j0 + k + 1] - x_out[j0 + k];
    small_sincos_turns(turn, m, st, ct);
    for (int64_t k = 0; k < m; ++k) {
      const int64_t j = j0 + k;
      const double mid = x_out[j + 1];
      if (j % kRandomCourseAnchor == 0 || !(std::fabs(turn[k]) <= kSmallAngle)) {
        c = std::cos(mid);
        sn = std::sin(mid);
      } else {
        const double next_sn = sn * ct[k] + c * st[k];
        c = c * ct[k] - sn * st[k];
        sn = next_sn;
      }
      mp = mid;
      const double dx = ds * c, dy = ds * sn;
      px = j == 0 ? dx : px + dx;  // cumsum: the first element is the first term
      py = j == 0 ? dy : py + dy;
      x_out[j + 1] = px;
      y_out[j + 1] = py;
    }
    j0 += m;
  }
  next = j0, mid_prev = mp, cm = c, sm = sn, x = px, y = py;
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
