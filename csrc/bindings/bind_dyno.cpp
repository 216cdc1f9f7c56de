// Chassis-dyno bench and robot driver (vdsim_gym.dyno wraps them with checks).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bind_env_core.hpp"
#include "vdsim/drive_cycle_task.hpp"
#include "vdsim/dyno.hpp"
#include "vdsim/dyno_session.hpp"
#include "vdsim/robot_driver.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

// A cycle's speeds, tolerance band and phases, shared by the dyno cores that drive it
// (DriveCycleTask::Cycle).
struct CycleSpeeds {
  std::shared_ptr<const DriveCycleTask::CycleData> data;
};

// vdsim_gym.dyno.driver.MAX_DELAY_STEPS: the delay line stays finite.
constexpr std::int64_t kMaxDriverDelaySteps = 10000000;

// The bench: parameters plus state; step holds (throttle, brake) for dt.
struct DynoBenchCore {
  DynoParams p;
  DynoState s;
  double step(double throttle, double brake, double dt) {
    return dyno_step(p, s, throttle, brake, dt);
  }
};

}  // namespace

void bind_dyno(py::module_& m) {
  py::class_<DynoParams> dp(m, "DynoParams");
  dp.def(py::init<>()).def("effective_mass", &DynoParams::effective_mass)
      .def("total_brake_torque", &DynoParams::total_brake_torque);
#define VDSIM_FIELD(name) dp.def_readwrite(#name, &DynoParams::name)
  VDSIM_FIELD(mass); VDSIM_FIELD(wheel_radius); VDSIM_FIELD(wheel_inertia);
  VDSIM_FIELD(roller_inertia); VDSIM_FIELD(front_torque_max); VDSIM_FIELD(front_power_max);
  VDSIM_FIELD(rear_torque_max); VDSIM_FIELD(rear_power_max); VDSIM_FIELD(front_share);
  VDSIM_FIELD(speed_limit); VDSIM_FIELD(limiter_taper); VDSIM_FIELD(torque_lag_hz);
  VDSIM_FIELD(torque_lag_zeta); VDSIM_FIELD(brake_torque_max); VDSIM_FIELD(road_load_a);
  VDSIM_FIELD(road_load_b); VDSIM_FIELD(road_load_c); VDSIM_FIELD(grade);
  VDSIM_FIELD(gravity); VDSIM_FIELD(max_substep);
  VDSIM_FIELD(speed_update);
#undef VDSIM_FIELD

  py::class_<DynoBenchCore>(m, "DynoBenchCore")
      .def(py::init([](const DynoParams& p) { return DynoBenchCore{p, {}}; }), py::arg("params"))
      .def("step", &DynoBenchCore::step, py::arg("throttle"), py::arg("brake"), py::arg("dt"))
      .def("reset", [](DynoBenchCore& b, double v) { b.s = DynoState{}; b.s.v = v; },
           py::arg("v") = 0.0)
      .def_property_readonly("v", [](const DynoBenchCore& b) { return b.s.v; })
      .def_property_readonly("accel", [](const DynoBenchCore& b) { return b.s.accel; })
      .def_property_readonly("axle_torque", [](const DynoBenchCore& b) {
        return py::make_tuple(b.s.torque[0], b.s.torque[1]);
      })
      .def_readonly("params", &DynoBenchCore::p)
      .def_static("substeps", &dyno_substeps, py::arg("dt"), py::arg("max_substep"))
      .def_static("demand", [](const DynoParams& p, double throttle, double v) {
        const auto d = dyno_demand(p, throttle, v);
        return py::make_tuple(d[0], d[1]);
      }, py::arg("params"), py::arg("throttle"), py::arg("v"));

  py::enum_<DriverMode>(m, "DriverMode")
      .value("speed", DriverMode::Speed)
      .value("accel", DriverMode::Accel);

  py::class_<RobotDriverParams> rp(m, "RobotDriverParams");
  rp.def(py::init<>());
#define VDSIM_FIELD(name) rp.def_readwrite(#name, &RobotDriverParams::name)
  VDSIM_FIELD(mode); VDSIM_FIELD(kp); VDSIM_FIELD(ki); VDSIM_FIELD(kp_accel);
  VDSIM_FIELD(ki_accel); VDSIM_FIELD(accel_filter_s); VDSIM_FIELD(max_throttle);
  VDSIM_FIELD(max_brake); VDSIM_FIELD(max_accel); VDSIM_FIELD(max_decel);
  VDSIM_FIELD(standstill_ref); VDSIM_FIELD(standstill_brake); VDSIM_FIELD(ramp_band);
  VDSIM_FIELD(openpilot_hold); VDSIM_FIELD(stop_speed); VDSIM_FIELD(stop_accel);
#undef VDSIM_FIELD

  py::class_<RobotDriver>(m, "RobotDriverCore")
      .def(py::init<const RobotDriverParams&>(), py::arg("params"))
      .def("reset", &RobotDriver::reset)
      .def("step", [](RobotDriver& d, double v_ref, double v, double dt, double a_ref,
                      bool has_a_ref, int64_t delay_steps) {
        const Pedal p = d.step(v_ref, v, dt, a_ref, has_a_ref, delay_steps);
        return py::make_tuple(p.throttle, p.brake);
      }, py::arg("v_ref"), py::arg("v"), py::arg("dt"), py::arg("a_ref"),
         py::arg("has_a_ref"), py::arg("delay_steps"))
      .def("copy", [](const RobotDriver& d) { return RobotDriver(d); })
      .def_property_readonly("pedal", &RobotDriver::pedal)
      .def_property_readonly("integral", &RobotDriver::integral)
      .def_property_readonly("filtered_accel", &RobotDriver::filtered_accel)
      .def_property_readonly("ramp", &RobotDriver::ramp)
      .def_property_readonly("line_size", &RobotDriver::line_size)
      .def_property_readonly("params", &RobotDriver::params);

  py::class_<PedalActuatorParams>(m, "PedalActuatorParams")
      .def(py::init<>())
      .def_readwrite("enabled", &PedalActuatorParams::enabled)
      .def_readwrite("time_constant", &PedalActuatorParams::time_constant)
      .def_readwrite("rate_limit", &PedalActuatorParams::rate_limit);

  py::class_<DynoSimConfig>(m, "DynoSimConfig")
      .def(py::init<>())
      .def_readwrite("substep_dt", &DynoSimConfig::substep_dt)
      .def_readwrite("driver_on", &DynoSimConfig::driver_on)
      .def_readwrite("driver", &DynoSimConfig::driver)
      .def_readwrite("delay_steps", &DynoSimConfig::delay_steps)
      .def_readwrite("actuator", &DynoSimConfig::actuator)
      .def_readwrite("accel_filter_s", &DynoSimConfig::accel_filter_s);

  py::enum_<CycleAction>(m, "CycleAction")
      .value("speed", CycleAction::Speed)
      .value("accel", CycleAction::Accel)
      .value("pedal", CycleAction::Pedal);

  py::class_<DriveCycleParams>(m, "DriveCycleParams")
      .def(py::init<>())
      .def_readwrite("ticks_per_period", &DriveCycleParams::ticks_per_period)
      .def_readwrite("action", &DriveCycleParams::action)
      .def_readwrite("ref_speed_max", &DriveCycleParams::ref_speed_max)
      .def_readwrite("ref_accel_max", &DriveCycleParams::ref_accel_max)
      .def_readwrite("ref_decel_max", &DriveCycleParams::ref_decel_max)
      .def_readwrite("w_tracking", &DriveCycleParams::w_tracking)
      .def_readwrite("w_pedal_jerk", &DriveCycleParams::w_pedal_jerk)
      .def_readwrite("w_energy", &DriveCycleParams::w_energy)
      .def_readwrite("observe_driver_delay", &DriveCycleParams::observe_driver_delay);
  m.attr("CYCLE_PREVIEW_S") = py::cast(std::vector<double>(kCyclePreviewS.begin(),
                                                          kCyclePreviewS.end()));

  py::class_<DynoSession>(m, "DynoSession")  // the dyno env core's plant (mode C ticks it)
      .def_property_readonly("tick", &DynoSession::tick)
      .def_property_readonly("time", &DynoSession::time)
      .def_property("trace_decimation", &DynoSession::trace_decimation,
                    [](DynoSession& s, int64_t d) {
                      if (d < 0) throw std::invalid_argument("trace decimation must be >= 0");
                      s.set_trace_decimation(d);
                    })
      .def("record_trace_row", &DynoSession::record_trace_row)
      .def("take_trace", [](DynoSession& s) {
        std::vector<double> v = s.take_trace();
        const py::ssize_t w = DynoSession::kTraceRowSize;
        py::array_t<double> out({static_cast<py::ssize_t>(v.size()) / w, w});
        std::copy(v.begin(), v.end(), out.mutable_data());
        return out;
      });
  m.attr("DYNO_TRACE_ROW_SIZE") = DynoSession::kTraceRowSize;

  using DArrayIn = py::array_t<double, py::array::c_style | py::array::forcecast>;
  using IArrayIn = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
  py::class_<CycleSpeeds>(m, "CycleSpeeds",
                          "A cycle's speed, speed-trace tolerance band (lower, upper) [m/s] "
                          "and phase index (-1: none) per control period, held once for "
                          "every dyno core that drives it")
      .def(py::init([](DArrayIn speed, DArrayIn lower, DArrayIn upper, IArrayIn phase) {
             const py::ssize_t n = speed.size();
             if (speed.ndim() != 1 || n < 1)
               throw std::invalid_argument("cycle speed: 1-d, one value per control period");
             if (lower.size() != n || upper.size() != n || phase.size() != n)
               throw std::invalid_argument("cycle: speed, lower, upper and phase need one "
                                           "value per control period each");
             auto d = std::make_shared<DriveCycleTask::CycleData>();
             d->speed.assign(speed.data(), speed.data() + n);
             d->lower.assign(lower.data(), lower.data() + n);
             d->upper.assign(upper.data(), upper.data() + n);
             d->phase.resize(static_cast<size_t>(n));
             for (py::ssize_t i = 0; i < n; ++i) {
               const int64_t p = phase.data()[i];
               if (p < -1 || p >= DriveCycleTask::kMaxPhases)
                 throw std::invalid_argument(
                     "cycle phase index " + std::to_string(p) + " outside [-1, " +
                     std::to_string(DriveCycleTask::kMaxPhases - 1) + "]");
               d->phase[static_cast<size_t>(i)] = static_cast<int8_t>(p);
             }
             return CycleSpeeds{std::move(d)};
           }), py::arg("speed"), py::arg("lower"), py::arg("upper"), py::arg("phase"))
      .def("__len__", [](const CycleSpeeds& c) { return c.data->speed.size(); });
  m.attr("DYNO_MAX_PHASES") = DriveCycleTask::kMaxPhases;
  vdsim_py::bind_env_core<DriveCycleTask>(m, "DynoEnvCore")
      .def(py::init([](const DriveCycleParams& p, const DynoParams& bench,
                       const DynoSimConfig& cfg) {
             if (p.ticks_per_period < 1)
               throw std::invalid_argument("ticks_per_period must be >= 1");
             return new DynoEnvCore(p, bench, cfg);
           }), py::arg("task"), py::arg("bench"), py::arg("config"),
           "The drive-cycle task on the chassis dyno (VDSim-Dyno-v0)")
      .def("set_cycles", [](DynoEnvCore& e, const std::vector<py::tuple>& cycles) {
             // (CycleSpeeds, limit_ticks) per cycle; shared, not copied.
             std::vector<DriveCycleTask::Cycle> cs;
             for (const py::tuple& t : cycles) {
               if (t.size() != 2) throw std::invalid_argument("a cycle is (CycleSpeeds, limit_ticks)");
               cs.push_back({t[0].cast<const CycleSpeeds&>().data, t[1].cast<int64_t>()});
             }
             e.task().set_cycles(std::move(cs));
           }, py::arg("cycles"),
           "The env's cycles, (CycleSpeeds, time limit [substeps]; -1: the env's own) each; "
           "draw_start picks one per episode")
      .def_property_readonly("cycle_index", [](const DynoEnvCore& e) {
        return e.task().cycle_index(); }, "The index of this episode's cycle in set_cycles'")
      .def("set_driver_delay_steps", [](DynoEnvCore& e, std::int64_t n) {
             if (n < 0 || n > kMaxDriverDelaySteps)
               throw std::invalid_argument(
                   "driver delay steps must be in [0, " + std::to_string(kMaxDriverDelaySteps) +
                   "], got " + std::to_string(n));
             e.plant().set_delay_steps(n);
           }, py::arg("steps"),
           "The robot driver's transport delay [driver steps] (a per-episode draw; reset() "
           "after)")
      .def_property_readonly("driver_delay_steps", [](const DynoEnvCore& e) {
        return e.plant().config().delay_steps; })
      .def("reference", [](const DynoEnvCore& e, double a) { return e.task().reference(a); },
           py::arg("action"))
      .def_property_readonly("periods", [](const DynoEnvCore& e) { return e.task().periods(); })
      .def_property_readonly("speed", [](const DynoEnvCore& e) { return e.plant().speed(); })
      .def_property_readonly("filtered_accel", [](const DynoEnvCore& e) {
        return e.plant().filtered_accel(); })
      .def_property_readonly("pedal", [](const DynoEnvCore& e) { return e.plant().pedal(); })
      .def_property_readonly("driver_pedal", [](const DynoEnvCore& e) {
        return e.plant().driver().pedal(); })
      .def_property_readonly("axle_torque", [](const DynoEnvCore& e) {
        const auto& s = e.plant().state();
        return py::make_tuple(s.torque[0], s.torque[1]); })
      .def_property_readonly("session", [](DynoEnvCore& e) -> DynoSession& {
        return e.plant(); }, py::return_value_policy::reference_internal)
      .def_property_readonly("energy_j", [](const DynoEnvCore& e) {
        return e.plant().energy_pos(); })
      .def_property_readonly("distance", [](const DynoEnvCore& e) {
        return e.plant().distance(); });
}
