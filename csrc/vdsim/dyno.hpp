// Chassis-dyno bench: a vehicle on rollers, longitudinal only (docs/DYNO.md; the
// reference bench in ../shared/reference/dyno_bench.md).
//
//   m_eff dv/dt = (T_f + T_r) / r - m g sin(grade) - R
//
// with m_eff = m + J_roller / r^2 + 4 J_wheel / r^2, per-axle motor torques T_f, T_r
// (torque and power caps, the front share without spill-over, the speed-limiter taper)
// through a second-order lag, and R = road load A + B |v| + C v^2 plus the friction brake,
// which acts like friction: it can bring v to zero within a substep but never reverse it,
// and at rest holds v = 0 exactly while the applied force does not exceed it.
//
// The caller's dt is cut into n = ceil(dt / max_substep) equal substeps; each does one
// RK4 step of the torque lag, then updates v by one of two rules (speed_update):
//  - kSpeedUpdateMean (the default): the demand (power cap, limiter) is taken at a midpoint
//    speed predicted from the torque in force, v moves by the torque's mean over the
//    substep (its integral from the same RK4 stages) and the road load at the substep's
//    midpoint speed: second order in the substep, like the vehicle's etd2 stepping;
//  - kSpeedUpdateEnd (the published bench's rule, which reproduces its delay table): explicit
//    Euler on v with the torque at the end of the substep. First order: taking the end
//    torque for the whole substep removes h/2 of the lag, so with 20 ms substeps a 0.3 s
//    transport delay reads ~1 % better tracking than the bench really gives.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "fminmax.hpp"
#include "schedule.hpp"

namespace vdsim {

struct DynoParams {
  double mass = 2100.0;             // [kg]
  double wheel_radius = 0.36;       // [m]
  double wheel_inertia = 1.4;       // per wheel incl. driveline share [kg m^2], 4 wheels
  double roller_inertia = 40.0;     // [kg m^2]
  double front_torque_max = 2700.0;  // front axle motor at the wheels [N m]
  double front_power_max = 74e3;     // [W]
  double rear_torque_max = 3700.0;   // [N m]
  double rear_power_max = 165e3;     // [W]
  double front_share = 0.42;         // share of the demand sent to the front axle [-]
  double speed_limit = 51.4;         // [m/s]
  double limiter_taper = 2.0;        // demand tapers to 0 over the last [m/s]
  double torque_lag_hz = 5.0;        // second-order torque lag natural frequency [Hz]
  double torque_lag_zeta = 0.7;      // its damping ratio [-]
  double brake_torque_max = 1500.0;  // per wheel [N m], 4 wheels
  double road_load_a = 111.0;        // [N]
  double road_load_b = 0.99;         // [N/(m/s)]
  double road_load_c = 0.45;         // [N/(m/s)^2]
  double grade = 0.0;                // road grade [rad], positive uphill
  double gravity = 9.81;             // [m/s^2]
  double max_substep = 0.02;         // [s]
  int speed_update = 1;              // kSpeedUpdateMean or kSpeedUpdateEnd (see above)

  template <class Ar>
  void archive(Ar& ar) {
    ar(mass, wheel_radius, wheel_inertia, roller_inertia, front_torque_max, front_power_max,
       rear_torque_max, rear_power_max, front_share, speed_limit, limiter_taper, torque_lag_hz,
       torque_lag_zeta, brake_torque_max, road_load_a, road_load_b, road_load_c, grade, gravity,
       max_substep, speed_update);
  }

  double effective_mass() const {
    const double r2 = wheel_radius * wheel_radius;
    return mass + roller_inertia / r2 + 4.0 * wheel_inertia / r2;
  }
  double total_brake_torque() const { return 4.0 * brake_torque_max; }
};

inline constexpr int kSpeedUpdateEnd = 0;   // the published bench: Euler, end torque
inline constexpr int kSpeedUpdateMean = 1;  // second order: mean torque, midpoint load

struct DynoState {
  double v = 0.0;                    // roller surface speed [m/s]
  std::array<double, 2> torque{};    // lagged axle torques front, rear [N m]
  std::array<double, 2> torque_rate{};  // their derivatives [N m/s]
  double accel = 0.0;                // dv/dt over the last step [m/s^2]
  template <class Ar>
  void archive(Ar& ar) { ar(v, torque, torque_rate, accel); }
};

// Axle cap at wheel speed omega: T_peak at (near) rest, else min(T_peak, P / omega).
inline double axle_cap(double torque_max, double power_max, double omega) {
  return omega <= 1e-3 ? torque_max : fmin_inl(torque_max, power_max / omega);
}

// Demanded axle torques (front, rear) for a throttle in [0, 1] at speed v.
inline std::array<double, 2> dyno_demand(const DynoParams& p, double throttle, double v) {
  const double omega = std::fabs(v) / p.wheel_radius;
  const double cap_f = axle_cap(p.front_torque_max, p.front_power_max, omega);
  const double cap_r = axle_cap(p.rear_torque_max, p.rear_power_max, omega);
  const double limiter =
      std::clamp((p.speed_limit - v) / p.limiter_taper, 0.0, 1.0);
  const double d = std::clamp(throttle, 0.0, 1.0) * limiter * (cap_f + cap_r);
  return {fmin_inl(cap_f, p.front_share * d), fmin_inl(cap_r, (1.0 - p.front_share) * d)};
}

// One RK4 step of x'' + 2 zeta wn x' + wn^2 x = wn^2 u, u held; returns the mean of x
// over the step, the integral of x from the same stages (RK4 on the augmented z' = x).
inline double lag_rk4(double& x, double& xd, double u, double wn, double zeta, double h) {
  auto f = [&](double a, double ad) { return wn * wn * (u - a) - 2.0 * zeta * wn * ad; };
  const double k1x = xd, k1v = f(x, xd);
  const double k2x = xd + 0.5 * h * k1v, k2v = f(x + 0.5 * h * k1x, xd + 0.5 * h * k1v);
  const double k3x = xd + 0.5 * h * k2v, k3v = f(x + 0.5 * h * k2x, xd + 0.5 * h * k2v);
  const double k4x = xd + h * k3v, k4v = f(x + h * k3x, xd + h * k3v);
  const double mean = x + h / 6.0 * (k1x + k2x + k3x);
  x += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
  xd += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
  return mean;
}

// Number of substeps for a caller's dt (ceil with a relative tolerance: 0.06 / 0.02 is 3).
inline int64_t dyno_substeps(double dt, double max_substep) {
  return std::max<int64_t>(1, ceil_ticks(dt, max_substep));
}

// Resistance acting like friction at speed v: road load plus the brake [N].
inline double dyno_resist(const DynoParams& p, double v, double brake) {
  return p.road_load_a + p.road_load_b * std::fabs(v) + p.road_load_c * v * v +
         std::clamp(brake, 0.0, 1.0) * p.total_brake_torque() / p.wheel_radius;
}

// One substep of length h under throttle/brake in [0, 1].
inline void dyno_substep(const DynoParams& p, DynoState& s, double throttle, double brake,
                         double h) {
  const bool end_rule = p.speed_update == kSpeedUpdateEnd;
  const double m_eff = p.effective_mass();
  const double grade_force = p.mass * p.gravity * std::sin(p.grade);
  const double v = s.v;
  // The demand (power cap, limiter) at the start speed (the end rule) or at a midpoint
  // speed predicted from the torque in force (the mean rule).
  double v_demand = v;
  if (!end_rule && v != 0.0) {
    const double a0 = ((s.torque[0] + s.torque[1]) / p.wheel_radius - grade_force -
                       std::copysign(dyno_resist(p, v, brake), v)) / m_eff;
    const double v_mid = v + a0 * (0.5 * h);
    v_demand = (v_mid > 0.0) == (v > 0.0) ? v_mid : 0.0;
  }
  const auto demand = dyno_demand(p, throttle, v_demand);
  const double wn = 2.0 * M_PI * p.torque_lag_hz;
  double mean_torque = 0.0;
  for (int i = 0; i < 2; ++i) mean_torque += lag_rk4(s.torque[i], s.torque_rate[i],
                                                     demand[i], wn, p.torque_lag_zeta, h);
  const double drive = (end_rule ? s.torque[0] + s.torque[1] : mean_torque) / p.wheel_radius -
                       grade_force;
  // Friction-like resistance at the current speed (the end rule) or at the midpoint speed
  // of a half step under it (the mean rule; a midpoint past a sign change counts as 0).
  double resist = dyno_resist(p, v, brake);
  if (!end_rule && v != 0.0) {
    const double v_mid = v + (drive - std::copysign(resist, v)) / m_eff * (0.5 * h);
    resist = dyno_resist(p, (v_mid > 0.0) == (v > 0.0) ? v_mid : 0.0, brake);
  }
  double v_new;
  if (v == 0.0) {
    if (std::fabs(drive) <= resist) {
      v_new = 0.0;  // static: held exactly
    } else {
      v_new = (drive - std::copysign(resist, drive)) / m_eff * h;
    }
  } else {
    v_new = v + (drive - std::copysign(resist, v)) / m_eff * h;
    if ((v > 0.0 && v_new < 0.0) || (v < 0.0 && v_new > 0.0)) v_new = 0.0;  // snap, hold
  }
  s.v = v_new;
}

// Advances the bench by dt under a command held for dt; returns the speed.
inline double dyno_step(const DynoParams& p, DynoState& s, double throttle, double brake,
                        double dt) {
  const int64_t n = dyno_substeps(dt, p.max_substep);
  const double h = dt / static_cast<double>(n);
  const double v0 = s.v;
  for (int64_t i = 0; i < n; ++i) dyno_substep(p, s, throttle, brake, h);
  s.accel = (s.v - v0) / dt;
  return s.v;
}

}  // namespace vdsim
