// integrator="etd3" (the default): exponential time differencing of third order (ETD3RK,
// Cox and Matthews 2002, J. Comput. Phys. 176, eq. 26) on etd2's split f(y) = L y + N(y),
// L frozen at the step's start (etd2.hpp: the slips, the lags, the cascade):
//
//   a       = y + dt/2 phi1(dt L / 2) f(y)
//   b       = y + dt phi1(dt L) (f(y) + 2 Da)               Dx = N(x) - N(y)
//   y_n+1   = y + dt phi1(dt L) f(y) + dt ((4 phi2 - 8 phi3) Da + (4 phi3 - phi2) Db)
//
// with N(x) - N(y) = f(x) - f(y) - L (x - y). Three derivatives per step (etd2: two), the
// wheels' Jacobian once. Third order for a smooth N; exact where the dynamics are linear
// with L; with L = 0 it is Kutta's third-order Runge-Kutta. Its embedded second-order
// solution is ETD2RK with the stage at dt/2 (Hochbruck and Ostermann 2005, SIAM J. Numer.
// Anal. 43: b2 = phi2 / c2): y + dt phi1 f(y) + 2 dt phi2 Da. Their difference, O(dt^3),
// is the step's correction (Session's step-size rule): an estimate of the second-order
// solution's local error, which over-states the third-order step's.
#pragma once
#include "etd2.hpp"

namespace vdsim {

// One etd3 step of s over dt: the arguments as etd2_step's; end_deriv evaluates both
// stages; half_memo: the constant rates' phi at dt / 2, kept between steps (optional).
template <class Deriv, class EndDeriv, class Rates, class Hub, class LagRate>
inline void etd3_step(State& s, double dt, Deriv&& deriv, EndDeriv&& end_deriv, Rates&& rates,
                      Hub&& hub, const double kc[2], LagRate&& lag_rate, double transfer_rate,
                      double filter_rate = 0.0, Etd2Memo* memo = nullptr,
                      Etd2Memo* half_memo = nullptr, State* start = nullptr,
                      bool start_ready = false, State* correction = nullptr) {
  State f0_local, f1, a, p1, da, db, x, y;
  State& f0 = start ? *start : f0_local;
  const EtdStart st = etd_start(s, dt, f0, start && start_ready, deriv, rates, hub, kc);
  const bool integral = f0[kAi] != 0.0;
  const double lr = lag_rate(s);
  const Etd2Linear L(*st.hc, st.held, st.lam, st.G, kc, lr, transfer_rate, filter_rate, dt,
                     memo, integral);
  const Etd2Linear H(*st.hc, st.held, st.lam, st.G, kc, lr, transfer_rate, filter_rate,
                     0.5 * dt, half_memo, integral);
  // a = y + dt/2 phi1(dt L / 2) f(y), Da = N(a) - N(y)
  p1 = f0;
  H.apply(p1, 0);
  for (int i = 0; i < kStateSize; ++i) {
    a[i] = s[i] + 0.5 * dt * p1[i];
    x[i] = a[i] - s[i];
  }
  end_deriv(a, f1);
  for (int i = 0; i < kStateSize; ++i) da[i] = f1[i] - f0[i];
  L.subtract_product(da, x);
  // b = y + dt phi1(dt L) (f(y) + 2 Da), Db = N(b) - N(y)
  p1 = f0;
  L.apply(p1, 0);
  x = da;
  L.apply(x, 0);
  for (int i = 0; i < kStateSize; ++i) {
    a[i] = s[i] + dt * (p1[i] + 2.0 * x[i]);  // a holds b now
    x[i] = a[i] - s[i];
  }
  end_deriv(a, f1);
  for (int i = 0; i < kStateSize; ++i) db[i] = f1[i] - f0[i];
  L.subtract_product(db, x);
  // y_n+1 = y + dt (phi1 f(y) + phi2 (4 Da - Db) + phi3 (4 Db - 8 Da)); the embedded
  // second-order solution y + dt (phi1 f(y) + 2 phi2 Da).
  for (int i = 0; i < kStateSize; ++i) {
    x[i] = 4.0 * da[i] - db[i];
    y[i] = 4.0 * db[i] - 8.0 * da[i];
  }
  L.apply(x, 1);
  L.apply(y, 2);
  if (correction) {
    L.apply(da, 1);
    for (int i = 0; i < kStateSize; ++i) (*correction)[i] = dt * (x[i] + y[i] - 2.0 * da[i]);
  }
  for (int i = 0; i < kStateSize; ++i) s[i] += dt * (p1[i] + (x[i] + y[i]));
}

}  // namespace vdsim
