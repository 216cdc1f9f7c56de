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
#include "vdsim/command_task.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

using DArrayIn = py::array_t<double, py::array::c_style | py::array::forcecast>;

void check_points(const DArrayIn& a, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != 2)
    throw std::invalid_argument(std::string(what) + " must have shape (N, 2)");
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

// The path task's observation outside the env (a Plant's observation dict, the delay
// budget): the same function PathTask::evaluate writes the env's observation with.
struct PathObserver {
  PathTracker path;
  double max_steer = 0.0;
  int64_t hint = -1;
};

}  // namespace

void bind_task(py::module_& m) {
  m.attr("OBS_CLIP") = kObsClip;  // every task's observation columns lie in +-OBS_CLIP
  const EnvSpec path = PathEnvCore::default_spec();
  m.attr("PATH_OBS_NAMES") = vdsim_py::names(path.obs_names);
  m.attr("PATH_TERM_NAMES") = vdsim_py::names(path.term_names);
  m.attr("PATH_STEP_INFO_NAMES") = vdsim_py::names(path.info_names);
  m.attr("PATH_PREVIEW_DISTANCES") = py::make_tuple(kPreviewDistances[0], kPreviewDistances[1],
                                                    kPreviewDistances[2], kPreviewDistances[3]);
  m.attr("PATH_FLAGS") = vdsim_py::flags(path);
  py::dict env_flags;  // the bits every env core shares (env_core.hpp)
  env_flags["terminated"] = kFlagTerminated;
  env_flags["truncated"] = kFlagTruncated;
  env_flags["time_limit"] = kFlagTimeLimit;
  m.attr("ENV_FLAGS") = env_flags;

  // An env core's spec (EnvSpec): what a Python env class reads instead of copying.
  py::class_<EnvSpec>(m, "EnvSpec")
      .def_property_readonly("obs_names", [](const EnvSpec& s) {
             return vdsim_py::names(s.obs_names); })
      .def_property_readonly("action_names", [](const EnvSpec& s) {
             return vdsim_py::names(s.action_names); })
      .def_property_readonly("term_names", [](const EnvSpec& s) {
             return vdsim_py::names(s.term_names); })
      .def_property_readonly("info_names", [](const EnvSpec& s) {
             return vdsim_py::names(s.info_names); })
      .def_property_readonly("summary_names", [](const EnvSpec& s) {
             return vdsim_py::names(s.summary_names); })
      .def_property_readonly("default_weights", &vdsim_py::default_weights,
                             "term name -> the task's default reward weight")
      .def_property_readonly("flags", &vdsim_py::flags,
                             "flag name -> bit: the shared ones and the task's own");

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

  py::class_<PathObserver>(m, "PathObserver")
      .def("reset", [](PathObserver& o) { o.hint = -1; },
           "Forget the projection hint (the next observation searches the whole path)")
      .def("observe", [](PathObserver& o, double X, double Y, double psi, double vx, double vy,
                         double r, double ax, double ay, double delta_rw, double prev_steer,
                         double prev_long) {
             py::array_t<float> out(kPathObsSize);
             double e_psi;
             const Projection p = path_observation(
                 o.path, o.hint, {X, Y, psi, vx, vy, r, ax, ay, delta_rw, prev_steer, prev_long},
                 o.max_steer, out.mutable_data(), e_psi);
             o.hint = p.index;
             return out;
           }, py::arg("X"), py::arg("Y"), py::arg("psi"), py::arg("vx"), py::arg("vy"),
           py::arg("r"), py::arg("ax"), py::arg("ay"), py::arg("delta_rw"),
           py::arg("prev_steer"), py::arg("prev_long"),
           "The path env's observation (float32, PATH_OBS_NAMES) at this finite state; "
           "projects from the previous call's segment")
      .def_property_readonly("obs_scale", [](const PathObserver& o) {
             py::array_t<double> out(kPathObsSize);
             path_obs_scale(o.max_steer, out.mutable_data());
             return out;
           });

  m.def("disc_hits_footprint",
        [](double cx, double cy, double radius, double x, double y, double psi, double front,
           double rear, double half_width) {
          return disc_hits_footprint(cx, cy, radius, x, y, psi, Footprint{front, rear, half_width});
        }, py::arg("cx"), py::arg("cy"), py::arg("radius"), py::arg("x"), py::arg("y"),
        py::arg("psi"), py::arg("front"), py::arg("rear"), py::arg("half_width"));

  py::class_<CourseData>(m, "CourseData",
                         "A course's path, cones and corridor, built once and shared by "
                         "the path cores that take it (set_course_data)")
      .def(py::init([](DArrayIn path, DArrayIn speed, DArrayIn cones,
                       double corridor_half_width, double start_speed) {
             check_points(path, "path");
             check_points(cones, "cones");
             if (path.shape(0) < 2 || speed.size() != path.shape(0))
               throw std::invalid_argument("need >= 2 path points and one speed per point");
             for (py::ssize_t i = 0; i < path.size(); ++i)
               if (!std::isfinite(path.data()[i]))
                 throw std::invalid_argument("path must be finite");
             CourseData d = CourseData::make(path.data(), speed.data(), path.shape(0),
                                             cones.data(), cones.shape(0), corridor_half_width,
                                             start_speed);
             const int64_t i = d.path->first_zero_segment();
             if (i >= 0)
               throw std::invalid_argument("path points " + std::to_string(i) + " and " +
                                           std::to_string(i + 1) +
                                           " coincide; remove repeated points");
             return d;
           }), py::arg("path"), py::arg("speed"), py::arg("cones"),
           py::arg("corridor_half_width"), py::arg("start_speed"))
      .def_property_readonly("length", [](const CourseData& d) { return d.path->length(); });
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
  py::class_<EnvCoreBase, vdsim::TickHook>(m, "EnvCoreBase")
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
      .def_property_readonly("spec", [](const EnvCoreBase& e) { return e.spec(); },
                             "This core's spec (with its action history's columns)")
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
      .def("set_course_data", [](PathEnvCore& e, const CourseData& d) {
             e.task().set_course_data(d);
           }, py::arg("data"),
           "The course of a CourseData, shared (its path and cones are not copied)")
      .def("set_random_course", [](PathEnvCore& e, int64_t n, double length, double k_bound,
                                   double v_lo, double v_hi, double max_lat_accel,
                                   double corridor_half_width) {
             e.task().set_random_course({n, length, k_bound, v_lo, v_hi, max_lat_accel},
                                        corridor_half_width);
           }, py::arg("n"), py::arg("length"), py::arg("k_bound"), py::arg("v_lo"),
           py::arg("v_hi"), py::arg("max_lat_accel"), py::arg("corridor_half_width"),
           "A new random course every episode, drawn by draw_start (courses.random_course_spec)")
      .def_property_readonly("course_serial", [](const PathEnvCore& e) {
             return e.task().course_serial(); }, "Bumped at every new course")
      .def("course_arrays", [](const PathEnvCore& e) {
             const PathTracker& p = e.task().path();
             const py::ssize_t n = p.size();
             py::array_t<double> xy({n, static_cast<py::ssize_t>(2)}), v(n);
             for (py::ssize_t i = 0; i < n; ++i) {
               xy.mutable_at(i, 0) = p.x_at(i);
               xy.mutable_at(i, 1) = p.y_at(i);
               v.mutable_at(i) = p.speed_at(i);
             }
             return py::make_tuple(std::move(xy), std::move(v), e.task().start_speed());
           }, "This course's path (n, 2), speed (n,) and start speed (copies)")
      .def("command_from_action", [](const PathEnvCore& e, double a0, double a1) {
             const double a[2] = {a0, a1};
             const Command c = e.task().command_from_action(e.plant(), a);
             return py::make_tuple(c.steer, c.longitudinal);
           }, py::arg("a_steer"), py::arg("a_long"))
      .def("apply_command", [](PathEnvCore& e, double steer, double lon) {
             e.plant().command_now({steer, lon});
           }, py::arg("steer"), py::arg("longitudinal"))
      .def("observer", [](const PathEnvCore& e) {
             e.task().require_course();
             return PathObserver{e.task().path(), e.plant().vehicle().max_steer};
           }, "A PathObserver on this core's course (set_course_data first) and vehicle")
      .def_property_readonly("session", [](PathEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal)
      .def_property_readonly("cone_hits", [](const PathEnvCore& e) {
             return hits_array(e.task().cones()); })
      .def_property_readonly("path_length", [](const PathEnvCore& e) {
             return e.task().path().length(); })
      .def_property_readonly("course_points_built", [](const PathEnvCore& e) {
             return e.task().path().points_built(); },
             "Points of the course built so far: a drawn course is built as far as it is "
             "read (its whole length once asked for: course_arrays, path_length)")
      .def_property_readonly("task", [](const PathEnvCore& e) { return e.task().params(); });

  vdsim_py::bind_env_core<SpeedTask>(m, "SpeedEnvCore")
      .def(py::init([](const Session& proto, std::int64_t ticks_per_period, double w_speed,
                       double w_smoothness) {
             if (ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             return new SpeedEnvCore(SpeedTaskParams{ticks_per_period, w_speed, w_smoothness},
                                     proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("ticks_per_period"),
           py::arg("w_speed") = SpeedTaskParams{}.w_speed,
           py::arg("w_smoothness") = SpeedTaskParams{}.w_smoothness,
           "The speed-tracking test task (one longitudinal action), its own session")
      .def_property_readonly("session", [](SpeedEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal);

  vdsim_py::bind_env_core<CommandTask>(m, "CommandEnvCore")
      .def(py::init([](const Session& proto, std::int64_t ticks_per_period) {
             if (ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             const int wheels = proto.config().level == Level::L1 ? 2 : 4;
             return new CommandEnvCore(CommandTaskParams{ticks_per_period, wheels},
                                       proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("ticks_per_period"),
           "The command task (ClosedLoopEval's callback form): the plant command as the "
           "action, the plant's state as the observation; its own session")
      .def_property_readonly("session", [](CommandEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal);

  py::class_<AccWeights>(m, "AccWeights")  // one field per term (AccEnvCore's term_names)
      .def(py::init<>())
      .def_readwrite("gap", &AccWeights::gap)
      .def_readwrite("speed", &AccWeights::speed)
      .def_readwrite("jerk", &AccWeights::jerk)
      .def_readwrite("comfort", &AccWeights::comfort)
      .def_readwrite("safety", &AccWeights::safety)
      .def_readwrite("collision", &AccWeights::collision)
      .def_readwrite("alive", &AccWeights::alive);

  py::class_<AccTaskParams>(m, "AccTaskParams")
      .def(py::init<>())
      .def_readwrite("ticks_per_period", &AccTaskParams::ticks_per_period)
      .def_readwrite("time_headway", &AccTaskParams::time_headway)
      .def_readwrite("min_distance", &AccTaskParams::min_distance)
      .def_readwrite("ttc_safe", &AccTaskParams::ttc_safe)
      .def_readwrite("ttc_cap", &AccTaskParams::ttc_cap)
      .def_readwrite("weights", &AccTaskParams::weights);

  vdsim_py::bind_env_core<AccTask>(m, "AccEnvCore")
      .def(py::init([](const Session& proto, const AccTaskParams& task) {
             if (task.ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             return new AccEnvCore(task, proto.vehicle(), proto.config());
           }), py::arg("session"), py::arg("task"),
           "The car-following task core (VDSim-ACC-v0), its own session")
      .def("set_scenario", [](AccEnvCore& e, DArrayIn speed, DArrayIn distance) {
             if (speed.ndim() != 1 || distance.ndim() != 1 || speed.size() != distance.size())
               throw std::invalid_argument("lead speed and distance: 1-d, one value per period");
             e.task().set_scenario(speed.data(), distance.data(), speed.size());
           }, py::arg("lead_speed"), py::arg("distance"))
      .def("set_drawn", [](AccEnvCore& e, std::vector<int> families, int64_t periods, double dt,
                           double set_speed) {
             e.task().set_drawn(std::move(families), periods, dt, set_speed);
           }, py::arg("families"), py::arg("periods"), py::arg("dt"), py::arg("set_speed"),
           "Each episode's scenario drawn by draw_start: a family of `families` (indices in "
           "FAMILIES), `periods` periods of `dt` [s], set_speed NaN: drawn")
      .def("set_fixed", [](AccEnvCore& e, double ego_speed0, double set_speed) {
             e.task().set_fixed(ego_speed0, set_speed);
           }, py::arg("ego_speed0"), py::arg("set_speed"),
           "Every episode on set_scenario's scenario, from (ego_speed0, set_speed)")
      .def("set_episode_limit_ticks", [](AccEnvCore& e, int64_t ticks) {
             e.task().set_episode_limit_ticks(ticks);
           }, py::arg("ticks"), "The time limit draw_start sets [substeps]; -1: the env's own")
      .def("scenario", [](const AccEnvCore& e) {
             const AccTask& t = e.task();
             const py::ssize_t n = t.periods();
             py::array_t<double> v(n), d(n);
             for (py::ssize_t i = 0; i < n; ++i) {
               v.mutable_at(i) = t.lead_speed_at(i);
               d.mutable_at(i) = t.lead_distance_at(i);
             }
             const auto& st = t.start();
             return py::make_tuple(t.family(), v, d, st[1], st[0]);
           }, "This episode's family (-1: the fixed scenario), lead speed and distance "
              "(copies), set speed and ego start speed")
      .def_property_readonly("periods", [](const AccEnvCore& e) { return e.task().periods(); })
      .def_property_readonly("session", [](AccEnvCore& e) -> Session& { return e.plant(); },
                             py::return_value_policy::reference_internal);
}
