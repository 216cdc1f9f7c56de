// GymStepper: a whole Gymnasium step() of a single env in one C++ call. The action is
// checked, the core steps (GIL released, interruptible), and the step's return values are
// built here: a fresh float32 observation, the reward, the flag bits and the info dict
// (reward_terms, the task's columns by name with their Python types, the timing keys when
// latency is on). The Python env keeps only the decisions that are not per-step work
// (reset bookkeeping, the episode end's summary). With the physics at a few microseconds
// per step, the Python-level work this replaces cost as much as the physics itself.
//
// An action that is not a 1-d float32/float64 array of the right size within [-1, 1]
// (+ tol) is not stepped: call() returns None and the Python env takes its slow path,
// which either coerces the action (lists, ints) or raises the error that names the cause.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interruptible.hpp"
#include "vdsim/env_core.hpp"

namespace py = pybind11;
using vdsim::EnvCoreBase;

namespace {

// Python type of an info column: float, int or bool (as the env's INFO_KEYS say).
enum class Kind : int { Float = 0, Int = 1, Bool = 2 };

struct Column {
  py::str key;
  int64_t index;
  Kind kind;
};

py::object as_python(double v, Kind kind) {
  switch (kind) {
    case Kind::Int: return py::int_(static_cast<long long>(v));
    case Kind::Bool: return py::bool_(v != 0.0);
    default: return py::float_(v);
  }
}

// A 1-d float32/float64 array's first n values as doubles (any stride); false when it is
// not such an array.
bool read_floats(py::handle action, int64_t n, double* a, bool any_shape = false) {
  if (!py::isinstance<py::array>(action)) return false;
  auto arr = py::reinterpret_borrow<py::array>(action);
  py::ssize_t stride;
  if (arr.ndim() == 1 && arr.shape(0) == n) {
    stride = arr.strides(0);
  } else if (any_shape && arr.size() == n && arr.ndim() == 2 && arr.shape(0) == 1) {
    stride = arr.strides(1);
  } else {
    return false;
  }
  const py::dtype dt = arr.dtype();
  if (dt.kind() != 'f') return false;
  const auto* base = static_cast<const char*>(arr.data());
  for (int64_t j = 0; j < n; ++j) {
    const char* p = base + j * stride;
    if (dt.itemsize() == 8) {
      std::memcpy(&a[j], p, sizeof(double));
    } else if (dt.itemsize() == 4) {
      float f;
      std::memcpy(&f, p, sizeof f);
      a[j] = f;
    } else {
      return false;  // float16, longdouble: the slow path converts
    }
  }
  return true;
}

class GymStepper {
 public:
  // The keys are kept as the caller's str objects (an env's names, shared between envs).
  GymStepper(py::object core, py::array_t<float, py::array::c_style> obs,
             py::array_t<double, py::array::c_style> terms,
             py::array_t<double, py::array::c_style> info, const py::sequence& term_keys,
             const py::sequence& info_cols, const py::sequence& timing_cols,
             std::vector<int64_t> log_cols, double action_tol)
      : core_obj_(std::move(core)), core_(core_obj_.cast<EnvCoreBase&>()), obs_(std::move(obs)),
        terms_(std::move(terms)), info_(std::move(info)), log_cols_(std::move(log_cols)),
        tol_(action_tol) {
    const vdsim::EnvSpec& s = core_.spec();
    if (obs_.size() < s.obs_size() || terms_.size() < s.term_size() ||
        info_.size() < s.info_size())
      throw std::invalid_argument("GymStepper: a buffer is smaller than the core's rows");
    if (static_cast<int64_t>(py::len(term_keys)) != s.term_size())
      throw std::invalid_argument("GymStepper: one key per reward term");
    n_actions_ = s.action_size();
    if (n_actions_ > kMaxActions) throw std::invalid_argument("GymStepper: too many actions");
    for (py::handle k : term_keys) term_keys_.push_back(py::reinterpret_borrow<py::str>(k));
    auto columns = [&](const py::sequence& cols, std::vector<Column>& out) {
      for (py::handle item : cols) {
        auto t = item.cast<py::tuple>();
        if (t.size() != 3) throw std::invalid_argument("GymStepper: (key, column, kind)");
        auto key = t[0].cast<py::str>();
        const auto j = t[1].cast<int64_t>();
        const auto kind = t[2].cast<int>();
        if (j < 0 || j >= s.info_size() || kind < 0 || kind > 2)
          throw std::invalid_argument("GymStepper: bad info column " + key.cast<std::string>());
        out.push_back({key, j, static_cast<Kind>(kind)});
      }
    };
    columns(info_cols, info_cols_);
    columns(timing_cols, timing_cols_);
    for (int64_t j : log_cols_)
      if (j < 0 || j >= s.info_size()) throw std::invalid_argument("GymStepper: bad log column");
  }

  // Timing keys in info (the env has latency).
  bool timing = false;

  // (obs, reward, flags, info), or None: the action needs the slow path (see the file doc).
  py::object call(py::handle action, double measured_delay, py::handle log) {
    double a[kMaxActions];
    if (!read_action(action, a)) return py::none();
    float* o = obs_.mutable_data();
    double* t = terms_.mutable_data();
    double* inf = info_.mutable_data();
    const int flags = vdsim_py::run_interruptible(
        [&] { return core_.step(a, o, t, inf, measured_delay); });

    const int64_t n_obs = core_.spec().obs_size();
    py::array_t<float> obs_out(n_obs);
    std::memcpy(obs_out.mutable_data(), o, sizeof(float) * static_cast<size_t>(n_obs));
    py::dict terms;
    for (size_t j = 0; j < term_keys_.size(); ++j) terms[term_keys_[j]] = py::float_(t[j]);
    py::dict info;
    info[reward_terms_key_] = std::move(terms);
    for (const Column& c : info_cols_) info[c.key] = as_python(inf[c.index], c.kind);
    if (timing)
      for (const Column& c : timing_cols_) info[c.key] = as_python(inf[c.index], c.kind);
    if (!log_cols_.empty() && !log.is_none()) {
      py::tuple row(log_cols_.size());
      for (size_t j = 0; j < log_cols_.size(); ++j) row[j] = py::float_(inf[log_cols_[j]]);
      if (PyList_Append(log.ptr(), row.ptr()) != 0) throw py::error_already_set();
    }
    return py::make_tuple(std::move(obs_out), py::float_(inf[0]), flags, std::move(info));
  }

 private:
  static constexpr int64_t kMaxActions = 8;

  // A 1-d float32/float64 array of n_actions_ values within [-tol, tol] (NaN fails the
  // comparison), read into a; anything else: false.
  bool read_action(py::handle action, double* a) const {
    if (!read_floats(action, n_actions_, a)) return false;
    for (int64_t j = 0; j < n_actions_; ++j)
      if (!(a[j] >= -tol_ && a[j] <= tol_)) return false;
    return true;
  }

  py::object core_obj_;  // keeps the core alive
  EnvCoreBase& core_;
  py::array_t<float, py::array::c_style> obs_;
  py::array_t<double, py::array::c_style> terms_, info_;
  std::vector<py::str> term_keys_;
  std::vector<Column> info_cols_, timing_cols_;
  std::vector<int64_t> log_cols_;
  py::str reward_terms_key_{"reward_terms"};
  double tol_;
  int64_t n_actions_ = 0;
};


// ClosedLoopEval's env form in one call per sample (vdsim_gym/eval/env_run.py): the
// policy's action is checked as check_policy_action checks it (n finite values, clipped
// to [-1, 1]), the env core steps with the sample's delay, and the sample's row is
// recorded here (what the Python loop recorded: the sample's timing, the state and task
// info columns before the step, the command, the command in force) instead of in Python
// dicts. An action that is not a float ndarray of n finite values returns None: the
// Python side checks it (raising the error that names it) and calls again.
class EvalStepper {
 public:
  // Row layout (doubles): k, now (the sample tick), call_tick, t_start, c, apply_tick,
  // overrun, lost, wall, obs_age (of the observation the policy saw), before (the sample
  // tick of the command in force during `now` before the step), tick_after, then the 10
  // state columns, the info columns, the command.
  static constexpr int kHead = 12;
  static constexpr int kState = 10;

  EvalStepper(py::object core, py::array_t<float, py::array::c_style> obs,
              py::array_t<double, py::array::c_style> terms,
              py::array_t<double, py::array::c_style> info, std::vector<int64_t> info_cols,
              int64_t apply_col, int64_t lost_col, int64_t overrun_col, int64_t age_col,
              bool timed, bool map_command, py::object log, std::vector<int64_t> log_cols)
      : core_obj_(std::move(core)), core_(core_obj_.cast<EnvCoreBase&>()), obs_(std::move(obs)),
        terms_(std::move(terms)), info_(std::move(info)), info_cols_(std::move(info_cols)),
        apply_col_(apply_col), lost_col_(lost_col), overrun_col_(overrun_col),
        age_col_(age_col), timed_(timed), map_command_(map_command), log_(std::move(log)),
        log_cols_(std::move(log_cols)) {
    const vdsim::EnvSpec& s = core_.spec();
    if (obs_.size() < s.obs_size() || terms_.size() < s.term_size() ||
        info_.size() < s.info_size())
      throw std::invalid_argument("EvalStepper: a buffer is smaller than the core's rows");
    n_actions_ = s.action_size();
    if (n_actions_ > kMaxActions) throw std::invalid_argument("EvalStepper: too many actions");
    auto check = [&](int64_t j) {
      if (j >= s.info_size()) throw std::invalid_argument("EvalStepper: bad info column");
    };
    for (int64_t j : info_cols_) check(j);
    for (int64_t j : log_cols_) check(j);
    for (int64_t j : {apply_col_, lost_col_, overrun_col_, age_col_}) check(j);
    width_ = kHead + kState + static_cast<int64_t>(info_cols_.size()) + n_actions_;
    refresh();
  }

  // After a reset: the next sample, the observation's age 0.
  void refresh() {
    core_.next_sample(next_k, call_tick, t_start);
    now = core_.plant_tick();
    age_ = 0.0;
    flags = 0;
  }

  py::object call(py::handle action, double c, double wall) {
    double a[kMaxActions];
    if (!read_floats(action, n_actions_, a, true)) return py::none();
    for (int64_t j = 0; j < n_actions_; ++j) {
      if (!std::isfinite(a[j])) return py::none();
      a[j] = a[j] < -1.0 ? -1.0 : (a[j] > 1.0 ? 1.0 : a[j]);  // np.clip
    }
    const size_t base = rows_.size();
    rows_.resize(base + static_cast<size_t>(width_));
    double* r = rows_.data() + base;
    r[0] = static_cast<double>(next_k);
    r[1] = static_cast<double>(now);
    r[2] = static_cast<double>(call_tick);
    r[3] = t_start;
    r[4] = c;
    r[8] = wall;
    r[9] = age_;
    r[10] = static_cast<double>(core_.in_force_sample(now));
    state_row(r + kHead);
    double* cmd = r + kHead + kState + info_cols_.size();
    if (map_command_) {
      core_.command_of(a, cmd);
    } else {
      for (int64_t j = 0; j < n_actions_; ++j) cmd[j] = a[j];
    }
    float* o = obs_.mutable_data();
    double* t = terms_.mutable_data();
    double* inf = info_.mutable_data();
    const double delay = timed_ ? c : std::numeric_limits<double>::quiet_NaN();
    try {
      flags = vdsim_py::run_interruptible([&] { return core_.step(a, o, t, inf, delay); });
    } catch (...) {
      rows_.resize(base);  // the interrupted sample is not recorded
      throw;
    }
    r = rows_.data() + base;  // (no reallocation since, but keep it obviously right)
    r[5] = apply_col_ >= 0 ? inf[apply_col_] : static_cast<double>(now);
    r[6] = overrun_col_ >= 0 ? inf[overrun_col_] : 0.0;
    r[7] = lost_col_ >= 0 ? inf[lost_col_] : 0.0;
    if (age_col_ >= 0) age_ = inf[age_col_];
    now = core_.plant_tick();
    r[11] = static_cast<double>(now);
    core_.next_sample(next_k, call_tick, t_start);
    if (!log_cols_.empty() && !log_.is_none()) {
      py::tuple row(log_cols_.size());
      for (size_t j = 0; j < log_cols_.size(); ++j) row[j] = py::float_(inf[log_cols_[j]]);
      if (PyList_Append(log_.ptr(), row.ptr()) != 0) throw py::error_already_set();
    }
    const int64_t n_obs = core_.spec().obs_size();
    py::array_t<float> obs_out(n_obs);
    std::memcpy(obs_out.mutable_data(), o, sizeof(float) * static_cast<size_t>(n_obs));
    return std::move(obs_out);
  }

  // The run's end after its last sample: the plant advanced to the core's run end (the
  // commands scheduled before it apply), when it stopped before.
  void finish() {
    vdsim_py::run_interruptible([&] {
      core_.run_to_end();
      return 0;
    });
    now = core_.plant_tick();
  }

  // The state and info columns now (the closing row), NaN state without a vehicle.
  py::array_t<double> state_now() {
    py::array_t<double> out(kState + static_cast<py::ssize_t>(info_cols_.size()));
    state_row(out.mutable_data());
    return out;
  }

  // The run's columns from the recorded rows (what ClosedLoopEval's result is built
  // from; vdsim_gym.eval.result_build.RunColumns): `final` the state and info columns at
  // the end (state_now()), t_end [s], dt the substep, `networked` whether a network may
  // have discarded commands (a delivered one discards the pending ones due after it).
  // The core's grid rows (EnvCoreBase::set_grid_rows), if any, are trace rows too, in tick
  // order between the samples' (NaN info columns).
  // Returns (t, states, commands, src_ticks, src_overrun, k, apply_tick, reals, flags):
  //   t (n+1): each sample's grid time, then t_end;
  //   states (n+1, state + info columns): before each step, then `final`;
  //   commands (n+1, actions): the command in force during each sample's tick (its own
  //     when it applied at once, else the one the schedule held before the step; 0 before
  //     any), NaN in the closing row;
  //   src_ticks (3, n+1): that command's sample time [s], apply tick and c_k (NaN: none);
  //   src_overrun (n+1) int8: its overrun flag (0: none);
  //   k, apply_tick (n) int64; reals (6 + actions, n): t_sample, t_start, t_call, c_k,
  //   t_compute_s, obs_age, then the command columns; flags (4, n) bool: overrun,
  //   stopping (all false), discarded, lost.
  py::tuple columns(py::array_t<double, py::array::c_style | py::array::forcecast> final_row,
                    double t_end, double dt, bool networked) const {
    const int64_t n = static_cast<int64_t>(rows_.size()) / width_;
    const int64_t n_state = kState + static_cast<int64_t>(info_cols_.size());
    const int64_t n_cmd = n_actions_;
    const int64_t cmd0 = kHead + n_state;
    if (final_row.size() != n_state) throw std::invalid_argument("columns: final row size");
    // The core's grid rows (set_grid_rows): trace rows between the samples' own.
    const std::vector<double>& grid = core_.grid_rows();
    constexpr int64_t kG = EnvCoreBase::kGridRowSize;
    const int64_t n_g = static_cast<int64_t>(grid.size()) / kG;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto at = [&](int64_t r, int64_t j) { return rows_[static_cast<size_t>(r * width_ + j)]; };
    auto gat = [&](int64_t r, int64_t j) { return grid[static_cast<size_t>(r * kG + j)]; };
    const py::ssize_t N = static_cast<py::ssize_t>(n);
    const int64_t R = n + n_g;  // trace rows before the closing one
    const py::ssize_t R1 = static_cast<py::ssize_t>(R + 1);
    py::array_t<double> t(R1), states({R1, static_cast<py::ssize_t>(n_state)}),
        commands({R1, static_cast<py::ssize_t>(n_cmd)}), src({py::ssize_t{3}, R1});
    py::array_t<int8_t> src_overrun(R1);
    py::array_t<int64_t> k(N), apply_tick(N);
    py::array_t<double> reals({static_cast<py::ssize_t>(6 + n_cmd), N});
    py::array_t<bool> flags({py::ssize_t{4}, N});
    double* pt = t.mutable_data();
    double* ps = states.mutable_data();
    double* pc = commands.mutable_data();
    double* psrc = src.mutable_data();
    int8_t* pov = src_overrun.mutable_data();
    int64_t* pk = k.mutable_data();
    int64_t* pa = apply_tick.mutable_data();
    double* pr = reals.mutable_data();
    bool* pf = flags.mutable_data();
    std::vector<double> nows(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) nows[static_cast<size_t>(r)] = at(r, 1);
    // The sample whose command acts at a row: `sr` >= 0, or none.
    auto in_force = [&](int64_t row, int64_t sr) {
      if (sr >= 0) {
        const double sa = at(sr, 5);
        psrc[row] = at(sr, 1) * dt;
        psrc[R1 + row] = sa >= 0.0 ? sa : nan;
        psrc[2 * R1 + row] = at(sr, 4);
        pov[row] = static_cast<int8_t>(at(sr, 6) != 0.0);
        for (int64_t j = 0; j < n_cmd; ++j) pc[row * n_cmd + j] = at(sr, cmd0 + j);
      } else {
        psrc[row] = psrc[R1 + row] = psrc[2 * R1 + row] = nan;
        pov[row] = 0;
        for (int64_t j = 0; j < n_cmd; ++j) pc[row * n_cmd + j] = 0.0;
      }
    };
    auto sample_at = [&](double tick) -> int64_t {
      const auto it = std::lower_bound(nows.begin(), nows.end(), tick);
      return it != nows.end() && *it == tick ? it - nows.begin() : -1;
    };
    int64_t gi = 0, row = 0;
    for (int64_t r = 0; r <= n; ++r) {
      // Grid rows before sample r (all the rest after the last sample).
      while (gi < n_g && (r == n || gat(gi, 0) < at(r, 1))) {
        pt[row] = gat(gi, 0) * dt;
        std::copy_n(&grid[static_cast<size_t>(gi * kG + 2)], kState, ps + row * n_state);
        std::fill(ps + row * n_state + kState, ps + (row + 1) * n_state, nan);
        in_force(row, sample_at(gat(gi, 1)));
        ++gi, ++row;
      }
      if (r == n) break;
      const double now = at(r, 1), apply = at(r, 5), before = at(r, 10);
      // Its own command when it applied at once, else the sample at `before`, or none.
      in_force(row, apply >= 0.0 && apply <= now ? r : sample_at(before));
      pt[row] = now * dt;
      std::copy_n(&rows_[static_cast<size_t>(r * width_ + kHead)], n_state,
                  ps + row * n_state);
      ++row;
      pk[r] = static_cast<int64_t>(at(r, 0));
      pa[r] = static_cast<int64_t>(apply);
      pr[r] = now * dt;
      pr[N + r] = at(r, 3);
      pr[2 * N + r] = at(r, 2) * dt;
      pr[3 * N + r] = at(r, 4);
      pr[4 * N + r] = at(r, 8);
      pr[5 * N + r] = at(r, 9);
      for (int64_t j = 0; j < n_cmd; ++j) pr[(6 + j) * N + r] = at(r, cmd0 + j);
      pf[r] = at(r, 6) != 0.0;
      pf[N + r] = false;
      pf[2 * N + r] = false;
      pf[3 * N + r] = at(r, 7) != 0.0;
    }
    pt[R] = t_end;
    std::copy_n(final_row.data(), n_state, ps + R * n_state);
    for (int64_t j = 0; j < n_cmd; ++j) pc[R * n_cmd + j] = nan;
    psrc[R] = psrc[R1 + R] = psrc[2 * R1 + R] = nan;
    pov[R] = 0;
    if (networked) {  // a delivered command discards the pending ones due after it
      std::vector<int64_t> waiting, kept;
      for (int64_t j = 0; j < n; ++j) {
        const double aj = at(j, 5);
        if (at(j, 7) != 0.0 || aj < 0.0) continue;
        for (int64_t w : waiting)
          if (at(w, 5) > aj) pf[2 * N + w] = true;
        kept.clear();
        for (int64_t w : waiting)
          if (!pf[2 * N + w]) kept.push_back(w);
        kept.push_back(j);
        waiting.clear();
        const double after = at(j, 11);
        for (int64_t w : kept)
          if (at(w, 5) > after) waiting.push_back(w);
      }
    }
    return py::make_tuple(t, states, commands, src, src_overrun, k, apply_tick, reals, flags);
  }

  // The recorded rows, (n, width).
  py::array_t<double> rows() const {
    const py::ssize_t n = static_cast<py::ssize_t>(rows_.size()) / width_;
    py::array_t<double> out({n, static_cast<py::ssize_t>(width_)});
    std::copy(rows_.begin(), rows_.end(), out.mutable_data());
    return out;
  }

  int64_t next_k = 0, call_tick = 0, now = 0;
  double t_start = 0.0;
  int flags = 0;
  double age() const { return age_; }

 private:
  static constexpr int64_t kMaxActions = 8;

  void state_row(double* out) {
    if (!core_.state_columns(out))
      std::fill(out, out + kState, std::numeric_limits<double>::quiet_NaN());
    const double* inf = info_.data();
    for (size_t j = 0; j < info_cols_.size(); ++j) out[kState + j] = inf[info_cols_[j]];
  }

  py::object core_obj_;  // keeps the core alive
  EnvCoreBase& core_;
  py::array_t<float, py::array::c_style> obs_;
  py::array_t<double, py::array::c_style> terms_, info_;
  std::vector<int64_t> info_cols_;
  int64_t apply_col_, lost_col_, overrun_col_, age_col_;
  bool timed_, map_command_;
  py::object log_;
  std::vector<int64_t> log_cols_;
  int64_t n_actions_ = 0, width_ = 0;
  double age_ = 0.0;
  std::vector<double> rows_;
};

}  // namespace

void bind_gym_step(py::module_& m) {
  py::class_<GymStepper>(m, "GymStepper")
      .def(py::init<py::object, py::array_t<float, py::array::c_style>,
                    py::array_t<double, py::array::c_style>,
                    py::array_t<double, py::array::c_style>, const py::sequence&,
                    const py::sequence&, const py::sequence&, std::vector<int64_t>, double>(),
           py::arg("core"), py::arg("obs").noconvert(), py::arg("terms").noconvert(),
           py::arg("info").noconvert(), py::arg("term_keys"), py::arg("info_cols"),
           py::arg("timing_cols"), py::arg("log_cols"), py::arg("action_tol"),
           "A single env's step() in one call over an env core and its caller-owned rows; "
           "info_cols/timing_cols: (key, column, kind 0 float / 1 int / 2 bool)")
      .def_readwrite("timing", &GymStepper::timing, "Report the timing keys (latency on)")
      .def("__call__", &GymStepper::call, py::arg("action"),
           py::arg("measured_delay") = std::numeric_limits<double>::quiet_NaN(),
           py::arg("log") = py::none(),
           "(obs, reward, flags, info), or None when the action needs the slow path");

  py::class_<EvalStepper>(m, "EvalStepper")
      .def(py::init<py::object, py::array_t<float, py::array::c_style>,
                    py::array_t<double, py::array::c_style>,
                    py::array_t<double, py::array::c_style>, std::vector<int64_t>, int64_t,
                    int64_t, int64_t, int64_t, bool, bool, py::object,
                    std::vector<int64_t>>(),
           py::arg("core"), py::arg("obs").noconvert(), py::arg("terms").noconvert(),
           py::arg("info").noconvert(), py::arg("info_cols"), py::arg("apply_col"),
           py::arg("lost_col"), py::arg("overrun_col"), py::arg("age_col"), py::arg("timed"),
           py::arg("map_command"), py::arg("log"), py::arg("log_cols"),
           "ClosedLoopEval's env form, a sample per call over an env core and its rows "
           "(info columns -1: not reported)")
      .def("__call__", &EvalStepper::call, py::arg("action"), py::arg("c"), py::arg("wall"),
           "The next observation (float32), or None when the action needs checking first")
      .def("refresh", &EvalStepper::refresh, "After a reset: the next sample, age 0")
      .def("finish", &EvalStepper::finish,
           "The plant advanced to the core's run end without a sample (the run's end)")
      .def("state_now", &EvalStepper::state_now, "State and info columns now")
      .def("rows", &EvalStepper::rows, "The recorded sample rows, (n, width)")
      .def("columns", &EvalStepper::columns, py::arg("final"), py::arg("t_end"), py::arg("dt"),
           py::arg("networked"),
           "The run's columns from the rows: (t, states, commands, src, src_overrun, k, "
           "apply_tick, reals, flags); see bind_gym_step.cpp")
      .def_readonly("next_k", &EvalStepper::next_k)
      .def_readonly("call_tick", &EvalStepper::call_tick)
      .def_readonly("t_start", &EvalStepper::t_start)
      .def_readonly("now", &EvalStepper::now)
      .def_readonly("flags", &EvalStepper::flags)
      .def_property_readonly("age", &EvalStepper::age,
                             "obs_age of the observation the policy sees next [s]");
}
