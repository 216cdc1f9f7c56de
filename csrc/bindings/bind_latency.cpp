// Latency models and the mode-B timeline.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "np_bitgen.hpp"
#include "vdsim/async_timeline.hpp"
#include "vdsim/latency.hpp"
#include "vdsim/randomization.hpp"
#include "vdsim/sensor.hpp"

namespace py = pybind11;
using namespace vdsim;

void bind_latency(py::module_& m) {
  m.def("draw_latency_seed", [](py::handle bit_generator, uint64_t model_seed) {
        return draw_latency_seed(vdsim_py::np_bitgen(bit_generator), model_seed);
      }, py::arg("bit_generator"), py::arg("model_seed"),
      "An episode's latency seed: model_seed ^ integers(2**63) from the bit generator "
      "(the env's latency stream), as the C++ in-batch reset draws it");
  py::class_<NpPcg64, std::unique_ptr<NpPcg64>>(
      m, "Pcg64", "numpy's PCG64 seeded by SeedSequence, in C++ (vdsim/numpy_draws.hpp)")
      .def(py::init([](const std::vector<uint32_t>& entropy) {
             return std::make_unique<NpPcg64>(entropy.data(), entropy.size());
           }), py::arg("entropy"), "From SeedSequence's entropy words (little-endian 32-bit)")
      .def_property_readonly("capsule", [](NpPcg64& g) {
             return py::capsule(static_cast<void*>(g.bitgen()), "BitGenerator");
           }, "The bitgen_t capsule, as a numpy BitGenerator's (valid while this object is)")
      .def_property_readonly("state", [](const NpPcg64& g) { return vdsim_py::pcg64_state(g); },
                             "numpy's PCG64.state of this generator");
  m.def("numpy_draws", [](py::handle bit_generator, const std::string& kind, double a,
                          double b, int64_t count) {
        // The C++ draws (vdsim/numpy_draws.hpp) for tests against numpy's Generator.
        NumpyDraws d(vdsim_py::np_bitgen(bit_generator));
        py::list out;
        for (int64_t i = 0; i < count; ++i) {
          if (kind == "random") out.append(d.random());
          else if (kind == "uniform") out.append(d.uniform(a, b));
          else if (kind == "integers") {
            if (!(a >= 1.0 && a <= 9223372036854775808.0))
              throw std::invalid_argument("integers: n in [1, 2**63]");
            out.append(d.integers(static_cast<uint64_t>(a)));
          } else throw std::invalid_argument("kind: random, uniform or integers");
        }
        return out;
      }, py::arg("bit_generator"), py::arg("kind"), py::arg("a") = 0.0, py::arg("b") = 1.0,
      py::arg("count") = 1, "Test hook: count C++ draws of numpy's random/uniform/integers");
  py::enum_<LatencyKind>(m, "LatencyKind")
      .value("fixed", LatencyKind::Fixed)
      .value("uniform", LatencyKind::Uniform)
      .value("normal", LatencyKind::Normal)
      .value("measured", LatencyKind::Measured)
      .value("empirical", LatencyKind::Empirical);
  py::enum_<OverrunPolicy>(m, "OverrunPolicy")
      .value("skip", OverrunPolicy::Skip)
      .value("queue", OverrunPolicy::Queue);

  py::class_<LatencySpec>(m, "LatencySpec")
      .def(py::init<>())
      .def_readwrite("kind", &LatencySpec::kind)
      .def_readwrite("c", &LatencySpec::c)
      .def_readwrite("lo", &LatencySpec::lo)
      .def_readwrite("hi", &LatencySpec::hi)
      .def_readwrite("mu", &LatencySpec::mu)
      .def_readwrite("sd", &LatencySpec::sd)
      .def_readwrite("seed", &LatencySpec::seed)
      .def_readwrite("samples", &LatencySpec::samples);

  py::class_<NetworkSpec>(m, "NetworkSpec")
      .def(py::init<>())
      .def_readwrite("drop", &NetworkSpec::drop)
      .def_readwrite("burst", &NetworkSpec::burst)
      .def_readwrite("p_gb", &NetworkSpec::p_gb)
      .def_readwrite("p_bg", &NetworkSpec::p_bg)
      .def_readwrite("jitter", &NetworkSpec::jitter)
      .def_readwrite("seed", &NetworkSpec::seed);
  py::class_<NetworkChannel>(m, "NetworkChannel")
      .def(py::init<const NetworkSpec&>(), py::arg("spec"))
      .def("reseed", &NetworkChannel::reseed, py::arg("seed"))
      .def("lost", &NetworkChannel::lost, "Whether the next command is lost (one draw)")
      .def("delay", &NetworkChannel::delay, "The next command's network delay [s]")
      .def("lost_many", [](NetworkChannel& c, int64_t n) {
             py::array_t<bool> out(n);
             auto* p = out.mutable_data();
             for (int64_t i = 0; i < n; ++i) p[i] = c.lost();
             return out;
           }, py::arg("n"), "The next n commands' losses (tests and statistics)");
  py::class_<LatencySampler>(m, "LatencySampler")
      .def(py::init<const LatencySpec&>(), py::arg("spec"))
      .def("reseed", &LatencySampler::reseed, py::arg("seed"))
      .def("draw", &LatencySampler::draw)
      .def("draw_many", [](LatencySampler& s, int64_t n) {
        py::array_t<double> out(n);
        double* p = out.mutable_data();
        for (int64_t i = 0; i < n; ++i) p[i] = s.draw();
        return out;
      }, py::arg("n"));

  py::class_<TickHook>(m, "TickHook",
                       "What the real-time runner calls after every substep (mode C's "
                       "sensor captures): an env core, or a SessionSensor");

  py::class_<SensorSchedule>(m, "SensorSchedule",
                             "The sensor delay's capture ticks (sensor.hpp): what the "
                             "callback form's event loop stops the plant at")
      .def(py::init<const LatencySpec&, double, int64_t>(), py::arg("age"),
           py::arg("substep_dt"), py::arg("period_ticks"))
      .def("reset", &SensorSchedule::reset, py::arg("seed"))
      .def("plan", &SensorSchedule::plan, py::arg("until"),
           "Plans the captures up to tick `until` (drawing their ages in grid order)")
      .def("captures", [](const SensorSchedule& s) {
             py::list out;
             for (size_t i = 0; i < s.size(); ++i)
               out.append(py::make_tuple(s.grid(i), s.tick(i)));
             return out;
           }, "(grid index, capture tick) of the planned captures not yet released")
      .def("release_before", &SensorSchedule::release_before, py::arg("j"));

  py::class_<SampleTiming>(m, "SampleTiming")
      .def_readonly("k", &SampleTiming::k)
      .def_readonly("sample_tick", &SampleTiming::sample_tick)
      .def_readonly("call_tick", &SampleTiming::call_tick)
      .def_readonly("t_start", &SampleTiming::t_start)
      .def_readonly("c", &SampleTiming::c)
      .def_readonly("t_finish", &SampleTiming::t_finish)
      .def_readonly("apply_tick", &SampleTiming::apply_tick)
      .def_readonly("overrun", &SampleTiming::overrun);

  py::class_<AsyncTimeline>(m, "AsyncTimeline")
      .def(py::init<double, int64_t, OverrunPolicy>(), py::arg("substep_dt"),
           py::arg("period_ticks"), py::arg("policy"))
      .def("reset", &AsyncTimeline::reset)
      .def_property_readonly("next_k", &AsyncTimeline::next_k)
      .def("call_tick", &AsyncTimeline::call_tick, py::arg("k"))
      .def("commit", &AsyncTimeline::commit, py::arg("k"), py::arg("c"))
      .def("grid_time", &AsyncTimeline::grid_time, py::arg("k"))
      .def_property_readonly("n_overrun", &AsyncTimeline::n_overrun)
      .def_property_readonly("n_skipped", &AsyncTimeline::n_skipped)
      .def_property_readonly("period_ticks", &AsyncTimeline::period_ticks);
  py::class_<RandomizationSpec>(m, "RandomizationSpec",
                                 "What an env core randomizes per episode (randomization.hpp): "
                                 "the ranges in draw order and the nominal parameters")
      .def(py::init<>())
      .def_readwrite("keys", &RandomizationSpec::keys)
      .def_readwrite("lo", &RandomizationSpec::lo)
      .def_readwrite("hi", &RandomizationSpec::hi)
      .def_readwrite("vehicle", &RandomizationSpec::vehicle)
      .def_readwrite("actuator", &RandomizationSpec::actuator)
      .def_readwrite("actuator_dead_ticks", &RandomizationSpec::actuator_dead_ticks)
      .def_readwrite("steer_dead_ticks", &RandomizationSpec::steer_dead_ticks)
      .def_readwrite("longitudinal_dead_ticks", &RandomizationSpec::longitudinal_dead_ticks)
      .def_readwrite("network", &RandomizationSpec::network)
      .def_readwrite("overrun", &RandomizationSpec::overrun);
}
