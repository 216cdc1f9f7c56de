// The classical baselines evaluated a batch at a time: Stanley, PI speed, their
// composite, the PID ACC controller, IDM and the dyno's cycle follower.
//
// Each is the arithmetic of its Python definition (vdsim_gym/controllers), operation by
// operation in the same order, so the outputs are bit-identical to it: the tests compare
// every controller against a slow Python reference on random observations and against
// the env rollouts the goldens hold. Transcendental functions are the C library's (the
// Python references use math.sin/atan/atan2/pow, the same functions), never numpy's SIMD
// ones, whose last bits depend on the CPU (AVX-512 or not).
//
// A controller reads one observation row through a RowReader (float32 or float64, any
// strides, unscaled by the layout's scale here) and writes its outputs as float32, the
// action dtype. Rows keep their state (integrators, modes) between calls; a change of
// batch size starts every row afresh, as the Python controllers did.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vdsim::baselines {

// One observation row of a batch: element j at base + j * stride, float32 or float64.
struct RowReader {
  const char* base = nullptr;
  std::ptrdiff_t stride = 0;
  bool f32 = true;

  double operator[](int64_t j) const {
    const char* p = base + j * stride;
    if (f32) {
      float f;
      std::memcpy(&f, p, sizeof f);
      return static_cast<double>(f);
    }
    double d;
    std::memcpy(&d, p, sizeof d);
    return d;
  }
};

// A named column resolved once: its index and the scale that turns it into physical
// units (the env's obs_scale).
struct Column {
  int64_t index = 0;
  double scale = 1.0;
  double read(const RowReader& row) const { return row[index] * scale; }
};

// Python's builtins: max(a, b) is a unless b > a; min(a, b) is a unless b < a (NaN rules
// included).
inline double py_max(double a, double b) { return b > a ? b : a; }
inline double py_min(double a, double b) { return b < a ? b : a; }
// The C library's pow, as Python's x ** y calls it. A literal exponent would let the
// compiler fold pow(x, 2.0) into x * x, which differs from glibc's pow in the last bit
// now and then; the volatile keeps the call.
inline double libm_pow(double x, double y) {
  volatile double exponent = y;
  return std::pow(x, exponent);
}
// np.clip to [-1, 1] on a float32 action (NaN passes through).
inline float clip1(float x) { return x < -1.0f ? -1.0f : (x > 1.0f ? 1.0f : x); }

class BatchController {
 public:
  virtual ~BatchController() = default;
  virtual int outputs() const = 0;
  // Columns of the observation it reads (a row's length).
  int64_t n_obs = 0;
  // A batch of n rows: a size other than the last one's starts every row afresh.
  virtual void ensure(int64_t n) {
    if (n != n_rows_) {
      resize(n);
      n_rows_ = n;
    }
  }
  // Forget the rows (the Python controllers' reset()).
  virtual void clear() {
    resize(0);
    n_rows_ = -1;
  }
  // Rows of the last call (0 before the first or after clear()).
  int64_t rows() const { return n_rows_ < 0 ? 0 : n_rows_; }
  // The batch size changed: every row starts afresh.
  virtual void resize(int64_t /*n*/) {}
  // Row i starts an episode (SB3's episode_start).
  virtual void restart(int64_t /*i*/) {}
  // Row i's outputs; a non-empty return is an error (nothing of the call is kept).
  virtual std::string compute(int64_t i, const RowReader& row, float* out) = 0;
  // Whether compute can fail; then checkpoint() is taken before a batch and rollback()
  // restores it on an error.
  virtual bool can_fail() const { return false; }
  virtual void checkpoint() {}
  virtual void rollback() {}
  // The rows' state as numbers, and back (a controller's pickle and deepcopy): the batch
  // size (-1: no rows yet) and the state's values; a stateless law has none.
  int64_t saved_rows() const { return n_rows_; }
  virtual std::vector<double> save() const { return {}; }
  void load(int64_t n, const std::vector<double>& values) {
    if (n < 0) {
      clear();
      return;
    }
    ensure(n);
    restore(values);
  }

 protected:
  virtual void restore(const std::vector<double>& /*values*/) {}
  int64_t n_rows_ = -1;
};

// Stanley (controllers/stanley.py): steer = ff - e_psi - atan2(k e_front, |vx| + v_soft)
// - yaw damping, divided by max_steer and clipped.
struct StanleyParams {
  Column e_y, e_psi, vx, kappa, r;
  double wheelbase = 0, cg_to_front = 0, max_steer = 1, gain = 8, soft_speed = 1,
         yaw_damping = 0, accel_gain = 0;
};

class Stanley : public BatchController {
 public:
  explicit Stanley(StanleyParams p) : p(std::move(p)) {}
  StanleyParams p;

  int outputs() const override { return 1; }

  double steer(const RowReader& row) const {
    const double e_y = p.e_y.read(row), e_psi = p.e_psi.read(row), vx = p.vx.read(row);
    const double kappa = p.kappa.read(row), r = p.r.read(row);
    const double e_front = e_y + p.cg_to_front * std::sin(e_psi);
    const double feed_forward = std::atan(p.wheelbase * kappa) + p.accel_gain * vx * vx * kappa;
    const double cross = std::atan2(p.gain * e_front, std::fabs(vx) + p.soft_speed);
    const double damping = p.yaw_damping * (r - vx * kappa);
    return feed_forward - e_psi - cross - damping;
  }

  std::string compute(int64_t, const RowReader& row, float* out) override {
    const double a = steer(row) / p.max_steer;
    out[0] = static_cast<float>(a < -1.0 ? -1.0 : (a > 1.0 ? 1.0 : a));  // np.clip, astype
    return {};
  }
};

// PI speed with conditional integration (controllers/pi_speed.py).
struct PISpeedParams {
  Column v_ref, vx;
  double dt = 0.02, kp = 0.5, ki = 0.1;
};

class PISpeed : public BatchController {
 public:
  explicit PISpeed(PISpeedParams p) : p(std::move(p)) {}
  PISpeedParams p;
  std::vector<double> integral;

  int outputs() const override { return 1; }
  void resize(int64_t n) override { integral.assign(static_cast<size_t>(n), 0.0); }
  void restart(int64_t i) override { integral[static_cast<size_t>(i)] = 0.0; }
  std::vector<double> save() const override { return integral; }

 protected:
  void restore(const std::vector<double>& v) override {
    if (v.size() == integral.size()) integral = v;
  }

 public:

  std::string compute(int64_t i, const RowReader& row, float* out) override {
    double& integ = integral[static_cast<size_t>(i)];
    const double err = p.v_ref.read(row) - p.vx.read(row);
    const double trial = integ + err * p.dt;
    const double raw = p.kp * err + p.ki * trial;
    if (std::fabs(raw) < 1.0) integ = trial;
    const double u = p.kp * err + p.ki * integ;
    // np.clip(-1, 1) in float64, then float32.
    out[0] = static_cast<float>(u < -1.0 ? -1.0 : (u > 1.0 ? 1.0 : u));
    return {};
  }
};

// [lateral, longitudinal] from two controllers (controllers/composite.py).
class Composite : public BatchController {
 public:
  Composite(std::shared_ptr<BatchController> lateral,
            std::shared_ptr<BatchController> longitudinal)
      : lateral(std::move(lateral)), longitudinal(std::move(longitudinal)) {}
  std::shared_ptr<BatchController> lateral, longitudinal;

  int outputs() const override { return lateral->outputs() + longitudinal->outputs(); }
  // Each part keeps its own rows, as the Python parts did.
  void ensure(int64_t n) override {
    lateral->ensure(n);
    longitudinal->ensure(n);
  }
  void clear() override {
    lateral->clear();
    longitudinal->clear();
  }
  void restart(int64_t i) override {
    lateral->restart(i);
    longitudinal->restart(i);
  }
  std::string compute(int64_t i, const RowReader& row, float* out) override {
    std::string err = lateral->compute(i, row, out);
    if (err.empty()) err = longitudinal->compute(i, row, out + lateral->outputs());
    return err;
  }
  bool can_fail() const override { return lateral->can_fail() || longitudinal->can_fail(); }
  void checkpoint() override {
    lateral->checkpoint();
    longitudinal->checkpoint();
  }
  void rollback() override {
    lateral->rollback();
    longitudinal->rollback();
  }
};

// The car-following observation of VDSim-ACC-v0, read as CarFollowingPolicy does.
struct CarFollowingColumns {
  Column ego_speed, set_speed, lead_present, gap, rel_speed;
  double dt = 0.1, a_max = 3.0, d_max = 8.0;  // control period, the vehicle's limits
};

// The car-following baselines' common part: the observation read, the lead's presence
// and the action scaling (controllers/acc_policy.py, CarFollowingPolicy.predict).
class CarFollowing : public BatchController {
 public:
  explicit CarFollowing(CarFollowingColumns c) : c(std::move(c)) {}
  CarFollowingColumns c;

  int outputs() const override { return 1; }

  std::string compute(int64_t i, const RowReader& row, float* out) override {
    const double v = c.ego_speed.read(row), v_set = c.set_speed.read(row);
    const bool lead = c.lead_present.read(row) > 0.5;
    const double gap = c.gap.read(row);
    const double v_lead = v + c.rel_speed.read(row);
    double a = 0.0;
    std::string err = step(i, v, lead, v_lead, gap, v_set, a);
    if (!err.empty()) return err;
    out[0] = clip1(static_cast<float>(a >= 0 ? a / c.a_max : a / c.d_max));
    return {};
  }

 protected:
  // Acceleration [m/s^2] of row i; lead: a lead is reported (v_lead and gap then hold).
  virtual std::string step(int64_t i, double v, bool lead, double v_lead, double gap,
                           double v_set, double& accel) = 0;
};

// The reference's PID (controllers/acc.py, PID): clamps, conditional integration, an
// optional integral limit, no derivative kick on the first call.
struct PIDGains {
  double kp = 0, ki = 0, kd = 0;
  bool has_limit = false;
  double integral_limit = 0;
  double output_min = -1, output_max = 1;
};

struct PIDState {
  double integral = 0.0;
  bool has_prev = false;
  double prev_error = 0.0;
};

inline double pid_clamp_i(const PIDGains& g, double i) {
  return g.has_limit ? py_min(py_max(i, -g.integral_limit), g.integral_limit) : i;
}

// PID.compute; an error that is not finite is refused (as the reference refuses it).
inline std::string pid_compute(const PIDGains& g, PIDState& s, double error, double dt,
                               bool integrate, double& u_out) {
  if (!std::isfinite(error))
    return "PID error must be finite, got " + std::string(std::isnan(error) ? "nan"
                                                          : (error > 0 ? "inf" : "-inf"));
  const double d = s.has_prev ? g.kd * (error - s.prev_error) / dt : 0.0;
  s.has_prev = true;
  s.prev_error = error;
  const double candidate = integrate ? pid_clamp_i(g, s.integral + error * dt) : s.integral;
  double u = g.kp * error + g.ki * candidate + d;
  const bool winding = (u > g.output_max && error > 0.0) || (u < g.output_min && error < 0.0);
  if (winding)
    u = g.kp * error + g.ki * s.integral + d;
  else
    s.integral = candidate;
  u_out = py_min(py_max(u, g.output_min), g.output_max);
  return {};
}

// PID.output: what compute(integrate=False) would return, without an update.
inline double pid_output(const PIDGains& g, const PIDState& s, double error, double dt) {
  const double d = s.has_prev ? g.kd * (error - s.prev_error) / dt : 0.0;
  const double u = g.kp * error + g.ki * s.integral + d;
  return py_min(py_max(u, g.output_min), g.output_max);
}

// ACCController (controllers/acc.py): cruise / follow / emergency.
struct ACCParams {
  double time_headway = 1.5, min_distance = 10.0, emergency_ttc = 3.0;
  double max_acceleration = 3.0, max_deceleration = 8.0;
  bool has_exit_ttc = false;
  double exit_ttc = 0.0;
  PIDGains speed, distance;
};

class ACC : public CarFollowing {
 public:
  // Modes as ACCController names them; None before the first call.
  enum Mode : int { kNone = -1, kCruise = 0, kFollow = 1, kEmergency = 2 };
  struct Row {
    int mode = kNone;
    PIDState speed, distance;
  };

  ACC(CarFollowingColumns c, ACCParams p) : CarFollowing(std::move(c)), p(std::move(p)) {}
  ACCParams p;
  std::vector<Row> rows;

  void resize(int64_t n) override { rows.assign(static_cast<size_t>(n), Row{}); }
  void restart(int64_t i) override { rows[static_cast<size_t>(i)] = Row{}; }
  bool can_fail() const override { return true; }
  void checkpoint() override { saved_ = rows; }
  void rollback() override { rows = saved_; }
  // Seven numbers a row: mode, then each PID's integral, has_prev, prev_error.
  std::vector<double> save() const override {
    std::vector<double> v;
    for (const Row& r : rows)
      for (double x : {static_cast<double>(r.mode), r.speed.integral,
                       r.speed.has_prev ? 1.0 : 0.0, r.speed.prev_error, r.distance.integral,
                       r.distance.has_prev ? 1.0 : 0.0, r.distance.prev_error})
        v.push_back(x);
    return v;
  }

 protected:
  std::string step(int64_t i, double v, bool lead_reported, double v_lead, double gap,
                   double v_set, double& accel) override {
    Row& s = rows[static_cast<size_t>(i)];
    const double dt = c.dt;
    // compute(ego, lead_speed or None, distance or None, dt, set_speed=v_set)
    const bool lead = lead_reported && std::isfinite(v_lead) && std::isfinite(gap);
    bool has_ttc = false;
    double ttc = 0.0;
    if (lead && v > v_lead) {
      has_ttc = true;
      ttc = gap / (v - v_lead);
    }
    int mode;
    if (!lead)
      mode = kCruise;
    else if (has_ttc && (ttc < p.emergency_ttc ||
                         (s.mode == kEmergency && p.has_exit_ttc && ttc < p.exit_ttc)))
      mode = kEmergency;
    else
      mode = kFollow;
    if (mode != s.mode) {
      s.speed = PIDState{};
      s.distance = PIDState{};
      s.mode = mode;
    }
    const double e_speed = v_set - v;
    double a = 0.0;
    std::string err;
    if (mode == kCruise) {
      err = pid_compute(p.speed, s.speed, e_speed, dt, true, a);
    } else if (mode == kEmergency) {
      a = -p.max_deceleration;
    } else {
      const double distance_error = gap - (p.min_distance + p.time_headway * v);
      double a_dist = 0.0;
      err = pid_compute(p.distance, s.distance, distance_error, dt, true, a_dist);
      if (err.empty()) {
        if (pid_output(p.speed, s.speed, e_speed, dt) < a_dist) {  // the cap is active
          double a_speed = 0.0;
          err = pid_compute(p.speed, s.speed, e_speed, dt, true, a_speed);
          a = py_min(a_dist, a_speed);
        } else {
          double ignored = 0.0;
          err = pid_compute(p.speed, s.speed, e_speed, dt, false, ignored);
          a = a_dist;
        }
      }
    }
    if (!err.empty()) return err;
    accel = py_min(py_max(a, -p.max_deceleration), p.max_acceleration);
    return {};
  }
  void restore(const std::vector<double>& v) override {
    if (v.size() != 7 * rows.size()) return;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double* x = v.data() + 7 * i;
      rows[i].mode = static_cast<int>(x[0]);
      rows[i].speed = PIDState{x[1], x[2] != 0.0, x[3]};
      rows[i].distance = PIDState{x[4], x[5] != 0.0, x[6]};
    }
  }

 private:
  std::vector<Row> saved_;
};

// IDM (controllers/idm.py), desired speed the episode's set speed when tracking it.
struct IDMParams {
  double v0 = 120.0 / 3.6, time_headway = 1.6, min_gap = 2.0, a_max = 0.73,
         b_comfort = 1.67, delta = 4.0, max_acceleration = 3.0, max_deceleration = 8.0;
  bool track_set_speed = true;
};

class IDM : public CarFollowing {
 public:
  IDM(CarFollowingColumns c, IDMParams p) : CarFollowing(std::move(c)), p(std::move(p)) {}
  IDMParams p;
  std::vector<double> v0;  // each row's desired speed (kept across its episodes)

  void resize(int64_t n) override { v0.assign(static_cast<size_t>(n), p.v0); }
  bool can_fail() const override { return p.track_set_speed; }
  void checkpoint() override { saved_ = v0; }
  void rollback() override { v0 = saved_; }
  std::vector<double> save() const override { return v0; }

 protected:
  std::string step(int64_t i, double ego, bool lead, double v_lead, double gap, double v_set,
                   double& accel) override {
    double& v0_row = v0[static_cast<size_t>(i)];
    if (p.track_set_speed && v_set > 0 && v_set != v0_row) {
      if (!std::isfinite(v_set)) return "IDM v0 must be a positive number, got inf";
      v0_row = v_set;
    }
    const double v = py_max(ego, 0.0);
    double a = p.a_max * (1.0 - libm_pow(v / v0_row, p.delta));
    if (lead && std::isfinite(v_lead) && std::isfinite(gap)) {
      const double s = py_max(gap, 1e-3);
      const double dv = v - v_lead;
      const double desired =
          p.min_gap + v * p.time_headway + v * dv / (2.0 * std::sqrt(p.a_max * p.b_comfort));
      a -= p.a_max * libm_pow(py_max(desired, 0.0) / s, 2.0);
    }
    accel = py_min(py_max(a, -p.max_deceleration), p.max_acceleration);
    return {};
  }
  void restore(const std::vector<double>& v) override {
    if (v.size() == v0.size()) v0 = v;
  }

 private:
  std::vector<double> saved_;
};

// np.interp(x, xp, fp) for one x within [xp[0], xp[-1]] (numpy's compiled_base.c rule).
inline double np_interp(double x, const std::vector<double>& xp, const double* fp) {
  const size_t n = xp.size();
  if (std::isnan(x)) return x;
  if (x < xp[0]) return fp[0];
  if (x > xp[n - 1]) return fp[n - 1];
  size_t j = 0;
  while (j + 1 < n && xp[j + 1] <= x) ++j;
  if (j == n - 1) return fp[j];
  if (xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  double y = slope * (x - xp[j]) + fp[j];
  if (std::isnan(y)) {
    y = slope * (x - xp[j + 1]) + fp[j + 1];
    if (std::isnan(y) && fp[j] == fp[j + 1]) y = fp[j];
  }
  return y;
}

// The dyno's cycle follower (controllers/dyno_policy.py).
struct CycleFollowerParams {
  std::vector<double> preview;  // the preview columns' times [s] (the first columns)
  std::vector<double> scale;    // their scales
  bool speed_mode = true;
  double lookahead = 0.0, horizon = 1.0;
  Column speed;  // accel mode: the measured speed
  double v_max = 0.0, a_max = 0.0, d_max = 0.0;
};

class CycleFollower : public BatchController {
 public:
  explicit CycleFollower(CycleFollowerParams p) : p(std::move(p)) {}
  CycleFollowerParams p;

  int outputs() const override { return 1; }

  std::string compute(int64_t, const RowReader& row, float* out) override {
    double fp[16];
    const size_t n = p.preview.size();
    for (size_t j = 0; j < n && j < 16; ++j) fp[j] = row[static_cast<int64_t>(j)] * p.scale[j];
    double a;
    if (p.speed_mode) {
      const double v_ref = np_interp(p.lookahead, p.preview, fp);
      a = 2.0 * v_ref / p.v_max - 1.0;
    } else {
      const double v = p.speed.read(row);
      const double a_ref = (np_interp(p.horizon, p.preview, fp) - v) / p.horizon;
      a = a_ref >= 0 ? a_ref / p.a_max : a_ref / p.d_max;
    }
    out[0] = static_cast<float>(a < -1.0 ? -1.0 : (a > 1.0 ? 1.0 : a));
    return {};
  }
};

}  // namespace vdsim::baselines
