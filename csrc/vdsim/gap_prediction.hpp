// The car-following controllers' prediction across the loop delay (acc_pid_dc, idm_dc;
// vdsim_gym/controllers/acc_dc.py): the ego speed, the gap and the closing speed carried
// d seconds on with the acceleration in flight held and the lead's speed held,
//
//   a = prev_accel * (max_acceleration if prev_accel >= 0 else max_deceleration)
//   v' = max(v + a d, 0),  rel' = rel - (v' - v),  gap' = gap + rel d - (v' - v) d / 2
//
// (gap and rel only where the lead is present), over a batch of observations in one call.
// tests/test_acc_dc.py keeps the numpy version it replaced as the reference (bit for bit:
// the same double operations in the same order).
#pragma once
#include <cstdint>

#include "interrupt.hpp"

namespace vdsim {

// Column indices and scales of the observation: ego_speed, gap, rel_speed, lead_present,
// prev_accel (physical value = obs * scale).
struct GapColumns {
  int64_t col[5];
  double scale[5];
};

// out (n x n_obs, row-major) = obs with each delayed row's three columns predicted across
// its delay (d[0] for every row, or d[i] with per_row); a row whose delay is 0 is copied
// as it is.
inline void predict_gap_obs(const double* obs, int64_t n, int64_t n_obs, const GapColumns& c,
                            double a_max, double d_max, const double* d, bool per_row,
                            double* out) {
  for (int64_t i = 0; i < n; ++i) {
    poll_stop(i);
    const double* row = obs + i * n_obs;
    double* o = out + i * n_obs;
    for (int64_t j = 0; j < n_obs; ++j) o[j] = row[j];
    const double delay = per_row ? d[i] : d[0];
    if (delay == 0.0) continue;
    const double v = row[c.col[0]] * c.scale[0], gap = row[c.col[1]] * c.scale[1],
                 rel = row[c.col[2]] * c.scale[2], present = row[c.col[3]] * c.scale[3],
                 u = row[c.col[4]] * c.scale[4];
    const double a = u >= 0.0 ? u * a_max : u * d_max;
    const double x = v + a * delay;
    const double v2 = x < 0.0 ? 0.0 : x;  // np.maximum(x, 0.0); NaN stays NaN
    const double dv = v2 - v;
    const bool lead = present > 0.5;
    o[c.col[0]] = v2 / c.scale[0];
    o[c.col[1]] = (lead ? gap + rel * delay - 0.5 * dv * delay : gap) / c.scale[1];
    o[c.col[2]] = (lead ? rel - dv : rel) / c.scale[2];
  }
}

}  // namespace vdsim
