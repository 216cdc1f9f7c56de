// Path-tracking task: PathTracker / ConeField for tests against Python references, and
// PathEnvCore, the per-step core of the DLC and PathFollow envs. step() releases the GIL
// and writes into caller-owned buffers (noconvert: a dtype mismatch is an error, never a
// silent temporary copy that would swallow the writes).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "bind_env_core.hpp"
#include "vdsim/latency.hpp"
#include "vdsim/path_task.hpp"
#include "vdsim/acc_task.hpp"
#include "vdsim/speed_task.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

using DArrayIn = py::array_t<double, py::array::c_style | py::array::forcecast>;

void check_points(const DArrayIn& a, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != 2)
    throw std::invalid_argument(std::string(what) + " must have shape (N, 2)");
}

template <size_t N>
py::tuple names(const std::array<const char*, N>& a) {
  py::tuple t(N);
  for (size_t i = 0; i < N; ++i) t[i] = py::str(a[i]);
  return t;
}

py::tuple as_tuple(const Projection& p) {
  return py::make_tuple(p.s, p.index, p.e_y, p.heading, p.kappa, p.v_ref);
}

py::array_t<bool> hits_array(const ConeField& c) {
  py::array_t<bool> out(c.size());
  auto* o = out.mutable_data();
  for (int64_t k = 0; k < c.size(); ++k) o[k] = c.hits()[k] != 0;
  return out;
}

}  // namespace

void bind_task(py::module_& m) {
  m.attr("PATH_OBS_NAMES") = names(kPathObsNames);
  m.attr("PATH_TERM_NAMES") = names(kTermNames);
  m.attr("PATH_STEP_INFO_NAMES") = [] {
    EnvSpec s = PathTask::spec();
    for (const char* n : kTimingInfoNames) s.info_names.emplace_back(n);
    return vdsim_py::names(s.info_names);
  }();
  m.attr("PATH_PREVIEW_DISTANCES") = py::make_tuple(kPreviewDistances[0], kPreviewDistances[1],
                                                    kPreviewDistances[2], kPreviewDistances[3]);
  py::dict flags;
  flags["terminated"] = int(kTerminated);
  flags["truncated"] = int(kTruncated);
  flags["cone_hit"] = int(kConeHit);
  flags["off_corridor"] = int(kOffCorridor);
  flags["spin_out"] = int(kSpinOut);
  flags["non_finite"] = int(kNonFinite);
  flags["stalled"] = int(kStalled);
  flags["time_limit"] = int(kFlagTimeLimit);
  m.attr("PATH_FLAGS") = flags;
  py::dict env_flags;  // the bits every env core shares (env_core.hpp)
  env_flags["terminated"] = kFlagTerminated;
  env_flags["truncated"] = kFlagTruncated;
  env_flags["time_limit"] = kFlagTimeLimit;
  m.attr("ENV_FLAGS") = env_flags;

  py::class_<RewardWeights>(m, "RewardWeights")
      .def(py::init<>())
      .def_readwrite("tracking", &RewardWeights::tracking)
      .def_readwrite("heading", &RewardWeights::heading)
      .def_readwrite("speed", &RewardWeights::speed)
      .def_readwrite("smoothness", &RewardWeights::smoothness)
      .def_readwrite("progress", &RewardWeights::progress)
      .def_readwrite("cone", &RewardWeights::cone)
      .def_readwrite("terminal", &RewardWeights::terminal);

  py::class_<TaskParams>(m, "TaskParams")
      .def(py::init<>())
      .def_readwrite("ticks_per_period", &TaskParams::ticks_per_period)
      .def_readwrite("corridor_half_width", &TaskParams::corridor_half_width)
      .def_readwrite("cone_radius", &TaskParams::cone_radius)
      .def_readwrite("terminate_on_cone", &TaskParams::terminate_on_cone)
      .def_readwrite("spin_heading", &TaskParams::spin_heading)
      .def_readwrite("spin_beta", &TaskParams::spin_beta)
      .def_readwrite("beta_min_speed", &TaskParams::beta_min_speed)
      .def_readwrite("stall_time", &TaskParams::stall_time)
      .def_readwrite("stall_speed_fraction", &TaskParams::stall_speed_fraction)
      .def_readwrite("weights", &TaskParams::weights);

  py::class_<PathTracker>(m, "PathTracker")
      .def(py::init([](DArrayIn path, DArrayIn speed) {
             check_points(path, "path");
             if (path.shape(0) < 2 || speed.size() != path.shape(0))
               throw std::invalid_argument("need >= 2 path points and one speed per point");
             PathTracker t;
             t.set(path.data(), speed.data(), path.shape(0));
             return t;
           }), py::arg("path"), py::arg("speed"))
      .def("project", [](const PathTracker& t, double x, double y, int64_t hint) {
             return as_tuple(t.project(x, y, hint));
           }, py::arg("x"), py::arg("y"), py::arg("hint") = -1,
           "(s, index, e_y, heading, kappa, v_ref) of the closest path point")
      .def("point_at", [](const PathTracker& t, double s) {
             double x, y;
             t.point_at(s, x, y);
             return py::make_tuple(x, y);
           }, py::arg("s"))
      .def_property_readonly("length", &PathTracker::length);

  m.def("disc_hits_footprint",
        [](double cx, double cy, double radius, double x, double y, double psi, double front,
           double rear, double half_width) {
          return disc_hits_footprint(cx, cy, radius, x, y, psi, Footprint{front, rear, half_width});
        }, py::arg("cx"), py::arg("cy"), py::arg("radius"), py::arg("x"), py::arg("y"),
        py::arg("psi"), py::arg("front"), py::arg("rear"), py::arg("half_width"));

  py::class_<ConeField>(m, "ConeField")
      .def(py::init([](DArrayIn cones, const PathTracker& path) {
             check_points(cones, "cones");
             ConeField c;
             c.set(cones.data(), cones.shape(0), path);
             return c;
           }), py::arg("cones"), py::arg("path"))
      .def("update", [](ConeField& c, double x, double y, double psi, double s, double front,
                        double rear, double half_width, double radius) {
             return c.update(x, y, psi, s, Footprint{front, rear, half_width}, radius);
           }, py::arg("x"), py::arg("y"), py::arg("psi"), py::arg("s"), py::arg("front"),
           py::arg("rear"), py::arg("half_width"), py::arg("radius"))
      .def("reset_hits", &ConeField::reset_hits)
      .def_property_readonly("hits", &hits_array)
      .def_property_readonly("total_hits", &ConeField::total_hits);

  // The base every env core shares: its spec, for the vector session and Python.
  py::class_<EnvCoreBase>(m, "EnvCoreBase")
      .def_property_readonly("obs_names", [](const EnvCoreBase& e) {
             return vdsim_py::names(e.spec().obs_names); })
      .def_property_readonly("action_names", [](const EnvCoreBase& e) {
             return vdsim_py::names(e.spec().action_names); })
      .def_property_readonly("term_names", [](const EnvCoreBase& e) {
             return vdsim_py::names(e.spec().term_names); })
      .def_property_readonly("info_names", [](const EnvCoreBase& e) {
             return vdsim_py::names(e.spec().info_names); })
      .def_property_readonly("summary_names", [](const EnvCoreBase& e) {
             return vdsim_py::names(e.spec().summary_names); })
      .def("summary", [](const EnvCoreBase& e) {
             py::array_t<double> out(e.spec().summary_size());
             e.summary(out.mutable_data());
             return out;
           }, "The episode so far (summary_names): steps, return, time, the task's fields");

  vdsim_py::bind_env_core<PathTask>(m, "PathEnvCore")
      .def(py::init([](const Session& proto, const TaskParams& task) {
             return new PathEnvCore(task, proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("task"),
           "A path task core with its own session built from the (validated) session's params")
      .def("set_course", [](PathEnvCore& e, DArrayIn path, DArrayIn speed, DArrayIn cones,
                            double corridor_half_width) {
             check_points(path, "path");
             check_points(cones, "cones");
             if (path.shape(0) < 2 || speed.size() != path.shape(0))
               throw std::invalid_argument("need >= 2 path points and one speed per point");
             e.task().set_course(path.data(), speed.data(), path.shape(0), cones.data(),
                                 cones.shape(0), corridor_half_width);
           }, py::arg("path"), py::arg("speed"), py::arg("cones"),
           py::arg("corridor_half_width"))
      .def("command_from_action", [](const PathEnvCore& e, double a0, double a1) {
             const double a[2] = {a0, a1};
             const Command c = e.task().command_from_action(e.plant(), a);
             return py::make_tuple(c.steer, c.longitudinal);
           }, py::arg("a_steer"), py::arg("a_long"))
      .def("apply_command", [](PathEnvCore& e, double steer, double lon) {
             e.plant().command_now({steer, lon});
           }, py::arg("steer"), py::arg("longitudinal"))
      .def("obs_scale", [](const PathEnvCore& e) {
             py::array_t<double> out(kPathObsSize);
             e.task().obs_scale(e.plant(), out.mutable_data());
             return out;
           })
      .def_property_readonly("session", [](PathEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal)
      .def_property_readonly("cone_hits", [](const PathEnvCore& e) {
             return hits_array(e.task().cones()); })
      .def_property_readonly("path_length", [](const PathEnvCore& e) {
             return e.task().path().length(); })
      .def_property_readonly("task", [](const PathEnvCore& e) { return e.task().params(); });

  vdsim_py::bind_env_core<SpeedTask>(m, "SpeedEnvCore")
      .def(py::init([](const Session& proto, std::int64_t ticks_per_period, double w_speed,
                       double w_smoothness) {
             if (ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             return new SpeedEnvCore(SpeedTaskParams{ticks_per_period, w_speed, w_smoothness},
                                     proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("ticks_per_period"), py::arg("w_speed") = 1.0,
           py::arg("w_smoothness") = 0.05,
           "The speed-tracking test task (one longitudinal action), its own session")
      .def_property_readonly("session", [](SpeedEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal);

  vdsim_py::bind_env_core<AccTask>(m, "AccEnvCore")
      .def(py::init([](const Session& proto, std::int64_t ticks_per_period,
                       double time_headway, double min_distance, double ttc_safe,
                       std::vector<double> weights) {
             if (ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             if (weights.size() != 7)
               throw std::invalid_argument(
                   "weights: gap, speed, jerk, comfort, safety, collision, alive");
             AccTaskParams p;
             p.ticks_per_period = ticks_per_period;
             p.time_headway = time_headway;
             p.min_distance = min_distance;
             p.ttc_safe = ttc_safe;
             p.weights = {weights[0], weights[1], weights[2], weights[3], weights[4], weights[5],
                          weights[6]};
             return new AccEnvCore(p, proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("ticks_per_period"), py::arg("time_headway"),
           py::arg("min_distance"), py::arg("ttc_safe"), py::arg("weights"),
           "The car-following task core (VDSim-ACC-v0), its own session")
      .def("set_scenario", [](AccEnvCore& e, DArrayIn speed, DArrayIn distance) {
             if (speed.ndim() != 1 || distance.ndim() != 1 || speed.size() != distance.size())
               throw std::invalid_argument("lead speed and distance: 1-d, one value per period");
             e.task().set_scenario(speed.data(), distance.data(), speed.size());
           }, py::arg("lead_speed"), py::arg("distance"))
      .def_property_readonly("periods", [](const AccEnvCore& e) { return e.task().periods(); })
      .def_property_readonly("session", [](AccEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal);
}
