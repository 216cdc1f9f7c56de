// Wall-clock mode C: the real-time runner over a vehicle Session. The runner's thread is
// pure C++; the Python control thread locks its mutex (GIL released while waiting) to
// snapshot the session and latch commands. vdsim_gym.eval.wallclock drives it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "aux_row.hpp"
#include "vdsim/dyno_session.hpp"
#include "vdsim/realtime_runner.hpp"
#include "vdsim/sensor.hpp"
#include "vdsim/session.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

// The sensor delay of mode C on a Plant (ClosedLoopEval's callback form): on the runner's
// thread, after each substep, the session's state, aux row and realized steer at the
// capture ticks due (sensor.hpp's rule); the control thread reads the newest grid
// sample's capture and builds the Plant's observation dict from it.
class SessionSensor final : public TickHook {
 public:
  static constexpr int kRow = kStateSize + vdsim_py::kAuxSize + 1;
  SessionSensor(Session& s, const LatencySpec& age, int64_t period)
      : s_(s), sched_(age, s.config().substep_dt, period, kRow), period_(period) {}
  // A run starts (the session just reset): new ages, and the captures due at its tick.
  void reset(uint64_t seed) {
    sched_.reset(seed);
    reset_row_.resize(kRow);
    write(reset_row_.data());
    after_tick();
  }
  void after_tick() override {
    const int64_t now = s_.tick();
    sched_.plan(now);
    for (size_t i = 0; i < sched_.size() && sched_.tick(i) <= now; ++i) {
      if (sched_.done(i)) continue;
      write(sched_.row(i));
      sched_.mark_done(i);
    }
  }
  // (capture tick, state, aux, realized steer) of the newest grid sample at or before
  // now taken (the latest capture, should that one not be due yet; the reset's before
  // the first).
  py::tuple read() {
    const int64_t best = sched_.newest_done(s_.tick() / period_);
    const size_t b = static_cast<size_t>(best);
    const double* row = best < 0 ? reset_row_.data() : sched_.row(b);
    py::array_t<double> state(kStateSize), aux(vdsim_py::kAuxSize);
    std::copy(row, row + kStateSize, state.mutable_data());
    std::copy(row + kStateSize, row + kStateSize + vdsim_py::kAuxSize, aux.mutable_data());
    const int64_t c = best < 0 ? 0 : sched_.tick(b);
    const double steer = row[kRow - 1];
    if (best >= 0) sched_.release_before(sched_.grid(b));
    return py::make_tuple(c, state, aux, steer);
  }

 private:
  void write(double* row) {
    std::copy(s_.state().begin(), s_.state().end(), row);
    vdsim_py::write_aux(s_.aux(), row + kStateSize);
    row[kRow - 1] = s_.realized_steer();
  }
  std::vector<double> reset_row_;
  Session& s_;
  BasicSensorSchedule<double> sched_;
  int64_t period_;
};

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
  py::class_<SessionSensor, TickHook>(m, "SessionSensor",
                                      "Mode C's sensor delay on a Plant's session")
      .def(py::init<Session&, const LatencySpec&, int64_t>(), py::arg("session"),
           py::arg("age"), py::arg("period_ticks"), py::keep_alive<1, 2>())
      .def("reset", &SessionSensor::reset, py::arg("seed"))
      .def("after_tick", &SessionSensor::after_tick)
      .def("read", &SessionSensor::read);
  bind_runner<Session>(m, "RealTimeRunner");
  bind_runner<DynoSession>(m, "DynoRealTimeRunner");
}
