// The delay-compensating controllers' model (vdsim_gym/controllers/prediction.py,
// SingleTrackPredictor): the nonlinear single-track model in path coordinates, each axle's
// lateral force a Magic Formula curve at its static load, the tire's relaxation length as
// a first-order lag of each axle's slip, the speed held, integrated by RK4 in equal steps
// per row (single_track_steps: each row's own, from its horizon and speed). The same
// operations in the same order as the numpy version (tests/test_delay_compensation.py:
// within 1e-12 of it on recorded observations), one row at a time instead of one
// operation over all rows.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fminmax.hpp"
#include "interrupt.hpp"

namespace vdsim {

struct AxleTireCurve {
  double stiffness = 0.0;  // [N/rad], dFy/dtan(alpha) at 0
  double peak = 0.0;       // D [N]
  double shape = 0.0;      // C
  double curvature = 0.0;  // E
  // Fy(tan alpha) = -D sin(C atan(B t - E (B t - atan B t))), B = stiffness / (D C)
  double force(double t) const {
    const double b = stiffness / (peak * shape);
    const double bt = b * t;
    return -peak * std::sin(shape * std::atan(bt - curvature * (bt - std::atan(bt))));
  }
};

struct SingleTrackModel {
  double mass = 0.0, yaw_inertia = 0.0;
  double cg_to_front = 0.0, cg_to_rear = 0.0;
  AxleTireCurve axle[2];
  double sigma = 0.0;  // the relaxation length [m] (0: kinematic slips)
  // An upper bound of the model's fastest linear rate [1/s] at the speed floor u =
  // max(|vx|, 1 m/s): the slips' relaxation u / sigma, and the lateral and yaw modes'
  // (Cf + Cr) / (m u) + (a^2 Cf + b^2 Cr) / (Iz u) (the linear single track's damping
  // terms, whose sum bounds its eigenvalues' magnitude from above).
  double fastest_rate(double u) const {
    const double cf = axle[0].stiffness, cr = axle[1].stiffness;
    const double lateral = ((cf + cr) / mass + (cg_to_front * cg_to_front * cf +
                                                 cg_to_rear * cg_to_rear * cr) / yaw_inertia) / u;
    return sigma > 0.0 ? fmax_inl(u / sigma, lateral) : lateral;
  }
};

// RK4's steps keep h times the model's fastest rate at most this (RK4 is stable to 2.78
// on a real decaying mode; at 1.5 it damps that mode by 0.27 a step against the exact
// 0.22, and the modes that carry the prediction are an order slower).
constexpr double kSingleTrackStepRate = 1.5;

namespace single_track_detail {

constexpr double kMinSpeed = 1.0;  // [m/s] the slip angles' speed floor

using X = std::array<double, 7>;  // e_y, e_psi, vx, vy, r, tan_f, tan_r

inline void slips(const SingleTrackModel& p, double vx, double vy, double r, double c,
                  double s, double& kf, double& kr) {
  const double u = fmax_inl(vx, kMinSpeed);
  const double vyf = vy + p.cg_to_front * r;
  kf = (vyf * c - u * s) / (u * c + vyf * s);
  kr = (vy - p.cg_to_rear * r) / u;
}

inline X deriv(const SingleTrackModel& p, const X& x, double c, double s, double kappa) {
  const double e_y = x[0], e_psi = x[1], vx = x[2], vy = x[3], r = x[4];
  double tf = x[5], tr = x[6];
  double kf, kr;
  slips(p, vx, vy, r, c, s, kf, kr);
  double dtf = 0.0, dtr = 0.0;
  if (p.sigma > 0.0) {
    const double lam = fmax_inl(std::fabs(vx), kMinSpeed) / p.sigma;
    dtf = lam * (kf - tf);
    dtr = lam * (kr - tr);
  } else {
    tf = kf;
    tr = kr;
  }
  const double fyf = p.axle[0].force(tf) * c;
  const double fyr = p.axle[1].force(tr);
  const double ce = std::cos(e_psi), se = std::sin(e_psi);
  const double s_dot = (vx * ce - vy * se) / (1.0 - kappa * e_y);
  return {vx * se + vy * ce,
          r - kappa * s_dot,
          0.0,  // speed held
          (fyf + fyr) / p.mass - vx * r,
          (p.cg_to_front * fyf - p.cg_to_rear * fyr) / p.yaw_inertia,
          dtf,
          dtr};
}

}  // namespace single_track_detail

// The RK4 steps of a row whose horizon is `horizon` [s] at speed vx: the fewest of at most
// max_step [s] and of at most kSingleTrackStepRate over the model's fastest rate there (0:
// a horizon of 0 or less, the row stays where it is). A row's steps are its own: a batch's
// other rows do not change them.
inline int64_t single_track_steps(const SingleTrackModel& p, double horizon, double vx,
                                  double max_step) {
  if (!(horizon > 0.0)) return 0;
  const double u = fmax_inl(std::fabs(vx), single_track_detail::kMinSpeed);
  const double h = fmin_inl(max_step, kSingleTrackStepRate / p.fastest_rate(u));
  const double n = std::ceil(horizon / h - 1e-9);
  if (!(n < 1e12))  // an infinite or absurd horizon: no step count (and no overflow)
    throw std::invalid_argument("single-track prediction: a horizon of " +
                                std::to_string(horizon) + " s takes too many steps");
  return std::max<int64_t>(1, static_cast<int64_t>(n));
}

// For each of the n rows (columns of `in`: e_y, e_psi, vx, vy, r, delta, kappa, horizon;
// each a pointer to n values) the state after its horizon with delta held, written to
// out[k * n + i] (k = 0..4: e_y, e_psi, vx, vy, r), by single_track_steps(max_step) equal
// RK4 steps.
inline void single_track_predict(const SingleTrackModel& p, const double* const in[8],
                                 int64_t n, double max_step, double* out) {
  using single_track_detail::X;
  int64_t work = 0;  // RK4 steps done: Ctrl-C is polled every kPollEvery of them
  for (int64_t i = 0; i < n; ++i) {
    const double delta = in[5][i], kappa = in[6][i];
    const double c = std::cos(delta), s = std::sin(delta);
    X x{in[0][i], in[1][i], in[2][i], in[3][i], in[4][i], 0.0, 0.0};
    single_track_detail::slips(p, x[2], x[3], x[4], c, s, x[5], x[6]);
    const int64_t steps = single_track_steps(p, in[7][i], in[2][i], max_step);
    const double h = steps > 0 ? in[7][i] / static_cast<double>(steps) : 0.0;
    for (int64_t k = 0; k < steps; ++k) {
      poll_stop(work++);
      X t;
      const X k1 = single_track_detail::deriv(p, x, c, s, kappa);
      for (int j = 0; j < 7; ++j) t[j] = x[j] + 0.5 * h * k1[j];
      const X k2 = single_track_detail::deriv(p, t, c, s, kappa);
      for (int j = 0; j < 7; ++j) t[j] = x[j] + 0.5 * h * k2[j];
      const X k3 = single_track_detail::deriv(p, t, c, s, kappa);
      for (int j = 0; j < 7; ++j) t[j] = x[j] + h * k3[j];
      const X k4 = single_track_detail::deriv(p, t, c, s, kappa);
      for (int j = 0; j < 7; ++j)
        x[j] = x[j] + (h / 6.0) * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
    }
    for (int k = 0; k < 5; ++k) out[k * n + i] = x[k];
  }
}

// A path env's observation batch (n rows of n_obs values of type T, row-major) rewritten to
// the one predicted across each row's delay (delays[i], or delays[0] for every row when
// per_row is false), as PredictedObservation does in numpy: the physical columns are the
// observation times its scale in T's arithmetic (numpy's for a T array times a Python
// float), e_y, e_psi, vx, vy, r, kappa_ref, prev_steer at cols[0..6]; the steer in flight
// prev_steer * max_steer (in T); out (n x n_obs doubles) is the batch as doubles with the
// five state columns replaced by the prediction over the scale; a row whose delay is 0
// keeps its observation as it was (per_row).
template <class T>
inline void single_track_predict_obs(const SingleTrackModel& p, const T* obs, int64_t n,
                                     int64_t n_obs, const int64_t cols[7],
                                     const double scale[7], double max_steer,
                                     const double* delays, bool per_row, double max_step,
                                     double* out) {
  // one row (a controller's decision) on the stack, a batch on the heap
  double one_in[8], one_x[5];
  std::vector<double> in(n == 1 ? 0 : 8 * static_cast<size_t>(n));
  double* in_data = n == 1 ? one_in : in.data();
  double* col[8];
  for (int k = 0; k < 8; ++k) col[k] = in_data + k * n;
  for (int64_t i = 0; i < n; ++i) {
    const T* row = obs + i * n_obs;
    double v[7];
    for (int k = 0; k < 7; ++k)
      v[k] = static_cast<double>(static_cast<T>(row[cols[k]] * static_cast<T>(scale[k])));
    const T steer = static_cast<T>(static_cast<T>(v[6]) * static_cast<T>(max_steer));
    col[0][i] = v[0], col[1][i] = v[1], col[2][i] = v[2], col[3][i] = v[3];
    col[4][i] = v[4], col[5][i] = static_cast<double>(steer), col[6][i] = v[5];
    col[7][i] = per_row ? delays[i] : delays[0];
    for (int64_t j = 0; j < n_obs; ++j) out[i * n_obs + j] = static_cast<double>(row[j]);
  }
  std::vector<double> xs(n == 1 ? 0 : 5 * static_cast<size_t>(n));
  double* x = n == 1 ? one_x : xs.data();
  const double* cin[8] = {col[0], col[1], col[2], col[3], col[4], col[5], col[6], col[7]};
  single_track_predict(p, cin, n, max_step, x);
  for (int64_t i = 0; i < n; ++i) {
    if (per_row && delays[i] == 0.0) continue;
    for (int k = 0; k < 5; ++k) out[i * n_obs + cols[k]] = x[k * n + i] / scale[k];
  }
}

}  // namespace vdsim
