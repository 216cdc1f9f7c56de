#include "model_l1.hpp"

#include "fminmax.hpp"

namespace vdsim {

namespace {

// kFull = false: the wheel-spin rates only, bit-identical to the full derivative's (see
// deriv_l2_impl).
template <bool kFull>
void deriv_l1_impl(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
                   Aux* aux, WheelPoints* pts = nullptr) {
  if (kFull) {  // the lagged slips' rates (relaxed_slip sets them when the lag is on)
    for (int i = 0; i < 4; ++i) ds[kTa0 + i] = 0.0;
    ds[kAm] = ds[kAi] = 0.0;  // the cascade's states (the session sets their rates)
  }
  const VehicleParams& p = *ctx.vehicle;
  const LowSpeedParams& low = *ctx.low;
  const double L = p.wheelbase();
  const double m = p.mass;
  const double vx = s[kVx], vy = s[kVy], r = s[kR];
  const double cd = in.cos_steer, sd = in.sin_steer;

  // Axle loads with lagged longitudinal transfer; each axle has two identical tires.
  const double dfz = m * s[kAxF] * p.cg_height / L;
  const double fz_axle[2] = {fmax_inl(0.0, m * kGravity * p.cg_to_rear / L - dfz),
                             fmax_inl(0.0, m * kGravity * p.cg_to_front / L + dfz)};
  const double x_axle[2] = {p.cg_to_front, -p.cg_to_rear};

  double fx_body = 0.0, fy_body = 0.0, mz = 0.0;
  for (int i = 0; i < 2; ++i) {
    const double vxh = vx, vyh = vy + r * x_axle[i];
    const double c = i == 0 ? cd : 1.0, sn = i == 0 ? sd : 0.0;
    const double vxw = vxh * c + vyh * sn, vyw = -vxh * sn + vyh * c;
    const double omega = s[kW0 + i];
    double kappa, tan_a;
    wheel_slip(vxw, vyw, omega, p.wheel_radius, low.slip_speed_floor, kappa, tan_a,
               ctx.shape.fast_algebra);
    const double tan_kin = tan_a;
    tan_a = relaxed_slip(s, i, tan_kin, vxw, p.tire, low, kFull ? &ds : nullptr);
    // The axle's two tires: at half the axle load each, or, with roll_stiffness_front
    // set, at half the load -+ the axle's share of the lateral transfer m ay h / t (the
    // two-track's quasi-static transfer folded into the single track's axle curve).
    double fxw, fyw_sum;
    WheelPoint* wp = kFull && pts ? &pts->w[i] : nullptr;
    if (wp) {
      *wp = WheelPoint{};
      wp->axle = i;
      wp->vxw = vxw;
      wp->den = fmax_inl(std::fabs(vxw), low.slip_speed_floor);
      wp->tan_a = tan_a;
      wp->drive = in.drive[i];
      wp->brake = in.brake[i];
      wp->inertia = 2.0 * p.wheel_inertia;
    }
    if (std::isnan(p.roll_stiffness_front)) {
      const TireForces t = tire_forces<kFull>(ctx.tire[i], ctx.shape, 0.5 * fz_axle[i], kappa,
                                              tan_a, wp ? &wp->tire[0] : nullptr);
      fxw = 2.0 * t.fx;
      fyw_sum = 2.0 * t.fy;
      if (wp) {
        wp->fz[0] = 0.5 * fz_axle[i];
        wp->scale = 2.0;
      }
    } else {
      const double share = i == 0 ? p.roll_stiffness_front : 1.0 - p.roll_stiffness_front;
      const double d = share * m * s[kAyF] * p.cg_height / p.track;
      const TireForces in_ = tire_forces<kFull>(ctx.tire[i], ctx.shape,
                                                fmax_inl(0.0, 0.5 * fz_axle[i] - d), kappa,
                                                tan_a, wp ? &wp->tire[0] : nullptr);
      const TireForces out = tire_forces<kFull>(ctx.tire[i], ctx.shape,
                                                fmax_inl(0.0, 0.5 * fz_axle[i] + d), kappa,
                                                tan_a, wp ? &wp->tire[1] : nullptr);
      fxw = in_.fx + out.fx;
      fyw_sum = in_.fy + out.fy;
      if (wp) {
        wp->n_tires = 2;
        wp->fz[0] = fmax_inl(0.0, 0.5 * fz_axle[i] - d);
        wp->fz[1] = fmax_inl(0.0, 0.5 * fz_axle[i] + d);
      }
    }
    ds[kW0 + i] = wheel_accel(omega, in.drive[i] - fxw * p.wheel_radius, in.brake[i],
                              2.0 * p.wheel_inertia);
    if (wp) record_hub(*pts, i, c, sn, x_axle[i], 0.0, vxw, kappa, 2.0 * p.wheel_inertia, ctx);
    if (!kFull) continue;
    const double fyw = fyw_sum;
    const double fxb = fxw * c - fyw * sn, fyb = fxw * sn + fyw * c;
    fx_body += fxb;
    fy_body += fyb;
    mz += x_axle[i] * fyb;
    if (aux) aux->wheel[i] = {fxw, fyw, fz_axle[i], kappa, std::atan(tan_a), tan_kin};
  }
  ds[kW0 + 2] = ds[kW0 + 3] = 0.0;
  if (!kFull) return;
  if (pts) {
    pts->n = pts->hub.n_wheels = 2;
    for (int i = 2; i < 4; ++i) pts->hub.kself[i] = 0.0;
  }
  fx_body -= resistance_force(vx, fz_axle[0] + fz_axle[1], p, low);

  body_derivative(s, in.steer, fx_body, fy_body, mz, p, low, ds, aux);
}

}  // namespace

void deriv_l1(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
              Aux* aux, WheelPoints* pts) {
  deriv_l1_impl<true>(s, in, ctx, ds, aux, pts);
}

void deriv_l1_wheels(const State& s, const WheelInputs& in, const ModelContext& ctx,
                     State& ds) {
  deriv_l1_impl<false>(s, in, ctx, ds, nullptr);
}

}  // namespace vdsim
