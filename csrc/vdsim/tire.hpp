// Magic Formula tire with load sensitivity and combined slip on the friction ellipse.
// Pure functions of (load, slip, params); the per-parameter constants live in TireShape.
#pragma once
#include <cmath>

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
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < 0.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Magic Formula shape sin(C atan(B x - E (B x - atan(B x)))) for bx = B x.
inline double mf_shape(double bx, double C, double E) {
  return std::sin(C * std::atan(bx - E * (bx - std::atan(bx))));
}

struct TireShape {
  double ux_star = 1.0;   // longitudinal peak in units of B*kappa
  double uy_star = 1.0;   // lateral peak in units of B*tan(alpha)
  double g_nominal = 1.0;  // stiffness load law at Fz0

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
  return p.mu * std::fmax(0.1, 1.0 + p.pdy2 * dfz);
}

// Lateral stiffness factor B_y at load fz, chosen so that the cornering stiffness
// B_y C_y D_y(fz) follows stiffness_law while D_y follows tire_mu.
inline double tire_lateral_b(const TireParams& p, const TireShape& s, double fz) {
  if (p.pky2 <= 0.0) return p.lateral.B * p.mu / tire_mu(p, fz);  // stiffness prop. to load
  const double g = TireShape::stiffness_law(fz / (p.pky2 * p.fz_nominal)) / s.g_nominal;
  return p.lateral.B * (p.fz_nominal / fz) * g * p.mu / tire_mu(p, fz);
}

// Forces for load fz [N], slip ratio kappa [-] and slip tan_alpha [-] (Fy has its sign).
// Combined slip: both slips are normalized by their peak slip, the resultant s is fed to
// each pure-slip curve and the force is split by direction, so (Fx/Dx)^2 + (Fy/Dy)^2 <= 1.
inline TireForces tire_forces(const TireParams& p, const TireShape& s, double fz,
                              double kappa, double tan_alpha) {
  TireForces f;
  if (!(fz > 0.0)) return f;
  const double mu = tire_mu(p, fz);
  const double dx = p.longitudinal.D * mu * fz;
  const double dy = p.lateral.D * mu * fz;
  const double bx = p.longitudinal.B;
  const double by = tire_lateral_b(p, s, fz);
  const double sx = kappa * bx / s.ux_star;
  const double sy = tan_alpha * by / s.uy_star;
  // sqrt, not hypot: normalized slips stay far from overflow, and glibc's hypot (correctly
  // rounded) cost ~10 % of a whole L2 step in a profile.
  const double sn = std::sqrt(sx * sx + sy * sy);
  if (sn < 1e-12) {  // linear limit, exact at zero slip
    f.fx = dx * p.longitudinal.C * bx * kappa;
    f.fy = dy * p.lateral.C * by * tan_alpha;
    return f;
  }
  const double fx0 = dx * mf_shape(sn * s.ux_star, p.longitudinal.C, p.longitudinal.E);
  const double fy0 = dy * mf_shape(sn * s.uy_star, p.lateral.C, p.lateral.E);
  f.fx = fx0 * (sx / sn);
  f.fy = fy0 * (sy / sn);
  return f;
}

}  // namespace vdsim
