#include "model_l2.hpp"

#include "fminmax.hpp"

namespace vdsim {

namespace {

// kFull = false: the wheel-spin rates only (ds[kW0 + i]; the rest of ds untouched), by the
// same operations as the full derivative (bit-identical), without the lateral tire force,
// the body and the aux outputs: the semi-implicit step's perturbed evaluation needs no more.
template <bool kFull>
void deriv_l2_impl(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
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
  const double half_t = 0.5 * p.track;

  // Static loads plus lagged transfer: longitudinal m ax h / L between axles, lateral
  // m ay h / t split between axles by roll_stiffness_front (unset: static load share).
  const double dlong = 0.5 * m * s[kAxF] * p.cg_height / L;
  const double dlat_total = m * s[kAyF] * p.cg_height / p.track;
  const double fs = p.roll_stiffness_front;
  const double dlat[2] = {
      std::isnan(fs) ? dlat_total * p.cg_to_rear / L : dlat_total * fs,
      std::isnan(fs) ? dlat_total * p.cg_to_front / L : dlat_total * (1.0 - fs)};
  const double fz_static[2] = {0.5 * m * kGravity * p.cg_to_rear / L,
                               0.5 * m * kGravity * p.cg_to_front / L};
  const double xw[4] = {p.cg_to_front, p.cg_to_front, -p.cg_to_rear, -p.cg_to_rear};
  const double yw[4] = {half_t, -half_t, half_t, -half_t};

  double fx_body = 0.0, fy_body = 0.0, mz = 0.0, fz_sum = 0.0;
  // Per wheel: load, hub velocity, slips (first pass); the four tires (at once on the
  // default path: tire_forces4, bit for bit four tire_forces calls); the wheel's spin
  // rate and its share of the body forces (second pass, in wheel order as before).
  double fz_w[4], c_w[4], sn_w[4], vxw_w[4], kappa_w[4], tan_w[4], tan_kin_w[4];
  TireForces t_w[4];
  TireAtLoad rec_w[4];
  const bool batch = kFull && can_batch(ctx.tire[0], ctx.tire[1], ctx.shape);
  for (int i = 0; i < 4; ++i) {
    const int axle = i / 2;
    const double side = (i % 2 == 0) ? -1.0 : 1.0;  // ay > 0 loads the right wheels
    const double fz = fmax_inl(
        0.0, fz_static[axle] + (axle == 0 ? -dlong : dlong) + side * dlat[axle]);
    fz_sum += fz;
    const double vxh = vx - r * yw[i], vyh = vy + r * xw[i];
    const double c = axle == 0 ? cd : 1.0, sn = axle == 0 ? sd : 0.0;
    const double vxw = vxh * c + vyh * sn, vyw = -vxh * sn + vyh * c;
    const double omega = s[kW0 + i];
    double kappa, tan_a;
    wheel_slip(vxw, vyw, omega, p.wheel_radius, low.slip_speed_floor, kappa, tan_a,
               ctx.shape.fast_algebra);
    const double tan_kin = tan_a;
    tan_a = relaxed_slip(s, i, tan_kin, vxw, p.tire, low, kFull ? &ds : nullptr);
    fz_w[i] = fz, c_w[i] = c, sn_w[i] = sn, vxw_w[i] = vxw;
    kappa_w[i] = kappa, tan_w[i] = tan_a, tan_kin_w[i] = tan_kin;
    if (!batch)
      t_w[i] = tire_forces<kFull>(ctx.tire[axle], ctx.shape, fz, kappa, tan_a, &rec_w[i]);
  }
  if (batch) {
    tire_forces4(ctx.lanes, ctx.shape, fz_w, kappa_w, tan_w, t_w, rec_w);
  }
  for (int i = 0; i < 4; ++i) {
    const int axle = i / 2;
    const double fz = fz_w[i], c = c_w[i], sn = sn_w[i], vxw = vxw_w[i];
    const double kappa = kappa_w[i], tan_a = tan_w[i], tan_kin = tan_kin_w[i];
    const double omega = s[kW0 + i];
    const TireForces& t = t_w[i];
    WheelPoint* wp_ = kFull && pts ? &pts->w[i] : nullptr;
    if (wp_) {
      // Every field assigned (no WheelPoint{} first: its zeroing was a rep stos, 16 % of
      // this function; state.hpp's size check catches a field added and not set here).
      WheelPoint& wp = *wp_;
      wp.axle = axle;
      wp.n_tires = 1;
      wp.scale = 1.0;
      wp.fz[0] = fz;
      wp.fz[1] = 0.0;
      wp.tire[0] = rec_w[i];
      wp.tire[1] = TireAtLoad{};
      wp.vxw = vxw;
      wp.den = fmax_inl(std::fabs(vxw), low.slip_speed_floor);
      wp.tan_a = tan_a;
      wp.drive = in.drive[i];
      wp.brake = in.brake[i];
      wp.inertia = p.wheel_inertia;
      wp.coupling = axle == 0 ? p.diff_coupling_front : p.diff_coupling_rear;
      record_hub(*pts, i, c, sn, xw[i], yw[i], vxw, kappa, p.wheel_inertia, ctx);
    }
    double t_other = in.drive[i] - t.fx * p.wheel_radius;
    const double coupling = axle == 0 ? p.diff_coupling_front : p.diff_coupling_rear;
    if (coupling != 0.0) t_other += coupling * (s[kW0 + (i ^ 1)] - omega);  // other wheel
    ds[kW0 + i] = wheel_accel(omega, t_other, in.brake[i], p.wheel_inertia);
    if (!kFull) continue;
    const double fxb = t.fx * c - t.fy * sn, fyb = t.fx * sn + t.fy * c;
    fx_body += fxb;
    fy_body += fyb;
    mz += xw[i] * fyb - yw[i] * fxb;
    if (aux) aux->wheel[i] = {t.fx, t.fy, fz, kappa, std::atan(tan_a), tan_kin};
  }
  if (!kFull) return;
  if (pts) pts->n = pts->hub.n_wheels = 4;
  fx_body -= resistance_force(vx, fz_sum, p, low);

  body_derivative(s, in.steer, fx_body, fy_body, mz, p, low, ds, aux);
}

}  // namespace

void deriv_l2(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
              Aux* aux, WheelPoints* pts) {
  deriv_l2_impl<true>(s, in, ctx, ds, aux, pts);
}

void deriv_l2_wheels(const State& s, const WheelInputs& in, const ModelContext& ctx,
                     State& ds) {
  deriv_l2_impl<false>(s, in, ctx, ds, nullptr);
}

}  // namespace vdsim
