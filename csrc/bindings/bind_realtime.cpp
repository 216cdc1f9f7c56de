// Wall-clock mode C: the real-time runner over a vehicle Session. The runner's thread is
// pure C++; the Python control thread locks its mutex (GIL released while waiting) to
// snapshot the session and latch commands. vdsim_gym.eval.wallclock drives it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "vdsim/dyno_session.hpp"
#include "vdsim/realtime_runner.hpp"
#include "vdsim/session.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

// One runner class per plant type: the vehicle Session, the chassis dyno's DynoSession.
template <class Plant>
void bind_runner(py::module_& m, const char* name) {
  using Runner = RealTimeRunner<Plant>;
  py::class_<Runner>(m, name)
      .def(py::init<Plant&, double, int64_t>(), py::arg("session"), py::arg("substep_dt"),
           py::arg("n_ticks"), py::keep_alive<1, 2>())
      .def("set_watchdog", [](Runner& r, int64_t ticks, double steer, double lon) {
             r.set_watchdog(ticks, Command{steer, lon});
           }, py::arg("timeout_ticks"), py::arg("steer"), py::arg("longitudinal"))
      .def("set_hook", &Runner::set_hook, py::arg("hook"), py::keep_alive<1, 2>(),
           "Called after every substep on the runner's thread (before start())")
      .def("start", &Runner::start, py::arg("sim_cpu") = -1)
      .def("request_stop", &Runner::request_stop)
      .def("join", &Runner::join, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("finished", &Runner::finished)
      .def("lock", [](Runner& r) {
             py::gil_scoped_release release;
             r.mutex().lock();
           }, "Acquire the session's mutex (the GIL is released while waiting)")
      .def("unlock", [](Runner& r) { r.mutex().unlock(); })
      .def("note_command", &Runner::note_command, "Under the lock: a command was latched")
      .def("wall_now", &Runner::wall_now, "Seconds of steady clock since start")
      .def("sleep_until", &Runner::sleep_until, py::arg("seconds"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("ticks_done", &Runner::ticks_done)
      .def_property_readonly("wall_elapsed", &Runner::wall_elapsed)
      .def_property_readonly("max_lag", &Runner::max_lag)
      .def_property_readonly("failsafe_latches", &Runner::failsafe_latches)
      .def_property_readonly("affinity_applied", &Runner::affinity_applied)
      .def("tick_wall", [](const Runner& r) {
             const auto& v = r.tick_wall();
             py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
             std::copy(v.begin(), v.end(), out.mutable_data());
             return out;
           }, "Wall time [s since start] at which each tick completed (after join)");
}

}  // namespace

void bind_realtime(py::module_& m) {
  bind_runner<Session>(m, "RealTimeRunner");
  bind_runner<DynoSession>(m, "DynoRealTimeRunner");
}
