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

class GymStepper {
 public:
  GymStepper(py::object core, py::array_t<float, py::array::c_style> obs,
             py::array_t<double, py::array::c_style> terms,
             py::array_t<double, py::array::c_style> info, std::vector<std::string> term_keys,
             const std::vector<std::tuple<std::string, int64_t, int>>& info_cols,
             const std::vector<std::tuple<std::string, int64_t, int>>& timing_cols,
             std::vector<int64_t> log_cols, double action_tol)
      : core_obj_(std::move(core)), core_(core_obj_.cast<EnvCoreBase&>()), obs_(std::move(obs)),
        terms_(std::move(terms)), info_(std::move(info)), log_cols_(std::move(log_cols)),
        tol_(action_tol) {
    const vdsim::EnvSpec& s = core_.spec();
    if (obs_.size() < s.obs_size() || terms_.size() < s.term_size() ||
        info_.size() < s.info_size())
      throw std::invalid_argument("GymStepper: a buffer is smaller than the core's rows");
    if (static_cast<int64_t>(term_keys.size()) != s.term_size())
      throw std::invalid_argument("GymStepper: one key per reward term");
    n_actions_ = s.action_size();
    if (n_actions_ > kMaxActions) throw std::invalid_argument("GymStepper: too many actions");
    for (auto& k : term_keys) term_keys_.emplace_back(k);
    auto columns = [&](const auto& cols, std::vector<Column>& out) {
      for (const auto& [key, j, kind] : cols) {
        if (j < 0 || j >= s.info_size() || kind < 0 || kind > 2)
          throw std::invalid_argument("GymStepper: bad info column " + key);
        out.push_back({py::str(key), j, static_cast<Kind>(kind)});
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
    if (!py::isinstance<py::array>(action)) return false;
    auto arr = py::reinterpret_borrow<py::array>(action);
    if (arr.ndim() != 1 || arr.shape(0) != n_actions_) return false;
    const py::dtype dt = arr.dtype();
    if (dt.kind() != 'f') return false;
    const auto* base = static_cast<const char*>(arr.data());
    const py::ssize_t stride = arr.strides(0);
    for (int64_t j = 0; j < n_actions_; ++j) {
      const char* p = base + j * stride;
      double v;
      if (dt.itemsize() == 8) {
        std::memcpy(&v, p, sizeof v);
      } else if (dt.itemsize() == 4) {
        float f;
        std::memcpy(&f, p, sizeof f);
        v = f;
      } else {
        return false;  // float16, longdouble: the slow path converts
      }
      if (!(v >= -tol_ && v <= tol_)) return false;
      a[j] = v;
    }
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

}  // namespace

void bind_gym_step(py::module_& m) {
  py::class_<GymStepper>(m, "GymStepper")
      .def(py::init<py::object, py::array_t<float, py::array::c_style>,
                    py::array_t<double, py::array::c_style>,
                    py::array_t<double, py::array::c_style>, std::vector<std::string>,
                    const std::vector<std::tuple<std::string, int64_t, int>>&,
                    const std::vector<std::tuple<std::string, int64_t, int>>&,
                    std::vector<int64_t>, double>(),
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
}
