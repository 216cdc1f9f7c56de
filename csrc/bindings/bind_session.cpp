// Session: the single-vehicle simulator. Multi-substep loops release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <pybind11/stl.h>

#include "aux_row.hpp"
#include "interruptible.hpp"
#include "vdsim/session.hpp"

namespace py = pybind11;
using namespace vdsim;

using vdsim_py::kAuxSize;
using vdsim_py::write_aux;

void bind_session(py::module_& m) {
  py::class_<SimConfig>(m, "SimConfig")
      .def(py::init<>())
      .def_readwrite("level", &SimConfig::level)
      .def_readwrite("substep_dt", &SimConfig::substep_dt)
      .def_readwrite("integrator", &SimConfig::integrator)
      .def_readwrite("longitudinal", &SimConfig::longitudinal)
      .def_readwrite("actuator", &SimConfig::actuator)
      .def_readwrite("actuator_dead_ticks", &SimConfig::actuator_dead_ticks)
      .def_readwrite("steer_dead_ticks", &SimConfig::steer_dead_ticks)
      .def_readwrite("longitudinal_dead_ticks", &SimConfig::longitudinal_dead_ticks)
      .def_readwrite("low", &SimConfig::low)
      .def_readwrite("step_ticks", &SimConfig::step_ticks)
      .def_readwrite("step_tol", &SimConfig::step_tol);

  py::class_<Command>(m, "Command")
      .def(py::init<double, double>(), py::arg("steer") = 0.0, py::arg("longitudinal") = 0.0)
      .def_readwrite("steer", &Command::steer)
      .def_readwrite("longitudinal", &Command::longitudinal);

  m.attr("STATE_SIZE") = static_cast<int>(kStateSize);
  m.def("default_step_tol", &vdsim::default_step_tol, py::arg("integrator"),
        "The step-size rule's default tolerance [m/s] for an integrator (SimConfig::step_tol "
        "0)");
  m.attr("AUX_SIZE") = kAuxSize;
  m.attr("TRACE_ROW_SIZE") = Session::kTraceRowSize;

  py::class_<Session>(m, "Session")
      .def(py::init<const VehicleParams&, const SimConfig&>(), py::arg("vehicle"),
           py::arg("config"))
      .def("set_vehicle", &Session::set_vehicle, py::arg("vehicle"),
           "Replace the vehicle parameters and all that the session derives from them "
           "(axle tires, tire shape, coupling, slip lag), as the constructor does; reset() "
           "after. A refused vehicle (ValueError) leaves the session unchanged.")
      .def("set_actuator", [](Session& s, const ActuatorParams& a, int64_t dead_ticks) {
             if (dead_ticks < 0) throw std::invalid_argument("dead_ticks must be >= 0");
             s.set_actuator(a, dead_ticks);
           }, py::arg("actuator"), py::arg("dead_ticks"),
           "Replace the steering actuator chain (its dead time in ticks); reset() after")
      .def_property_readonly("vehicle", [](const Session& s) { return s.vehicle(); },
                             "A copy of the vehicle parameters in use")
      .def_property_readonly("actuator", [](const Session& s) { return s.config().actuator; },
                             "A copy of the steering actuator parameters in use")
      .def("reset", &Session::reset, py::arg("x"), py::arg("y"), py::arg("psi"),
           py::arg("vx"), py::arg("vy"), py::arg("r"), py::arg("initial") = Command{})
      .def("command_now", [](Session& s, double steer, double lon) { s.command_now({steer, lon}); },
           py::arg("steer"), py::arg("longitudinal"))
      .def("schedule",
           [](Session& s, int64_t tick, double steer, double lon, int64_t sample_tick) {
             s.schedule(tick, {steer, lon}, sample_tick);
           },
           py::arg("apply_tick"), py::arg("steer"), py::arg("longitudinal"),
           py::arg("sample_tick") = -1, "A command applying at apply_tick, sampled at sample_tick")
      .def("command_in_force", [](const Session& s, std::optional<int64_t> tick) {
             const auto& sched = s.commands();
             const auto& c = tick ? sched.in_force_during(*tick) : sched.in_force();
             return py::make_tuple(c.sample_tick, c.apply_tick, c.command.steer,
                                   c.command.longitudinal);
           }, py::arg("tick") = py::none(),
           "(sample_tick, apply_tick, steer, longitudinal) of the command in force now, or "
           "during substep `tick` (at or after now); sample_tick -1: not a sample")
      .def("drop_pending", &Session::drop_pending)
      .def("discard_after", &Session::discard_after, py::arg("tick"),
           "Drops the pending commands due after `tick` (a network's overtaken packets); "
           "how many")
      .def_property_readonly("pending", &Session::pending)
      .def("advance", [](Session& s, int64_t n) {
             vdsim_py::run_interruptible([&] { s.advance(n); });
           }, py::arg("n"), "n substeps (GIL released; Ctrl-C stops a long advance)")
      .def_property_readonly("tick", &Session::tick)
      .def_property_readonly("steps_taken", &Session::steps_taken,
                             "integration steps taken since the last reset")
      .def_property_readonly("steps_rejected", &Session::steps_rejected,
                             "integration steps rejected and retaken since the last reset")
      .def_property_readonly("time", &Session::time)
      .def_property_readonly("realized_steer", &Session::realized_steer)
      .def_property_readonly("command",
                             [](const Session& s) {
                               return py::make_tuple(s.command().steer, s.command().longitudinal);
                             })
      .def("get_state",
           [](const Session& s, py::array_t<double, py::array::c_style> out) {
             if (out.size() < kStateSize) throw std::invalid_argument("state buffer too small");
             std::copy(s.state().begin(), s.state().end(), out.mutable_data());
           }, py::arg("out"))
      .def("set_state",
           [](Session& s, py::array_t<double, py::array::c_style | py::array::forcecast> in) {
             if (in.size() != kStateSize) throw std::invalid_argument("state must have STATE_SIZE values");
             State st;
             std::copy(in.data(), in.data() + kStateSize, st.begin());
             s.set_state(st);
           }, py::arg("state"))
      .def_property("trace_decimation", &Session::trace_decimation,
                    [](Session& s, int64_t d) {
                      if (d < 0) throw std::invalid_argument("trace decimation must be >= 0");
                      s.set_trace_decimation(d);
                    }, "Record a trace row every d substeps (0: off); reset() and take_trace() clear the rows")
      .def("record_trace_row", &Session::record_trace_row,
           "The row of the current tick (a run's closing row), unless already recorded")
      .def("take_trace", [](Session& s) {
             std::vector<double> v = s.take_trace();
             const py::ssize_t n = static_cast<py::ssize_t>(v.size()) / Session::kTraceRowSize;
             py::array_t<double> out({n, static_cast<py::ssize_t>(Session::kTraceRowSize)});
             std::copy(v.begin(), v.end(), out.mutable_data());
             return out;
           }, "The rows recorded so far, (n, TRACE_ROW_SIZE); moved out")
      .def("get_aux",
           [](Session& s, py::array_t<double, py::array::c_style> out) {
             if (out.size() < kAuxSize) throw std::invalid_argument("aux buffer too small");
             write_aux(s.aux(), out.mutable_data());
           }, py::arg("out"));
}
