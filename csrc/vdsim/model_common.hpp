// Pieces shared by the single-track and two-track models.
#pragma once
#include <algorithm>
#include <limits>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "fminmax.hpp"
#include "params.hpp"
#include "state.hpp"
#include "tire.hpp"

namespace vdsim {

struct ModelContext {
  const VehicleParams* vehicle;
  const LowSpeedParams* low;
  TireShape shape;
  TireParams tire[2];  // axle_tire(*vehicle, 0 front / 1 rear)
  TireLanes lanes;     // tire[0], tire[0], tire[1], tire[1]: L2's wheels (tire_forces4)
  // 1 / mass, 1 / yaw_inertia, 1 / wheel_radius^2 (record_hub; set with the tires)
  double inv_mass = 0.0, inv_yaw_inertia = 0.0, inv_r2 = 0.0;
  // vehicle and low point into the Session that holds this context: not written, the
  // Session rebinds them after reading (rebind_context), as its copy constructor does.
  template <class Ar>
  void archive(Ar& ar) {
    ar.skip(vehicle, low);
    ar(shape, tire, lanes, inv_mass, inv_yaw_inertia, inv_r2);
  }
};

// The tire of an axle (0 front, 1 rear): vehicle.tire with its lateral stiffness divided
// by 1 + c C_axle, c the axle's compliance steer and C_axle its two tires' cornering
// stiffness at static load, so that 1 / C_eff = 1 / C_axle + c (params.hpp). The force
// peak is unchanged; c = 0 returns vehicle.tire as it is. Throws when 1 + c C_axle <= 0.05
// (a negative compliance that would make the axle's stiffness 20x or infinite).
inline TireParams axle_tire(const VehicleParams& v, int axle) {
  TireParams t = v.tire;
  const double c = axle == 0 ? v.compliance_steer_front : v.compliance_steer_rear;
  if (c == 0.0) return t;
  const double share = (axle == 0 ? v.cg_to_rear : v.cg_to_front) / v.wheelbase();
  const double fz = 0.5 * v.mass * kGravity * share;
  const double c_axle = 2.0 * tire_cornering_stiffness(v.tire, TireShape::from(v.tire), fz);
  const double k = 1.0 + c * c_axle;
  if (!(k > 0.05)) {
    std::ostringstream msg;
    msg << "compliance_steer_" << (axle == 0 ? "front" : "rear") << " = " << c
        << " rad/N makes the axle's cornering stiffness negative or near-infinite (1 + c "
           "C_axle = " << k << " with C_axle = " << c_axle << " N/rad at static load); use "
           "a compliance above " << -0.95 / c_axle << " rad/N";
    throw std::invalid_argument(msg.str());
  }
  t.lateral.B /= k;
  return t;
}

// Net wheel acceleration for spin omega, given the torque from drive and tire.
// The brake is Coulomb friction: it opposes spin, and at rest holds while it can.
inline double wheel_accel(double omega, double t_other, double brake, double inertia) {
  double tb;
  if (omega > 0.0) tb = -brake;
  else if (omega < 0.0) tb = brake;
  else tb = -std::clamp(t_other, -brake, brake);
  return (t_other + tb) / inertia;
}

// Slips of one wheel from its hub velocity in the wheel frame.
// reciprocal: by one reciprocal of the denominator instead of two divisions (etd2's
// TireShape::fast_algebra; rounding differs, so the others keep the divisions).
inline void wheel_slip(double vxw, double vyw, double omega, double radius, double floor,
                       double& kappa, double& tan_alpha, bool reciprocal = false) {
  const double den = fmax_inl(std::fabs(vxw), floor);
  if (reciprocal) {
    const double inv = 1.0 / den;
    kappa = (omega * radius - vxw) * inv;
    tan_alpha = -vyw * inv;
    return;
  }
  kappa = (omega * radius - vxw) / den;
  tan_alpha = -vyw / den;
}

// The wheel-spin rates at state s from the points a full derivative captured at a state
// that differs from s in the spins only: by the same operations as that derivative's, so
// bit-identical to it (ds[kW0..]; the rest untouched).
inline void wheel_rates(const WheelPoints& pts, const State& s, const ModelContext& ctx,
                        State& ds) {
  const double R = ctx.vehicle->wheel_radius;
  // L2's four wheels on the default path: their tires at once (tire_fx_at4, bit for bit
  // the per-wheel tire_fx_at below).
  // L1's two axles of two tires each (roll_stiffness_front set): the same four lanes,
  // tire k of axle i in lane 2 i + k.
  double fx4[4];
  const bool can = can_batch(ctx.tire[0], ctx.tire[1], ctx.shape);
  bool batch = can && pts.n == 4, batch_l1 = can && pts.n == 2;
  for (int i = 0; batch && i < 4; ++i)
    batch = pts.w[i].n_tires == 1 && pts.w[i].tire[0].valid && pts.w[i].axle == i / 2;
  for (int i = 0; batch_l1 && i < 2; ++i)
    batch_l1 = pts.w[i].n_tires == 2 && pts.w[i].tire[0].valid && pts.w[i].tire[1].valid &&
               pts.w[i].axle == i;
  if (batch) {
    double kappa4[4];
    const TireAtLoad* recs[4];
    for (int i = 0; i < 4; ++i) {  // wheel i on axle i / 2, as ctx.lanes has them
      const WheelPoint& w = pts.w[i];
      kappa4[i] = (s[kW0 + i] * R - w.vxw) * (1.0 / w.den);
      recs[i] = &w.tire[0];
    }
    tire_fx_at4(ctx.lanes, ctx.shape, recs, kappa4, fx4);
  } else if (batch_l1) {
    double kappa4[4];
    const TireAtLoad* recs[4];
    for (int i = 0; i < 2; ++i) {
      const WheelPoint& w = pts.w[i];
      kappa4[2 * i] = kappa4[2 * i + 1] = (s[kW0 + i] * R - w.vxw) * (1.0 / w.den);
      recs[2 * i] = &w.tire[0];
      recs[2 * i + 1] = &w.tire[1];
    }
    tire_fx_at4(ctx.lanes, ctx.shape, recs, kappa4, fx4);
  }
  for (int i = 0; i < pts.n; ++i) {
    const WheelPoint& w = pts.w[i];
    const double omega = s[kW0 + i];
    double fx;
    if (batch) {
      fx = w.scale * fx4[i];
    } else if (batch_l1) {
      fx = fx4[2 * i] + fx4[2 * i + 1];  // tire 0's, then + tire 1's, as below
    } else {
      const double kappa = ctx.shape.fast_algebra ? (omega * R - w.vxw) * (1.0 / w.den)
                                                  : (omega * R - w.vxw) / w.den;
      const TireParams& tire = ctx.tire[w.axle];
      fx = tire_fx_at(tire, ctx.shape, w.tire[0], w.fz[0], kappa, w.tan_a);
      fx = w.n_tires == 2
               ? fx + tire_fx_at(tire, ctx.shape, w.tire[1], w.fz[1], kappa, w.tan_a)
               : w.scale * fx;
    }
    double t_other = w.drive - fx * R;
    if (w.coupling != 0.0) t_other += w.coupling * (s[kW0 + (i ^ 1)] - omega);
    ds[kW0 + i] = wheel_accel(omega, t_other, w.brake, w.inertia);
  }
}

// How each wheel's spin is coupled to the body, for the etd2 integrator's linear part.
// A wheel's rate depends on the body's vx, vy, r through its slip kappa = (omega R -
// vx_w) / den (den = max(|vx_w|, floor)), and its tire force moves the body: linearized,
// omega_i' = (J_i / R) u_i with the slip velocity u_i = omega_i R - et_i . (vx, vy, r),
// et_i = (1 + kappa sgn(vx_w) [|vx_w| > floor]) e_i, e_i = d(vx_w)/d(vx, vy, r); and the
// body's rates change by gb_i J_i per unit of u_i, gb_i = -(I_i / R^2) M^-1 e_i (M =
// diag(m, m, Iz), I_i the wheel's inertia), so the slip velocity's own rate is
// J_i (1 + kself_i) u_i, kself_i = -et_i . gb_i. (The slip angle's share through den and
// the combined-slip side force are left out: any such matrix keeps the method's order.)
//
// Records wheel i's coupling to the body into pts.hub (HubCoupling) at the full
// derivative's state: the wheel at (xw, yw) with inertia `inertia`, steered by (c, sn) =
// (cos, sin) of its steer, hub speed vxw, slip kappa; its slip denominator and its
// tires' recorded constants are in pts.w[i] (for j_lin; -inf without constants: the
// weighting functions).
inline void record_hub(WheelPoints& pts, int i, double c, double sn, double xw, double yw,
                       double vxw, double kappa, double inertia, const ModelContext& ctx) {
  const VehicleParams& p = *ctx.vehicle;
  HubCoupling& h = pts.hub;
  const double R = p.wheel_radius, q = inertia * ctx.inv_r2;
  h.radius = R;
  const double k = std::fabs(vxw) > ctx.low->slip_speed_floor ? std::copysign(kappa, vxw) : 0.0;
  const double e[3] = {c, sn, -yw * c + xw * sn};
  const double minv[3] = {ctx.inv_mass, ctx.inv_mass, ctx.inv_yaw_inertia};
  h.kself[i] = 0.0;
  for (int j = 0; j < 3; ++j) {
    h.et[i][j] = (1.0 + k) * e[j];
    h.gb[i][j] = -q * minv[j] * e[j];
    h.kself[i] -= h.et[i][j] * h.gb[i][j];
  }
  const WheelPoint& w = pts.w[i];
  const MFCurve& cx = ctx.tire[w.axle].longitudinal;
  const bool ok = w.tire[0].valid && (w.n_tires == 1 || w.tire[1].valid);
  const double dx = w.n_tires == 2 ? w.tire[0].dx + w.tire[1].dx : w.scale * w.tire[0].dx;
  h.j_lin[i] = ok ? -R * R * dx * cx.C * cx.B / (w.inertia * w.den)
                  : -std::numeric_limits<double>::infinity();
}

// The lateral slip a tire acts on: the kinematic tan_alpha, or with a relaxation length
// the lagged state s[kTa0 + i], whose rate is written to ds (ds may be null). Below the
// slip speed floor the lagged slip fades into the kinematic one (weight |vx_wheel| /
// floor): a first-order lag is a carcass spring that near standstill would hold a
// saturated slip's force and push a braked, stopped car backwards (Pacejka's low-speed
// caveat); there the kinematic blend of the body takes over anyway.
inline double relaxed_slip(const State& s, int i, double tan_alpha, double vxw,
                           const TireParams& tire, const LowSpeedParams& low, State* ds) {
  if (!(tire.relaxation_length > 0.0)) return tan_alpha;
  const double lagged = s[kTa0 + i];
  const double speed = std::fabs(vxw);
  if (ds)
    (*ds)[kTa0 + i] = fmax_inl(speed, low.slip_speed_floor) / tire.relaxation_length *
                      (tan_alpha - lagged);
  if (speed >= low.slip_speed_floor) return lagged;
  return tan_alpha + speed / low.slip_speed_floor * (lagged - tan_alpha);
}

// Below kinematic_blend_speed, vy and r relax towards the kinematic bicycle so that
// standstill steering neither creeps nor flips sign.
inline void kinematic_blend(const State& s, double steer, const VehicleParams& p,
                            const LowSpeedParams& low, double& dvy, double& dr) {
  const double w = 1.0 - std::fabs(s[kVx]) / low.kinematic_blend_speed;
  if (w <= 0.0) return;
  const double r_kin = s[kVx] * std::tan(steer) / p.wheelbase();
  const double vy_kin = r_kin * p.cg_to_rear;
  dvy += w * (vy_kin - s[kVy]) / low.kinematic_tau;
  dr += w * (r_kin - s[kR]) / low.kinematic_tau;
}

// Drag and rolling resistance along body x, opposing motion, faded in near standstill.
inline double resistance_force(double vx, double total_fz, const VehicleParams& p,
                               const LowSpeedParams& low) {
  const double drag = 0.5 * p.air_density * p.drag_coefficient * p.frontal_area * vx * std::fabs(vx);
  const double roll = p.rolling_resistance * total_fz *
                      std::clamp(vx / low.rolling_speed_eps, -1.0, 1.0);
  return drag + roll;
}

// Rigid-body equations in the body frame from the summed tire and resistance forces,
// shared by both levels: pose kinematics, dv/dt, dr/dt, the kinematic blend and the lag
// of the load-transfer accelerations.
inline void body_derivative(const State& s, double steer, double fx_body, double fy_body,
                            double mz, const VehicleParams& p, const LowSpeedParams& low,
                            State& ds, Aux* aux) {
  const double ax = fx_body / p.mass, ay = fy_body / p.mass;
  const double cpsi = std::cos(s[kPsi]), spsi = std::sin(s[kPsi]);
  ds[kX] = s[kVx] * cpsi - s[kVy] * spsi;
  ds[kY] = s[kVx] * spsi + s[kVy] * cpsi;
  ds[kPsi] = s[kR];
  ds[kVx] = ax + s[kR] * s[kVy];
  ds[kVy] = ay - s[kR] * s[kVx];
  ds[kR] = mz / p.yaw_inertia;
  kinematic_blend(s, steer, p, low, ds[kVy], ds[kR]);
  ds[kAxF] = (ax - s[kAxF]) / p.load_transfer_tau;
  ds[kAyF] = (ay - s[kAyF]) / p.load_transfer_tau;
  if (aux) {
    aux->ax = ax;
    aux->ay = ay;
  }
}

}  // namespace vdsim
