// The classical baselines' batch kernels (vdsim/baselines.hpp) behind the Python
// controllers' predict(): one call evaluates a single observation or a batch, with no
// per-row Python and no numpy temporaries.
//
// A kernel's __call__(obs, episode_start) takes a float32/float64 ndarray of shape
// (n_obs,) or (N, n_obs), any strides, and episode_start None or a bool ndarray of N
// entries (or one); anything else returns None and the Python side converts it (or
// raises the error that names the cause), then calls again. A controller that refuses a
// row (the PID ACC's non-finite error) raises ValueError and keeps none of the call.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interruptible.hpp"
#include "vdsim/baselines.hpp"
#include "vdsim/gap_prediction.hpp"
#include "vdsim/single_track.hpp"

namespace py = pybind11;
namespace bl = vdsim::baselines;

namespace {

// The rows of an observation argument, or nothing when it needs converting first.
struct Batch {
  const char* base = nullptr;
  py::ssize_t n = 0, row_stride = 0, col_stride = 0;
  bool f32 = true, single = false;
};

std::optional<Batch> read_batch(py::handle obs, int64_t n_obs) {
  if (!py::isinstance<py::array>(obs)) return std::nullopt;
  auto arr = py::reinterpret_borrow<py::array>(obs);
  const py::dtype dt = arr.dtype();
  if (dt.kind() != 'f' || (dt.itemsize() != 4 && dt.itemsize() != 8)) return std::nullopt;
  Batch b;
  b.f32 = dt.itemsize() == 4;
  b.base = static_cast<const char*>(arr.data());
  if (arr.ndim() == 1 && arr.shape(0) == n_obs) {
    b.single = true;
    b.n = 1;
    b.col_stride = arr.strides(0);
  } else if (arr.ndim() == 2 && arr.shape(1) == n_obs) {
    b.n = arr.shape(0);
    b.row_stride = arr.strides(0);
    b.col_stride = arr.strides(1);
  } else {
    return std::nullopt;
  }
  return b;
}

// episode_start as a per-row flag reader: None (no restarts) or a bool ndarray of n or 1
// entries; nothing when it needs converting first.
struct Restarts {
  const bool* flags = nullptr;
  py::ssize_t stride = 0;
  bool all = false;
  bool at(py::ssize_t i) const {
    if (flags == nullptr) return false;
    if (all) return flags[0];
    return *reinterpret_cast<const bool*>(reinterpret_cast<const char*>(flags) + i * stride);
  }
};

std::optional<Restarts> read_restarts(py::handle start, py::ssize_t n) {
  Restarts r;
  if (start.is_none()) return r;
  if (!py::isinstance<py::array>(start)) return std::nullopt;
  auto arr = py::reinterpret_borrow<py::array>(start);
  if (arr.dtype().kind() != 'b' || arr.ndim() != 1) return std::nullopt;
  if (arr.shape(0) == n) {
    r.stride = arr.strides(0);
  } else if (arr.shape(0) == 1) {
    r.all = true;
  } else {
    return std::nullopt;
  }
  r.flags = static_cast<const bool*>(arr.data());
  return r;
}

py::object predict(bl::BatchController& c, py::handle obs, py::handle episode_start) {
  const auto batch = read_batch(obs, c.n_obs);
  if (!batch) return py::none();
  const auto restarts = read_restarts(episode_start, batch->n);
  if (!restarts) return py::none();
  const int k = c.outputs();
  py::array_t<float> out = batch->single
                               ? py::array_t<float>(std::vector<py::ssize_t>{k})
                               : py::array_t<float>(std::vector<py::ssize_t>{batch->n, k});
  float* o = out.mutable_data();
  c.ensure(batch->n);
  const bool can_fail = c.can_fail();
  if (can_fail) c.checkpoint();
  bl::RowReader row{batch->base, batch->col_stride, batch->f32};
  for (py::ssize_t i = 0; i < batch->n; ++i) {
    if (restarts->at(i)) c.restart(i);
    row.base = batch->base + i * batch->row_stride;
    std::string err = c.compute(i, row, o + i * k);
    if (!err.empty()) {
      if (can_fail) c.rollback();
      throw py::value_error(err);
    }
  }
  return std::move(out);
}

bl::Column column(const std::pair<int64_t, double>& c, int64_t n_obs, const char* what) {
  if (c.first < 0 || c.first >= n_obs)
    throw std::invalid_argument(std::string("baseline column ") + what + " out of range");
  return bl::Column{c.first, c.second};
}

using Col = std::pair<int64_t, double>;  // (index, scale)

template <class T>
std::shared_ptr<T> with_obs(std::shared_ptr<T> c, int64_t n_obs) {
  c->n_obs = n_obs;
  return c;
}

bl::CarFollowingColumns car_following(const std::vector<Col>& cols, int64_t n_obs, double dt,
                                      double a_max, double d_max) {
  if (cols.size() != 5)
    throw std::invalid_argument(
        "car-following columns: ego_speed, set_speed, lead_present, gap, rel_speed");
  return bl::CarFollowingColumns{column(cols[0], n_obs, "ego_speed"),
                                 column(cols[1], n_obs, "set_speed"),
                                 column(cols[2], n_obs, "lead_present"),
                                 column(cols[3], n_obs, "gap"),
                                 column(cols[4], n_obs, "rel_speed"),
                                 dt,
                                 a_max,
                                 d_max};
}

bl::PIDGains pid_gains(const py::dict& g, double lo, double hi) {
  bl::PIDGains out;
  out.kp = g["kp"].cast<double>();
  out.ki = g["ki"].cast<double>();
  out.kd = g.contains("kd") ? g["kd"].cast<double>() : 0.0;
  if (g.contains("integral_limit") && !g["integral_limit"].is_none()) {
    out.has_limit = true;
    out.integral_limit = g["integral_limit"].cast<double>();
  }
  out.output_min = lo;
  out.output_max = hi;
  return out;
}

const char* mode_name(int mode) {
  switch (mode) {
    case bl::ACC::kCruise: return "cruise";
    case bl::ACC::kFollow: return "follow";
    case bl::ACC::kEmergency: return "emergency";
    default: return nullptr;
  }
}

}  // namespace

void bind_baselines(py::module_& m) {
  using Base = bl::BatchController;
  py::class_<Base, std::shared_ptr<Base>>(
      m, "BaselineKernel",
      "A classical baseline evaluated in C++ (vdsim/baselines.hpp): __call__(obs, "
      "episode_start) -> float32 actions, or None when the arguments need converting")
      .def("__call__", &predict, py::arg("obs"), py::arg("episode_start") = py::none())
      .def("clear", &Base::clear, "Forget every row's state (the controller's reset())")
      .def_property_readonly("outputs", &Base::outputs)
      .def_property_readonly("rows", &Base::rows, "Rows of the last call (0 before it)")
      .def("save_rows", [](const Base& b) { return py::make_tuple(b.saved_rows(), b.save()); },
           "(batch size or -1, the rows' state as numbers): what load_rows takes back")
      .def("load_rows", &Base::load, py::arg("n"), py::arg("values"),
           "The rows' state from save_rows (a controller's pickle and deepcopy)")
      .def_readonly("n_obs", &Base::n_obs);

  py::class_<bl::Stanley, Base, std::shared_ptr<bl::Stanley>>(m, "StanleyKernel")
      .def(py::init([](const std::vector<Col>& cols, int64_t n_obs, double wheelbase,
                       double cg_to_front, double max_steer, double gain, double soft_speed,
                       double yaw_damping, double accel_gain) {
             if (cols.size() != 5)
               throw std::invalid_argument("Stanley columns: e_y, e_psi, vx, kappa_ref, r");
             bl::StanleyParams p{column(cols[0], n_obs, "e_y"), column(cols[1], n_obs, "e_psi"),
                                 column(cols[2], n_obs, "vx"),
                                 column(cols[3], n_obs, "kappa_ref"),
                                 column(cols[4], n_obs, "r"), wheelbase, cg_to_front,
                                 max_steer, gain, soft_speed, yaw_damping, accel_gain};
             return with_obs(std::make_shared<bl::Stanley>(std::move(p)), n_obs);
           }),
           py::arg("columns"), py::arg("n_obs"), py::arg("wheelbase"), py::arg("cg_to_front"),
           py::arg("max_steer"), py::arg("gain"), py::arg("soft_speed"),
           py::arg("yaw_damping"), py::arg("accel_gain"),
           "columns: (index, scale) of e_y, e_psi, vx, kappa_ref, r")
      .def(
          "steer",
          [](bl::Stanley& s, py::array_t<double, py::array::c_style | py::array::forcecast> obs) {
            if (obs.ndim() != 2 || obs.shape(1) != s.n_obs)
              throw std::invalid_argument("steer: obs must have shape (N, n_obs)");
            const py::ssize_t n = obs.shape(0);
            py::array_t<double> out(n);
            double* o = out.mutable_data();
            const char* base = reinterpret_cast<const char*>(obs.data());
            for (py::ssize_t i = 0; i < n; ++i)
              o[i] = s.steer(bl::RowReader{base + i * obs.strides(0), obs.strides(1), false});
            return out;
          },
          py::arg("obs"), "Road-wheel steer [rad] of a (N, n_obs) batch")
      .def_property(
          "wheelbase", [](const bl::Stanley& s) { return s.p.wheelbase; },
          [](bl::Stanley& s, double v) { s.p.wheelbase = v; })
      .def_property(
          "cg_to_front", [](const bl::Stanley& s) { return s.p.cg_to_front; },
          [](bl::Stanley& s, double v) { s.p.cg_to_front = v; })
      .def_property(
          "max_steer", [](const bl::Stanley& s) { return s.p.max_steer; },
          [](bl::Stanley& s, double v) { s.p.max_steer = v; })
      .def_property(
          "gain", [](const bl::Stanley& s) { return s.p.gain; },
          [](bl::Stanley& s, double v) { s.p.gain = v; })
      .def_property(
          "soft_speed", [](const bl::Stanley& s) { return s.p.soft_speed; },
          [](bl::Stanley& s, double v) { s.p.soft_speed = v; })
      .def_property(
          "yaw_damping", [](const bl::Stanley& s) { return s.p.yaw_damping; },
          [](bl::Stanley& s, double v) { s.p.yaw_damping = v; })
      .def_property(
          "accel_gain", [](const bl::Stanley& s) { return s.p.accel_gain; },
          [](bl::Stanley& s, double v) { s.p.accel_gain = v; });

  py::class_<bl::PISpeed, Base, std::shared_ptr<bl::PISpeed>>(m, "PISpeedKernel")
      .def(py::init([](const std::vector<Col>& cols, int64_t n_obs, double dt, double kp,
                       double ki) {
             if (cols.size() != 2) throw std::invalid_argument("PI columns: v_ref, vx");
             bl::PISpeedParams p{column(cols[0], n_obs, "v_ref"), column(cols[1], n_obs, "vx"),
                                 dt, kp, ki};
             return with_obs(std::make_shared<bl::PISpeed>(std::move(p)), n_obs);
           }),
           py::arg("columns"), py::arg("n_obs"), py::arg("dt"), py::arg("kp"), py::arg("ki"),
           "columns: (index, scale) of v_ref, vx")
      .def_property(
          "dt", [](const bl::PISpeed& s) { return s.p.dt; },
          [](bl::PISpeed& s, double v) { s.p.dt = v; })
      .def_property(
          "kp", [](const bl::PISpeed& s) { return s.p.kp; },
          [](bl::PISpeed& s, double v) { s.p.kp = v; })
      .def_property(
          "ki", [](const bl::PISpeed& s) { return s.p.ki; },
          [](bl::PISpeed& s, double v) { s.p.ki = v; })
      .def_property_readonly(
          "integral",
          [](const bl::PISpeed& s) {
            return py::array_t<double>(static_cast<py::ssize_t>(s.integral.size()),
                                       s.integral.data());
          },
          "Each row's integral [m] (a copy)");

  py::class_<bl::Composite, Base, std::shared_ptr<bl::Composite>>(m, "CompositeKernel")
      .def(py::init([](std::shared_ptr<Base> lateral, std::shared_ptr<Base> longitudinal) {
             if (lateral->n_obs != longitudinal->n_obs)
               throw std::invalid_argument("the two controllers read different observations");
             auto c = std::make_shared<bl::Composite>(lateral, longitudinal);
             c->n_obs = lateral->n_obs;
             return c;
           }),
           py::arg("lateral"), py::arg("longitudinal"));

  py::class_<bl::ACC, Base, std::shared_ptr<bl::ACC>>(m, "ACCKernel")
      .def(py::init([](const std::vector<Col>& cols, int64_t n_obs, double dt, double a_max,
                       double d_max, double time_headway, double min_distance,
                       double emergency_ttc, py::object exit_ttc, double max_acceleration,
                       double max_deceleration, const py::dict& pid_speed,
                       const py::dict& pid_distance) {
             bl::ACCParams p;
             p.time_headway = time_headway;
             p.min_distance = min_distance;
             p.emergency_ttc = emergency_ttc;
             p.has_exit_ttc = !exit_ttc.is_none();
             p.exit_ttc = p.has_exit_ttc ? exit_ttc.cast<double>() : 0.0;
             p.max_acceleration = max_acceleration;
             p.max_deceleration = max_deceleration;
             p.speed = pid_gains(pid_speed, -max_deceleration, max_acceleration);
             p.distance = pid_gains(pid_distance, -max_deceleration, max_acceleration);
             return with_obs(std::make_shared<bl::ACC>(
                                 car_following(cols, n_obs, dt, a_max, d_max), std::move(p)),
                             n_obs);
           }),
           py::arg("columns"), py::arg("n_obs"), py::arg("dt"), py::arg("a_max"),
           py::arg("d_max"), py::arg("time_headway"), py::arg("min_distance"),
           py::arg("emergency_ttc"), py::arg("exit_ttc"), py::arg("max_acceleration"),
           py::arg("max_deceleration"), py::arg("pid_speed"), py::arg("pid_distance"),
           "columns: (index, scale) of ego_speed, set_speed, lead_present, gap, rel_speed")
      .def_property_readonly(
          "modes",
          [](const bl::ACC& a) {
            py::list out;
            for (const auto& r : a.rows) {
              const char* name = mode_name(r.mode);
              out.append(name ? py::object(py::str(name)) : py::object(py::none()));
            }
            return out;
          },
          "Each row's mode: cruise, follow, emergency, or None before its first call");

  py::class_<bl::IDM, Base, std::shared_ptr<bl::IDM>>(m, "IDMKernel")
      .def(py::init([](const std::vector<Col>& cols, int64_t n_obs, double dt, double a_max,
                       double d_max, double v0, double time_headway, double min_gap,
                       double idm_a_max, double b_comfort, double delta,
                       double max_acceleration, double max_deceleration,
                       bool track_set_speed) {
             bl::IDMParams p{v0,        time_headway, min_gap,          idm_a_max,
                             b_comfort, delta,        max_acceleration, max_deceleration,
                             track_set_speed};
             return with_obs(std::make_shared<bl::IDM>(
                                 car_following(cols, n_obs, dt, a_max, d_max), std::move(p)),
                             n_obs);
           }),
           py::arg("columns"), py::arg("n_obs"), py::arg("dt"), py::arg("a_max"),
           py::arg("d_max"), py::arg("v0"), py::arg("time_headway"), py::arg("min_gap"),
           py::arg("idm_a_max"), py::arg("b_comfort"), py::arg("delta"),
           py::arg("max_acceleration"), py::arg("max_deceleration"),
           py::arg("track_set_speed"),
           "columns: (index, scale) of ego_speed, set_speed, lead_present, gap, rel_speed");

  py::class_<bl::CycleFollower, Base, std::shared_ptr<bl::CycleFollower>>(
      m, "CycleFollowerKernel")
      .def(py::init([](std::vector<double> preview, std::vector<double> scale, int64_t n_obs,
                       bool speed_mode, double lookahead, double horizon, Col speed,
                       double v_max, double a_max, double d_max) {
             if (preview.empty() || preview.size() > 16 || scale.size() != preview.size() ||
                 static_cast<int64_t>(preview.size()) > n_obs)
               throw std::invalid_argument("cycle preview: 1 to 16 times, one scale each");
             bl::CycleFollowerParams p{std::move(preview),
                                       std::move(scale),
                                       speed_mode,
                                       lookahead,
                                       horizon,
                                       column(speed, n_obs, "speed"),
                                       v_max,
                                       a_max,
                                       d_max};
             return with_obs(std::make_shared<bl::CycleFollower>(std::move(p)), n_obs);
           }),
           py::arg("preview"), py::arg("scale"), py::arg("n_obs"), py::arg("speed_mode"),
           py::arg("lookahead"), py::arg("horizon"), py::arg("speed"), py::arg("v_max"),
           py::arg("a_max"), py::arg("d_max"));

  py::class_<vdsim::SingleTrackModel>(
      m, "SingleTrackModel",
      "The delay-compensating controllers' single-track model (vdsim/single_track.hpp; "
      "vdsim_gym.controllers.prediction.SingleTrackPredictor builds it)")
      .def(py::init([](double mass, double yaw_inertia, double cg_to_front, double cg_to_rear,
                       const std::vector<double>& front, const std::vector<double>& rear,
                       double sigma) {
             if (front.size() != 4 || rear.size() != 4)
               throw std::invalid_argument(
                   "each axle's curve: (stiffness, peak, shape, curvature)");
             vdsim::SingleTrackModel p;
             p.mass = mass, p.yaw_inertia = yaw_inertia;
             p.cg_to_front = cg_to_front, p.cg_to_rear = cg_to_rear;
             const std::vector<double>* axles[2] = {&front, &rear};
             for (int k = 0; k < 2; ++k)
               p.axle[k] = {(*axles[k])[0], (*axles[k])[1], (*axles[k])[2], (*axles[k])[3]};
             p.sigma = sigma;
             return p;
           }),
           py::arg("mass"), py::arg("yaw_inertia"), py::arg("cg_to_front"),
           py::arg("cg_to_rear"), py::arg("front"), py::arg("rear"), py::arg("sigma"))
      .def(
          "predict",
          [](const vdsim::SingleTrackModel& p,
             const py::array_t<double, py::array::c_style | py::array::forcecast>& cols,
             double max_step) {
            if (cols.ndim() != 2 || cols.shape(0) != 8)
              throw std::invalid_argument(
                  "cols: an (8, N) array of e_y, e_psi, vx, vy, r, delta, kappa, horizon");
            if (!(max_step > 0.0) || !std::isfinite(max_step))
              throw std::invalid_argument("max_step must be a positive number of seconds");
            const int64_t n = cols.shape(1);
            py::array_t<double> out({int64_t{5}, n});
            const double* base = cols.data();
            const double* in[8];
            for (int k = 0; k < 8; ++k) in[k] = base + k * n;
            double* o = out.mutable_data();
            vdsim_py::run_interruptible([&] {
              vdsim::single_track_predict(p, in, n, max_step, o);
              return 0;
            });
            return out;
          },
          py::arg("cols"), py::arg("max_step"),
          "(5, N) e_y, e_psi, vx, vy, r after each row's horizon (cols: (8, N) e_y, e_psi, "
          "vx, vy, r, delta, kappa, horizon), by each row's RK4 steps (`steps`); the GIL "
          "released, Ctrl-C polled")
      .def(
          "steps",
          [](const vdsim::SingleTrackModel& p, double horizon, double vx, double max_step) {
            return vdsim::single_track_steps(p, horizon, vx, max_step);
          },
          py::arg("horizon"), py::arg("vx"), py::arg("max_step"),
          "The RK4 steps of a row with this horizon [s] at speed vx [m/s]: the fewest of at "
          "most max_step and of at most 1.5 over the model's fastest rate there")
      .def(
          "predict_obs",
          [](const vdsim::SingleTrackModel& p, const py::array& obs,
             const std::vector<int64_t>& cols, const std::vector<double>& scale,
             double max_steer,
             const py::array_t<double, py::array::c_style | py::array::forcecast>& delays,
             double max_step) {
            if (obs.ndim() != 2) throw std::invalid_argument("obs: an (N, n_obs) batch");
            if (cols.size() != 7 || scale.size() != 7)
              throw std::invalid_argument(
                  "cols and scale: e_y, e_psi, vx, vy, r, kappa_ref, prev_steer");
            const int64_t n = obs.shape(0), n_obs = obs.shape(1);
            for (int64_t c : cols)
              if (c < 0 || c >= n_obs) throw std::invalid_argument("a column is out of range");
            if (delays.ndim() != 1 || (delays.size() != 1 && delays.size() != n))
              throw std::invalid_argument("delays: one for every row, or one per row");
            if (!(max_step > 0.0) || !std::isfinite(max_step))
              throw std::invalid_argument("max_step must be a positive number of seconds");
            const bool per_row = delays.size() == n && n != 1;
            py::array_t<double> out({n, n_obs});
            double* o = out.mutable_data();
            const double* d = delays.data();
            auto run = [&](auto tag) {
              using T = decltype(tag);
              auto a = py::array_t<T, py::array::c_style>::ensure(obs);
              if (!a) throw std::invalid_argument("obs: a float32 or float64 array");
              const T* data = a.data();
              vdsim_py::run_interruptible([&] {
                vdsim::single_track_predict_obs<T>(p, data, n, n_obs, cols.data(),
                                                   scale.data(), max_steer, d, per_row,
                                                   max_step, o);
                return 0;
              });
            };
            if (py::dtype::of<float>().is(obs.dtype())) run(float{});
            else if (py::dtype::of<double>().is(obs.dtype())) run(double{});
            else throw std::invalid_argument("obs: a float32 or float64 array");
            return out;
          },
          py::arg("obs"), py::arg("cols"), py::arg("scale"), py::arg("max_steer"),
          py::arg("delays"), py::arg("max_step"),
          "A path env's observation batch (float32 or float64) as doubles with e_y, e_psi, "
          "vx, vy, r replaced by their prediction across each row's delay "
          "(PredictedObservation; rows whose delay is 0 kept as they were)");
  m.def(
      "predict_gap_obs",
      [](const py::array_t<double, py::array::c_style>& obs, const std::vector<int64_t>& cols,
         const std::vector<double>& scale, double a_max, double d_max,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& delays) {
        if (obs.ndim() != 2) throw std::invalid_argument("obs: an (N, n_obs) float64 batch");
        if (cols.size() != 5 || scale.size() != 5)
          throw std::invalid_argument(
              "cols and scale: ego_speed, gap, rel_speed, lead_present, prev_accel");
        const int64_t n = obs.shape(0), n_obs = obs.shape(1);
        vdsim::GapColumns c{};
        for (int j = 0; j < 5; ++j) {
          if (cols[j] < 0 || cols[j] >= n_obs)
            throw std::invalid_argument("a column is out of range");
          c.col[j] = cols[j];
          c.scale[j] = scale[j];
        }
        if (delays.ndim() != 1 || (delays.size() != 1 && delays.size() != n))
          throw std::invalid_argument("delays: one for every row, or one per row");
        const bool per_row = delays.size() == n && n != 1;
        py::array_t<double> out({n, n_obs});
        double* o = out.mutable_data();
        const double* data = obs.data();
        const double* d = delays.data();
        vdsim_py::run_interruptible([&] {
          vdsim::predict_gap_obs(data, n, n_obs, c, a_max, d_max, d, per_row, o);
          return 0;
        });
        return out;
      },
      py::arg("obs"), py::arg("cols"), py::arg("scale"), py::arg("a_max"), py::arg("d_max"),
      py::arg("delays"),
      "An ACC observation batch with ego_speed, gap and rel_speed predicted across each "
      "row's delay (acc_dc.PredictedGap; rows whose delay is 0 kept as they were)");
}
