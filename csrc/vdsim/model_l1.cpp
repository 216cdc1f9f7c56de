#include "model_l1.hpp"

namespace vdsim {

void deriv_l1(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
              Aux* aux) {
  const VehicleParams& p = *ctx.vehicle;
  const LowSpeedParams& low = *ctx.low;
  const double L = p.wheelbase();
  const double m = p.mass;
  const double vx = s[kVx], vy = s[kVy], r = s[kR];
  const double cd = std::cos(in.steer), sd = std::sin(in.steer);

  // Axle loads with lagged longitudinal transfer; each axle has two identical tires.
  const double dfz = m * s[kAxF] * p.cg_height / L;
  const double fz_axle[2] = {std::fmax(0.0, m * kGravity * p.cg_to_rear / L - dfz),
                             std::fmax(0.0, m * kGravity * p.cg_to_front / L + dfz)};
  const double x_axle[2] = {p.cg_to_front, -p.cg_to_rear};

  double fx_body = 0.0, fy_body = 0.0, mz = 0.0;
  for (int i = 0; i < 2; ++i) {
    const double vxh = vx, vyh = vy + r * x_axle[i];
    const double c = i == 0 ? cd : 1.0, sn = i == 0 ? sd : 0.0;
    const double vxw = vxh * c + vyh * sn, vyw = -vxh * sn + vyh * c;
    const double omega = s[kW0 + i];
    double kappa, tan_a;
    wheel_slip(vxw, vyw, omega, p.wheel_radius, low.slip_speed_floor, kappa, tan_a);
    const TireForces t = tire_forces(p.tire, ctx.shape, 0.5 * fz_axle[i], kappa, tan_a);
    const double fxw = 2.0 * t.fx, fyw = 2.0 * t.fy;
    const double fxb = fxw * c - fyw * sn, fyb = fxw * sn + fyw * c;
    fx_body += fxb;
    fy_body += fyb;
    mz += x_axle[i] * fyb;
    ds[kW0 + i] = wheel_accel(omega, in.drive[i] - fxw * p.wheel_radius, in.brake[i],
                              2.0 * p.wheel_inertia);
    if (aux) aux->wheel[i] = {fxw, fyw, fz_axle[i], kappa, std::atan(tan_a)};
  }
  fx_body -= resistance_force(vx, fz_axle[0] + fz_axle[1], p, low);

  ds[kW0 + 2] = ds[kW0 + 3] = 0.0;
  body_derivative(s, in.steer, fx_body, fy_body, mz, p, low, ds, aux);
}

}  // namespace vdsim
