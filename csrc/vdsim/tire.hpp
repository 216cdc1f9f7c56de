// Magic Formula tire with load sensitivity and combined slip on the friction ellipse.
// Pure functions of (load, slip, params); the per-parameter constants live in TireShape.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fminmax.hpp"
#include "params.hpp"

namespace vdsim {

struct TireForces {
  double fx = 0.0;  // along the wheel heading [N]
  double fy = 0.0;  // lateral, positive for positive slip angle [N]
};

// Slip at the force peak in units of B*x: solves (1-E) u + E atan(u) = tan(pi / (2 C)).
// Independent of B, so it is computed once per parameter set.
inline double mf_peak_u(const MFCurve& c) {
  const double target = std::tan(M_PI / (2.0 * c.C));
  double lo = 0.0, hi = 1.0;
  auto f = [&](double u) { return (1.0 - c.E) * u + c.E * std::atan(u) - target; };
  while (f(hi) < 0.0 && hi < 1e6) hi *= 2.0;
  auto bits = [](double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    const uint64_t lo0 = bits(lo), hi0 = bits(hi);
    (f(mid) < 0.0 ? lo : hi) = mid;
    // Once an iteration leaves (lo, hi) as they were (adjacent doubles: mid is one of
    // them), every later one does too: the same result as all 200, after about 60.
    if (bits(lo) == lo0 && bits(hi) == hi0) break;
  }
  return 0.5 * (lo + hi);
}

// Magic Formula shape sin(C atan(B x - E (B x - atan(B x)))) for bx = B x.
inline double mf_shape(double bx, double C, double E) {
  return std::sin(C * std::atan(bx - E * (bx - std::atan(bx))));
}

// Bounded-error, branch-free replacements for libm's atan and sin in the Magic Formula
// (integrator="semi_implicit" only: the explicit integrators keep libm, so the reference
// configuration stays bit-identical). In a profile of the L2 step libm's atan and sin were
// ~40 % of the time; these polynomials (Estrin's scheme: short dependency chains that
// overlap across the wheels) cost a fraction of that. Coefficients: Chebyshev fits made by
// benchmarks/fit_fast_math.py, which also prints the bounds below.
//   fast_atan: |error| <= 5e-11 rad on the whole real line (x * P(x^2) on [0, 1], and
//              pi/2 - atan(1/x) beyond); NaN in, NaN out; +-inf -> +-pi/2.
//   fast_sin_pi: |error| <= 4e-15 for |a| <= pi (cos(|a| - pi/2) by an even polynomial).
// So the shape sin(C atan(u - E (u - atan u))) is within C (1 + |E|) 5e-11 + 4e-15 of
// libm's for C <= 2 (tests/test_fast_tire.py checks it over the whole slip range).
// The polynomials' coefficients, shared by the scalar functions and their four-lane forms
// (lanes::, below).
inline constexpr double kFastAtanCoef[] = {
    0.9999999999391801, -0.33333331519578097, 0.19999909990338693, -0.14283948790341375,
    0.11092987043398124, -0.08979059402692537, 0.07242303809937047, -0.0542156082250235,
    0.034133716351256733, -0.016055337248342506, 0.004827286713130875,
    -0.0006805054874993913};
inline constexpr double kFastSinCoef[] = {
    0.9999999999999993, -0.4999999999999085, 0.041666666665854904, -0.001388888886212471,
    2.4801582990632236e-05, -2.7556942775352836e-07, 2.08585433597334e-09,
    -1.1010691428389841e-11};

inline double fast_atan(double x) {
  constexpr const double* c = kFastAtanCoef;
  const double a = std::fabs(x);
  const bool big = a > 1.0;
  const double t = big ? 1.0 / a : a;
  const double z = t * t, z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
  const double p = ((c[0] + c[1] * z) + z2 * (c[2] + c[3] * z)) +
                   z4 * ((c[4] + c[5] * z) + z2 * (c[6] + c[7] * z)) +
                   z8 * ((c[8] + c[9] * z) + z2 * (c[10] + c[11] * z));
  const double r = t * p;
  return std::copysign(big ? M_PI_2 - r : r, x);
}

inline double fast_sin_pi(double a) {  // |a| <= pi
  constexpr const double* c = kFastSinCoef;
  const double b = std::fabs(a) - M_PI_2;
  const double w = b * b, w2 = w * w, w4 = w2 * w2;
  const double p = ((c[0] + c[1] * w) + w2 * (c[2] + c[3] * w)) +
                   w4 * ((c[4] + c[5] * w) + w2 * (c[6] + c[7] * w));
  return std::copysign(p, a);
}

// mf_shape with fast_atan and fast_sin_pi; valid for C <= 2 (|C atan(.)| <= pi).
inline double mf_shape_fast(double bx, double C, double E) {
  return fast_sin_pi(C * fast_atan(bx - E * (bx - fast_atan(bx))));
}

// mf_shape_fast or libm's mf_shape, by a branch rather than a function pointer (a pointer
// kept the compiler from inlining the fast curve: ~15 % of an L2 step in a profile).
inline double mf_shape_sel(bool fast, double bx, double C, double E) {
  return fast ? mf_shape_fast(bx, C, E) : mf_shape(bx, C, E);
}

struct TireShape {
  double ux_star = 1.0;   // longitudinal peak in units of B*kappa
  double uy_star = 1.0;   // lateral peak in units of B*tan(alpha)
  double g_nominal = 1.0;  // stiffness load law at Fz0
  // The curves evaluated by mf_shape_fast (set by the session for semi_implicit; only
  // where C <= 2, the fast sine's range).
  bool fast_x = false, fast_y = false;
  // integrator="etd2": the load laws and slip normalization by reciprocals computed once
  // (two divisions per tire evaluation instead of about nine; tire_forces). The results
  // differ from the plain evaluation's by rounding only, so semi_implicit and the explicit
  // integrators, which keep the plain evaluation, stay bit-identical to before.
  bool fast_algebra = false;
  double inv_fz0 = 0.0, inv_pky2_fz0 = 0.0, c_by = 0.0, inv_ux = 0.0, inv_uy = 0.0;

  template <class Ar>
  void archive(Ar& ar) {
    ar(ux_star, uy_star, g_nominal, fast_x, fast_y, fast_algebra, inv_fz0, inv_pky2_fz0, c_by,
       inv_ux, inv_uy);
  }

  void use_fast(bool on, const TireParams& p) {
    fast_x = on && p.longitudinal.C <= 2.0;
    fast_y = on && p.lateral.C <= 2.0;
  }
  void use_fast_algebra(bool on, const TireParams& p) {
    fast_algebra = on;
    inv_fz0 = 1.0 / p.fz_nominal;
    inv_pky2_fz0 = p.pky2 > 0.0 ? 1.0 / (p.pky2 * p.fz_nominal) : 0.0;
    c_by = p.pky2 > 0.0 ? 2.0 / (p.pky2 * g_nominal) : 0.0;
    inv_ux = 1.0 / ux_star;
    inv_uy = 1.0 / uy_star;
  }

  static TireShape from(const TireParams& p) {
    TireShape s;
    s.ux_star = mf_peak_u(p.longitudinal);
    s.uy_star = mf_peak_u(p.lateral);
    s.g_nominal = p.pky2 > 0.0 ? stiffness_law(1.0 / p.pky2) : 1.0;
    return s;
  }
  // sin(2 atan(x)) = 2x / (1 + x^2): cornering stiffness vs load, peaking at x = 1.
  static double stiffness_law(double x) { return 2.0 * x / (1.0 + x * x); }
};

// Friction coefficient at load fz (load sensitivity), never below 10 % of mu.
inline double tire_mu(const TireParams& p, double fz) {
  const double dfz = (fz - p.fz_nominal) / p.fz_nominal;
  return p.mu * fmax_inl(0.1, 1.0 + p.pdy2 * dfz);
}

// Lateral stiffness factor B_y at load fz, chosen so that the cornering stiffness
// B_y C_y D_y(fz) follows stiffness_law while D_y follows tire_mu.
inline double tire_lateral_b(const TireParams& p, const TireShape& s, double fz) {
  if (p.pky2 <= 0.0) return p.lateral.B * p.mu / tire_mu(p, fz);  // stiffness prop. to load
  const double g = TireShape::stiffness_law(fz / (p.pky2 * p.fz_nominal)) / s.g_nominal;
  return p.lateral.B * (p.fz_nominal / fz) * g * p.mu / tire_mu(p, fz);
}

// One tire's cornering stiffness dFy/dtan(alpha) at zero slip and load fz [N] (the
// linear branch of tire_forces).
inline double tire_cornering_stiffness(const TireParams& p, const TireShape& s, double fz) {
  return p.lateral.D * tire_mu(p, fz) * fz * p.lateral.C * tire_lateral_b(p, s, fz);
}

// The combined-slip weighting cos(C atan(B s - E (B s - atan(B s)))) (no shift).
inline double mf_weight(double b, double c, double e, double s, bool fast) {
  const double bs = b * s;
  if (!fast) return std::cos(c * std::atan(bs - e * (bs - std::atan(bs))));
  const double a = c * fast_atan(bs - e * (bs - fast_atan(bs)));
  return fast_sin_pi(M_PI_2 - std::fabs(a));  // cos(a), |a| <= pi for c <= 2
}

// Combined slip by the weighting functions (CombinedSlipParams): each pure-slip force at
// its own slip, times the other slip's weighting.
template <bool kFy>
inline TireForces tire_forces_weighted(const TireParams& p, const TireShape& s, double fz,
                                       double kappa, double tan_alpha) {
  TireForces f;
  if (!(fz > 0.0)) return f;
  const CombinedSlipParams& w = p.combined;
  const double mu = tire_mu(p, fz);
  const double bx = p.longitudinal.B, by = tire_lateral_b(p, s, fz);
  const bool fast = s.fast_x && s.fast_y && w.rcx1 <= 2.0 && w.rcy1 <= 2.0;
  const double alpha = fast ? fast_atan(tan_alpha) : std::atan(tan_alpha);
  const double fx0 = p.longitudinal.D * mu * fz *
                     mf_shape_sel(s.fast_x, bx * kappa, p.longitudinal.C, p.longitudinal.E);
  const double bxa =
      w.rbx1 * std::cos(fast ? fast_atan(w.rbx2 * kappa) : std::atan(w.rbx2 * kappa));
  f.fx = fx0 * mf_weight(bxa, w.rcx1, w.rex1, alpha, fast);
  if (kFy) {
    const double fy0 = p.lateral.D * mu * fz *
                       mf_shape_sel(s.fast_y, by * tan_alpha, p.lateral.C, p.lateral.E);
    const double byk = w.rby1 * std::cos(std::atan(w.rby2 * (alpha - w.rby3)));
    f.fy = fy0 * mf_weight(byk, w.rcy1, w.rey1, kappa, fast);
  }
  return f;
}

// Forces for load fz [N], slip ratio kappa [-] and slip tan_alpha [-] (Fy has its sign).
// Combined slip (p.combined.weighting = false, the default): both slips are normalized by
// their peak slip, the resultant s is fed to each pure-slip curve and the force is split
// by direction, so (Fx/Dx)^2 + (Fy/Dy)^2 <= 1. Else the weighting functions (above).
// kFy = false skips Fy (left 0): the wheel-spin equations need Fx only, and Fx is computed
// by the same operations either way (bit-identical).
// What tire_forces computed for a load and slip angle that does not depend on kappa
// (friction ellipse only; valid = false: the weighting functions), so tire_fx_at can give
// the longitudinal force at other slip ratios cheaply (the etd2 Jacobian's evaluations).
struct TireAtLoad {
  bool valid = false;
  double dx = 0.0, sy = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(valid, dx, sy); }
};

// rec (optional): records the TireAtLoad of this load and slip angle.
template <bool kFy = true>
inline TireForces tire_forces(const TireParams& p, const TireShape& s, double fz,
                              double kappa, double tan_alpha, TireAtLoad* rec = nullptr) {
  if (p.combined.weighting) {
    if (rec) rec->valid = false;
    return tire_forces_weighted<kFy>(p, s, fz, kappa, tan_alpha);
  }
  TireForces f;
  if (!(fz > 0.0)) {
    if (rec) *rec = {true, 0.0, 0.0};
    return f;
  }
  if (s.fast_algebra) {
    // tire_mu and tire_lateral_b rewritten: B_y = B (Fz0 / fz) g(fz) mu / mu(fz) with
    // g = 2x / ((1 + x^2) g_nominal), x = fz / (pky2 Fz0), is 2 B mu / (pky2 g_nominal
    // (1 + x^2) mu(fz)).
    const double mu_fz = p.mu * fmax_inl(0.1, 1.0 + p.pdy2 * (fz - p.fz_nominal) * s.inv_fz0);
    const double dx = p.longitudinal.D * mu_fz * fz;
    const double dy = p.lateral.D * mu_fz * fz;
    const double bx = p.longitudinal.B;
    const double x = fz * s.inv_pky2_fz0;
    const double by = p.pky2 > 0.0 ? p.lateral.B * p.mu * s.c_by / ((1.0 + x * x) * mu_fz)
                                   : p.lateral.B * p.mu / mu_fz;
    const double sx = kappa * bx * s.inv_ux;
    const double sy = tan_alpha * by * s.inv_uy;
    if (rec) *rec = {true, dx, sy};
    const double sn = std::sqrt(sx * sx + sy * sy);
    if (sn < 1e-12) {
      f.fx = dx * p.longitudinal.C * bx * kappa;
      if (kFy) f.fy = dy * p.lateral.C * by * tan_alpha;
      return f;
    }
    const double inv_sn = 1.0 / sn;
    f.fx = dx * mf_shape_sel(s.fast_x, sn * s.ux_star, p.longitudinal.C, p.longitudinal.E) *
           (sx * inv_sn);
    if (kFy)
      f.fy = dy * mf_shape_sel(s.fast_y, sn * s.uy_star, p.lateral.C, p.lateral.E) *
             (sy * inv_sn);
    return f;
  }
  const double mu = tire_mu(p, fz);
  const double dx = p.longitudinal.D * mu * fz;
  const double dy = p.lateral.D * mu * fz;
  const double bx = p.longitudinal.B;
  const double by = tire_lateral_b(p, s, fz);
  const double sx = kappa * bx / s.ux_star;
  const double sy = tan_alpha * by / s.uy_star;
  if (rec) *rec = {true, dx, sy};
  // sqrt, not hypot: normalized slips stay far from overflow, and glibc's hypot (correctly
  // rounded) cost ~10 % of a whole L2 step in a profile.
  const double sn = std::sqrt(sx * sx + sy * sy);
  if (sn < 1e-12) {  // linear limit, exact at zero slip
    f.fx = dx * p.longitudinal.C * bx * kappa;
    if (kFy) f.fy = dy * p.lateral.C * by * tan_alpha;
    return f;
  }
  const double fx0 = dx * mf_shape_sel(s.fast_x, sn * s.ux_star, p.longitudinal.C,
                                        p.longitudinal.E);
  f.fx = fx0 * (sx / sn);
  if (kFy) {
    const double fy0 = dy * mf_shape_sel(s.fast_y, sn * s.uy_star, p.lateral.C, p.lateral.E);
    f.fy = fy0 * (sy / sn);
  }
  return f;
}

// tire_forces for four tires at once (the L2 model's wheels), structure of arrays: lane i
// is tire_forces<true>(tire i, s, fz[i], kappa[i], tan_alpha[i], &rec[i]) bit for bit,
// on the path the default physics takes (fast_algebra with the fast curves, no weighting
// functions: can_batch). Every lane computes every branch and keeps its own, so the
// compiler evaluates the lanes together on the baseline x86-64 target (SSE2, two lanes
// per instruction; no runtime CPU dispatch): the same IEEE operations in the same order
// per lane as the scalar code, so the same bits on any CPU.
inline bool can_batch(const TireParams& front, const TireParams& rear, const TireShape& s) {
  return s.fast_algebra && s.fast_x && s.fast_y && !front.combined.weighting &&
         !rear.combined.weighting;
}

namespace lanes {
constexpr int kN = 4;
// fast_atan, lane by lane (see fast_atan: the same operations).
inline void fast_atan(const double* x, double* out) {
  constexpr const double* c = kFastAtanCoef;
  for (int i = 0; i < kN; ++i) {
    const double a = std::fabs(x[i]);
    const bool big = a > 1.0;
    const double inv = 1.0 / a;
    const double t = big ? inv : a;
    const double z = t * t, z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
    const double p = ((c[0] + c[1] * z) + z2 * (c[2] + c[3] * z)) +
                     z4 * ((c[4] + c[5] * z) + z2 * (c[6] + c[7] * z)) +
                     z8 * ((c[8] + c[9] * z) + z2 * (c[10] + c[11] * z));
    const double r = t * p;
    const double m = M_PI_2 - r;
    out[i] = std::copysign(big ? m : r, x[i]);
  }
}
// fast_sin_pi, lane by lane.
inline void fast_sin_pi(const double* a, double* out) {
  constexpr const double* c = kFastSinCoef;
  for (int i = 0; i < kN; ++i) {
    const double b = std::fabs(a[i]) - M_PI_2;
    const double w = b * b, w2 = w * w, w4 = w2 * w2;
    const double p = ((c[0] + c[1] * w) + w2 * (c[2] + c[3] * w)) +
                     w4 * ((c[4] + c[5] * w) + w2 * (c[6] + c[7] * w));
    out[i] = std::copysign(p, a[i]);
  }
}
// mf_shape_fast(bx[i], C[i], E[i]), lane by lane.
inline void mf_shape_fast(const double* bx, const double* C, const double* E, double* out) {
  alignas(16) double a[kN], u[kN];
  fast_atan(bx, a);
  for (int i = 0; i < kN; ++i) u[i] = bx[i] - E[i] * (bx[i] - a[i]);
  fast_atan(u, a);
  for (int i = 0; i < kN; ++i) u[i] = C[i] * a[i];
  fast_sin_pi(u, out);
}
}  // namespace lanes

// The four tires' parameters as lanes (tire_forces4, tire_fx_at4), gathered once per
// vehicle (ModelContext::lanes: front, front, rear, rear) instead of in every call.
struct TireLanes {
  alignas(16) double mu[4], pdy2[4], fz0[4], Dx[4], Dy[4], Bx[4], By0[4], Cx[4], Cy[4], Ex[4],
      Ey[4], pky2[4];
  int n_pky2 = 0;  // lanes with pky2 > 0: at 0 or 4 one lateral stiffness law serves all
  template <class Ar>
  void archive(Ar& ar) { ar(mu, pdy2, fz0, Dx, Dy, Bx, By0, Cx, Cy, Ex, Ey, pky2, n_pky2); }

  static TireLanes of(const TireParams* const p[4]) {
    TireLanes t;
    for (int i = 0; i < 4; ++i) {
      const TireParams& q = *p[i];
      t.mu[i] = q.mu, t.pdy2[i] = q.pdy2, t.fz0[i] = q.fz_nominal;
      t.Dx[i] = q.longitudinal.D, t.Dy[i] = q.lateral.D, t.Bx[i] = q.longitudinal.B;
      t.By0[i] = q.lateral.B, t.Cx[i] = q.longitudinal.C, t.Cy[i] = q.lateral.C;
      t.Ex[i] = q.longitudinal.E, t.Ey[i] = q.lateral.E, t.pky2[i] = q.pky2;
      t.n_pky2 += q.pky2 > 0.0;
    }
    return t;
  }
  static TireLanes of(const TireParams& front, const TireParams& rear) {
    const TireParams* p[4] = {&front, &front, &rear, &rear};
    return of(p);
  }
};

inline void tire_forces4_lanes(const TireLanes& t, const TireShape& s, const double fz[4],
                               const double kappa[4], const double tan_alpha[4],
                               TireForces out[4], TireAtLoad rec[4]) {
  constexpr int N = lanes::kN;
  const double *mu = t.mu, *pdy2 = t.pdy2, *fz0 = t.fz0, *Dx = t.Dx, *Dy = t.Dy, *Bx = t.Bx,
               *By0 = t.By0, *Cx = t.Cx, *Cy = t.Cy, *Ex = t.Ex, *Ey = t.Ey, *pky2 = t.pky2;
  alignas(16) double dx[N], dy[N], by[N], sx[N], sy[N], sn[N], ux[N], uy[N], shx[N], shy[N],
      fx[N], fy[N], mufz[N];
  for (int i = 0; i < N; ++i) {
    // tire_forces' fast_algebra branch, operation by operation.
    const double load = 1.0 + pdy2[i] * (fz[i] - fz0[i]) * s.inv_fz0;
    const double mu_fz = mu[i] * (load > 0.1 ? load : 0.1);  // fmax(0.1, load), NaN: 0.1
    dx[i] = Dx[i] * mu_fz * fz[i];
    dy[i] = Dy[i] * mu_fz * fz[i];
    mufz[i] = mu_fz;
  }
  // The lateral stiffness law of each lane; one law alone when all lanes share it (the
  // axle tires do: axle_tire changes lateral.B only).
  if (t.n_pky2 == N) {
    for (int i = 0; i < N; ++i) {
      const double x = fz[i] * s.inv_pky2_fz0;
      by[i] = By0[i] * mu[i] * s.c_by / ((1.0 + x * x) * mufz[i]);
    }
  } else if (t.n_pky2 == 0) {
    for (int i = 0; i < N; ++i) by[i] = By0[i] * mu[i] / mufz[i];
  } else {
    for (int i = 0; i < N; ++i) {
      const double x = fz[i] * s.inv_pky2_fz0;
      const double by_k = By0[i] * mu[i] * s.c_by / ((1.0 + x * x) * mufz[i]);
      const double by_p = By0[i] * mu[i] / mufz[i];
      by[i] = pky2[i] > 0.0 ? by_k : by_p;
    }
  }
  for (int i = 0; i < N; ++i) {
    sx[i] = kappa[i] * Bx[i] * s.inv_ux;
    sy[i] = tan_alpha[i] * by[i] * s.inv_uy;
    sn[i] = std::sqrt(sx[i] * sx[i] + sy[i] * sy[i]);
    ux[i] = sn[i] * s.ux_star;
    uy[i] = sn[i] * s.uy_star;
  }
  lanes::mf_shape_fast(ux, Cx, Ex, shx);
  lanes::mf_shape_fast(uy, Cy, Ey, shy);
  for (int i = 0; i < N; ++i) {
    const double inv_sn = 1.0 / sn[i];
    const double fx_lin = dx[i] * Cx[i] * Bx[i] * kappa[i];
    const double fy_lin = dy[i] * Cy[i] * by[i] * tan_alpha[i];
    const double fx_mf = dx[i] * shx[i] * (sx[i] * inv_sn);
    const double fy_mf = dy[i] * shy[i] * (sy[i] * inv_sn);
    const double fx_any = sn[i] < 1e-12 ? fx_lin : fx_mf;
    const double fy_any = sn[i] < 1e-12 ? fy_lin : fy_mf;
    fx[i] = fz[i] > 0.0 ? fx_any : 0.0;
    fy[i] = fz[i] > 0.0 ? fy_any : 0.0;
    dx[i] = fz[i] > 0.0 ? dx[i] : 0.0;
    sy[i] = fz[i] > 0.0 ? sy[i] : 0.0;
  }
  for (int i = 0; i < N; ++i) {
    out[i].fx = fx[i];
    out[i].fy = fy[i];
    rec[i] = TireAtLoad{true, dx[i], sy[i]};
  }
}

// tire_forces(...).fx at slip kappa, for the load fz and slip angle tan_alpha that rec
// was recorded at: by tire_forces' own operations from its recorded constants (equal to
// its fx), without the load-dependent friction and stiffness laws.
inline double tire_fx_at(const TireParams& p, const TireShape& s, const TireAtLoad& rec,
                         double fz, double kappa, double tan_alpha) {
  if (!rec.valid) return tire_forces<false>(p, s, fz, kappa, tan_alpha).fx;
  const double bx = p.longitudinal.B;
  const double sx = s.fast_algebra ? kappa * bx * s.inv_ux : kappa * bx / s.ux_star;
  const double sn = std::sqrt(sx * sx + rec.sy * rec.sy);
  if (sn < 1e-12) return rec.dx * p.longitudinal.C * bx * kappa;
  return rec.dx * mf_shape_sel(s.fast_x, sn * s.ux_star, p.longitudinal.C,
                               p.longitudinal.E) *
         (s.fast_algebra ? sx * (1.0 / sn) : sx / sn);
}

// tire_fx_at for four tires at once (the etd2 Jacobian's evaluations on L2): lane i is
// tire_fx_at(tire i, s, rec[i], fz, kappa[i], tan_alpha) bit for bit, for records of the
// fast path (rec[i].valid, s.fast_algebra and s.fast_x: can_batch), every branch computed
// per lane as in tire_forces4.
inline void tire_fx_at4_lanes(const TireLanes& t, const TireShape& s,
                              const TireAtLoad* const rec[4], const double kappa[4],
                              double out[4]) {
  constexpr int N = lanes::kN;
  const double *Bx = t.Bx, *Cx = t.Cx, *Ex = t.Ex;
  alignas(16) double dx[N], sy[N], sx[N], sn[N], ux[N], shx[N];
  for (int i = 0; i < N; ++i) dx[i] = rec[i]->dx, sy[i] = rec[i]->sy;
  for (int i = 0; i < N; ++i) {
    sx[i] = kappa[i] * Bx[i] * s.inv_ux;
    sn[i] = std::sqrt(sx[i] * sx[i] + sy[i] * sy[i]);
    ux[i] = sn[i] * s.ux_star;
  }
  lanes::mf_shape_fast(ux, Cx, Ex, shx);
  for (int i = 0; i < N; ++i) {
    const double lin = dx[i] * Cx[i] * Bx[i] * kappa[i];
    const double mf = dx[i] * shx[i] * (sx[i] * (1.0 / sn[i]));
    out[i] = sn[i] < 1e-12 ? lin : mf;
  }
}

// tire_forces4 and tire_fx_at4 (tire.cpp): the lanes above compiled twice, for the
// baseline x86-64 target (SSE2: two lanes per instruction) and for AVX2 (four), and the
// AVX2 build used where the CPU has it (chosen once, when the module loads). Both run the
// same IEEE operations per lane: no FMA (the avx2 target does not enable it, and
// -ffp-contract=off), add, multiply, divide and sqrt correctly rounded in either, selects
// and sign operations exact. So the bits are the same on every CPU; tests/test_fast_tire.py
// compares the two builds bit for bit where the CPU has AVX2.
enum class Tire4Build { Baseline = 0, Avx2 = 1 };
void tire_forces4(const TireLanes& t, const TireShape& s, const double fz[4],
                  const double kappa[4], const double tan_alpha[4], TireForces out[4],
                  TireAtLoad rec[4]);
void tire_fx_at4(const TireLanes& t, const TireShape& s, const TireAtLoad* const rec[4],
                 const double kappa[4], double out[4]);
// One build explicitly (the tests); false where that build is not available here.
bool tire_forces4_with(Tire4Build b, const TireLanes& t, const TireShape& s,
                       const double fz[4], const double kappa[4], const double tan_alpha[4],
                       TireForces out[4], TireAtLoad rec[4]);
bool tire_fx_at4_with(Tire4Build b, const TireLanes& t, const TireShape& s,
                      const TireAtLoad* const rec[4], const double kappa[4], double out[4]);
Tire4Build tire4_build();  // the build in use

}  // namespace vdsim
