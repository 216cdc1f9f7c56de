// The layout of a session's Aux as a row of doubles (Session.get_aux, the mode-C sensor's
// captures): ax, ay, then per wheel fx, fy, fz, kappa, alpha.
#pragma once
#include "vdsim/session.hpp"

namespace vdsim_py {

constexpr int kAuxSize = 2 + 4 * 5;

inline void write_aux(const vdsim::Aux& a, double* out) {
  out[0] = a.ax;
  out[1] = a.ay;
  for (int i = 0; i < 4; ++i) {
    const vdsim::WheelOut& w = a.wheel[i];
    double* o = out + 2 + 5 * i;
    o[0] = w.fx; o[1] = w.fy; o[2] = w.fz; o[3] = w.kappa; o[4] = w.alpha;
  }
}

}  // namespace vdsim_py
