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
  // Per axle: hub velocity, slips and its two tires' loads (first pass); the tires (with
  // roll_stiffness_front set, the four at once on the default path: tire_forces4, bit for
  // bit the scalar calls); the spin rate and the body forces (second pass, axle order).
  // The axle's two tires: at half the axle load each, or, with roll_stiffness_front set,
  // at half the load -+ the axle's share of the lateral transfer m ay h / t (the
  // two-track's quasi-static transfer folded into the single track's axle curve).
  const bool split = !std::isnan(p.roll_stiffness_front);
  double c_a[2], sn_a[2], vxw_a[2], kappa4[4], tan4[4], tan_kin_a[2], fz4[4];
  for (int i = 0; i < 2; ++i) {
    const double vxh = vx, vyh = vy + r * x_axle[i];
    const double c = i == 0 ? cd : 1.0, sn = i == 0 ? sd : 0.0;
    const double vxw = vxh * c + vyh * sn, vyw = -vxh * sn + vyh * c;
    double kappa, tan_a;
    wheel_slip(vxw, vyw, s[kW0 + i], p.wheel_radius, low.slip_speed_floor, kappa, tan_a,
               ctx.shape.fast_algebra);
    tan_kin_a[i] = tan_a;
    tan_a = relaxed_slip(s, i, tan_a, vxw, p.tire, low, kFull ? &ds : nullptr);
    c_a[i] = c, sn_a[i] = sn, vxw_a[i] = vxw;
    kappa4[2 * i] = kappa4[2 * i + 1] = kappa;
    tan4[2 * i] = tan4[2 * i + 1] = tan_a;
    if (split) {
      const double share = i == 0 ? p.roll_stiffness_front : 1.0 - p.roll_stiffness_front;
      const double d = share * m * s[kAyF] * p.cg_height / p.track;
      fz4[2 * i] = fmax_inl(0.0, 0.5 * fz_axle[i] - d);
      fz4[2 * i + 1] = fmax_inl(0.0, 0.5 * fz_axle[i] + d);
    } else {
      fz4[2 * i] = fz4[2 * i + 1] = 0.5 * fz_axle[i];
    }
  }
  TireForces t4[4];
  TireAtLoad rec4[4];
  if (kFull && split && can_batch(ctx.tire[0], ctx.tire[1], ctx.shape)) {
    tire_forces4(ctx.lanes, ctx.shape, fz4, kappa4, tan4, t4, rec4);
  } else {
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < (split ? 2 : 1); ++k)
        t4[2 * i + k] = tire_forces<kFull>(ctx.tire[i], ctx.shape, fz4[2 * i + k],
                                           kappa4[2 * i], tan4[2 * i], &rec4[2 * i + k]);
  }
  for (int i = 0; i < 2; ++i) {
    const double c = c_a[i], sn = sn_a[i], vxw = vxw_a[i];
    const double kappa = kappa4[2 * i], tan_a = tan4[2 * i], omega = s[kW0 + i];
    const TireForces &t0 = t4[2 * i], &t1 = t4[2 * i + 1];
    const double fxw = split ? t0.fx + t1.fx : 2.0 * t0.fx;
    const double fyw_sum = split ? t0.fy + t1.fy : 2.0 * t0.fy;
    WheelPoint* wp = kFull && pts ? &pts->w[i] : nullptr;
    if (wp) {  // every field (state.hpp's size check)
      wp->axle = i;
      wp->n_tires = split ? 2 : 1;
      wp->scale = split ? 1.0 : 2.0;
      wp->fz[0] = fz4[2 * i];
      wp->fz[1] = split ? fz4[2 * i + 1] : 0.0;
      wp->tire[0] = rec4[2 * i];
      wp->tire[1] = split ? rec4[2 * i + 1] : TireAtLoad{};
      wp->vxw = vxw;
      wp->den = fmax_inl(std::fabs(vxw), low.slip_speed_floor);
      wp->tan_a = tan_a;
      wp->drive = in.drive[i];
      wp->brake = in.brake[i];
      wp->inertia = 2.0 * p.wheel_inertia;
      wp->coupling = 0.0;
    }
    ds[kW0 + i] = wheel_accel(omega, in.drive[i] - fxw * p.wheel_radius, in.brake[i],
                              2.0 * p.wheel_inertia);
    if (wp)
      record_hub(*pts, i, c, sn, x_axle[i], 0.0, vxw, kappa, 2.0 * p.wheel_inertia, ctx);
    if (!kFull) continue;
    const double fyw = fyw_sum;
    const double fxb = fxw * c - fyw * sn, fyb = fxw * sn + fyw * c;
    fx_body += fxb;
    fy_body += fyb;
    mz += x_axle[i] * fyb;
    if (aux) aux->wheel[i] = {fxw, fyw, fz_axle[i], kappa, std::atan(tan_a), tan_kin_a[i]};
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
