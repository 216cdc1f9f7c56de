// One template binds the generic part of every env core (EnvCore<Task>): reset, step
// (GIL released, interruptible, writing into caller-owned rows sized by the spec),
// latency, timing counters, the spec. A new task is one call of bind_env_core<Task> plus
// its own methods (course, cones, ...) on the returned class.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "interruptible.hpp"
#include "np_bitgen.hpp"
#include "vdsim/archive.hpp"
#include "vdsim/env_core.hpp"

namespace vdsim_py {

namespace py = pybind11;

using FRow = py::array_t<float, py::array::c_style>;
using DRow = py::array_t<double, py::array::c_style>;

template <typename A>
auto* row(A& a, std::int64_t n, const char* what) {
  if (a.size() < n) throw std::invalid_argument(std::string(what) + " buffer too small");
  return a.mutable_data();
}

inline py::tuple names(const std::vector<std::string>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::str(v[i]);
  return t;
}

// A spec's flag bits by name, and its default reward weights by term name.
inline py::dict flags(const vdsim::EnvSpec& s) {
  py::dict d;
  for (const auto& [name, bit] : s.flags) d[py::str(name)] = bit;
  return d;
}
inline py::dict default_weights(const vdsim::EnvSpec& s) {
  py::dict d;
  for (size_t i = 0; i < s.term_names.size(); ++i)
    d[py::str(s.term_names[i])] = s.default_weights.at(i);
  return d;
}

// The build that writes or reads a pickled core (its git sha and dirty flag, from
// vdsim_gym._build_info), for the message of a blob another build wrote.
inline std::string build_id() {
  try {
    const py::module_ info = py::module_::import("vdsim_gym._build_info");
    std::string id = py::str(info.attr("GIT_SHA"));
    const int dirty = info.attr("GIT_DIRTY").cast<int>();
    if (dirty == 1) id += " (dirty)";
    return id;
  } catch (const py::error_already_set&) {
    return "unknown";
  }
}

template <class Task>
py::class_<vdsim::EnvCore<Task>, vdsim::EnvCoreBase> bind_env_core(py::module_& m,
                                                                   const char* name) {
  using Core = vdsim::EnvCore<Task>;
  constexpr int N = Core::kActions;
  static_assert(N == 1 || N == 2, "add the action arity to bind_env_core");
  auto step = [](Core& e, const double* a, FRow& obs, DRow& terms, DRow& info, double ext) {
    const vdsim::EnvSpec& s = e.spec();
    float* o = row(obs, s.obs_size(), "obs");
    double* t = row(terms, s.term_size(), "terms");
    double* i = row(info, s.info_size(), "info");
    return run_interruptible([&] { return e.step(a, o, t, i, ext); });
  };
  auto checked = [](const Core& e, double ext) {
    if (std::isnan(ext)) {
      if (e.measured_latency())
        throw std::invalid_argument("measured latency: pass measured_delay (the timed compute [s]) to step");
    } else if (!(ext >= 0.0) || !std::isfinite(ext)) {
      throw std::invalid_argument("measured_delay must be a finite delay >= 0 s");
    }
  };
  py::class_<Core, vdsim::EnvCoreBase> cls(m, name);
  cls.def_static("default_spec", &Core::default_spec,
                 "The spec of this env core with the task's default parameters and no action "
                 "history: names, default reward weights, flag bits (what the Python env "
                 "module reads at import)")
      .def("obs_scale", [](const Core& e) {
             py::array_t<double> out(e.spec().obs_size());
             e.obs_scale(out.mutable_data());
             return out;
           }, "Physical value of each observation column = obs * scale: the task's "
              "scales, then 1 for the action history's columns");
  if constexpr (N == 2) {
    cls.def("step", [step, checked](Core& e, double a0, double a1, FRow obs, DRow terms,
                                    DRow info, double measured_delay) {
          checked(e, measured_delay);
          const double a[2] = {a0, a1};
          return step(e, a, obs, terms, info, measured_delay);
        }, py::arg("a_steer"), py::arg("a_long"), py::arg("obs").noconvert(),
        py::arg("terms").noconvert(), py::arg("info").noconvert(),
        py::arg("measured_delay") = std::nan(""),
        "One env step (GIL released); measured_delay [s] for LatencyKind.measured");
  } else {
    cls.def("step", [step, checked](Core& e, double a0, FRow obs, DRow terms, DRow info,
                                    double measured_delay) {
          checked(e, measured_delay);
          const double a[1] = {a0};
          return step(e, a, obs, terms, info, measured_delay);
        }, py::arg("action"), py::arg("obs").noconvert(), py::arg("terms").noconvert(),
        py::arg("info").noconvert(), py::arg("measured_delay") = std::nan(""),
        "One env step (GIL released); measured_delay [s] for LatencyKind.measured");
  }
  if constexpr (vdsim::detail::has_draw_start<Task>::value) {
    cls.def("draw_start", [](Core& e, py::handle bit_generator) {
          const auto st = e.draw_start(np_bitgen(bit_generator));
          py::tuple t(st.size());
          for (size_t i = 0; i < st.size(); ++i) t[i] = st[i];
          return t;
        }, py::arg("bit_generator"),
        "This episode's start (reset()'s state), drawn from a numpy BitGenerator (the env's "
        "np_random.bit_generator), with what the task sets with it");
  }
  cls.def("reset", [](Core& e, const typename Task::ResetState& state, FRow obs, DRow info,
                      uint64_t latency_seed) {
        const vdsim::EnvSpec& s = e.spec();
        e.reset(state, row(obs, s.obs_size(), "obs"), row(info, s.info_size(), "info"),
                latency_seed);
      }, py::arg("state"), py::arg("obs").noconvert(), py::arg("info").noconvert(),
      py::arg("latency_seed") = 0,
      "Place the plant; with latency, restart the timeline and reseed the delays")
      .def_property_readonly("draws_start", [](const Core& e) { return e.draws_start(); },
                             "Whether draw_start() draws the task's start in C++")
      .def("advance_physics", [](Core& e, py::array_t<double, py::array::c_style |
                                                          py::array::forcecast> action) {
        if (action.size() != N) throw std::invalid_argument("wrong action size");
        run_interruptible([&] { e.advance_physics(action.data()); });
      }, py::arg("action"), "Benchmark reference: one control period of physics only")
      .def("peek", [](Core& e, FRow obs, DRow info) {
        const vdsim::EnvSpec& s = e.spec();
        return e.peek(row(obs, s.obs_size(), "obs"), row(info, s.info_size(), "info"));
      }, py::arg("obs").noconvert(), py::arg("info").noconvert(),
      "Mode C: the observation and info of the plant now (no advance, no scoring); flags")
      .def("latch", [](Core& e, py::array_t<double, py::array::c_style |
                                               py::array::forcecast> action) {
        if (action.size() != N) throw std::invalid_argument("wrong action size");
        e.latch(action.data());
      }, py::arg("action"), "Mode C: the action's command takes effect now")
      .def("command_for", [](const Core& e, py::array_t<double, py::array::c_style |
                                                         py::array::forcecast> action) {
        if (action.size() != N) throw std::invalid_argument("wrong action size");
        const vdsim::Command c = e.command_for(action.data());
        return py::make_tuple(c.steer, c.longitudinal);
      }, py::arg("action"), "The plant command (steer, longitudinal) of an action now")
      .def("set_action_history", [](Core& e, std::int64_t k) {
             if (k < 0) throw std::invalid_argument("action_history must be >= 0");
             e.set_action_history(k);
           }, py::arg("k"),
           "Append the last k actions to the observation (changes obs_names; reset after)")
      .def_property_readonly("action_history", &Core::action_history)
      .def("set_randomization", [](Core& e, const vdsim::RandomizationSpec& spec) {
             const size_t n = spec.keys.size();
             if (spec.lo.size() != n || spec.hi.size() != n)
               throw std::invalid_argument("randomization: one lo and one hi per key");
             for (size_t k = 0; k < n; ++k)
               if (spec.keys[k] < 0 || spec.keys[k] >= vdsim::kRandKeys ||
                   !(spec.lo[k] <= spec.hi[k]))
                 throw std::invalid_argument("randomization: bad key or range");
             e.set_randomization(spec);
           }, py::arg("spec"),
           "Draw and apply these ranges every episode (randomize_episode, reset_episode)")
      .def_property_readonly("randomizes", &Core::randomizes)
      .def("randomize_episode", [](Core& e, py::handle bit_generator) {
             if (!e.randomizes()) throw std::logic_error("this core has no randomization set");
             e.randomize_episode(np_bitgen(bit_generator));
           }, py::arg("bit_generator"),
           "This episode's draws from a numpy BitGenerator, applied (reset after)")
      .def_property_readonly("episode_draws", [](const Core& e) {
             py::array_t<double> out(vdsim::kRandKeys);
             std::copy(std::begin(e.episode_draws().value), std::end(e.episode_draws().value),
                       out.mutable_data());
             return out;
           }, "The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)")
      .def("set_vehicle", [](Core& e, const vdsim::VehicleParams& v) {
             if (!e.set_vehicle(v))
               throw std::invalid_argument("this env core's plant has no vehicle parameters");
           }, py::arg("vehicle"),
           "Replace the plant's vehicle parameters (and the task's values derived from "
           "them, e.g. the footprint); reset() after")
      .def("set_channel_delays", [](Core& e, std::int64_t steer, std::int64_t longitudinal) {
             if (steer < 0 || longitudinal < 0)
               throw std::invalid_argument("channel dead ticks must be >= 0");
             if (!e.set_channel_delays(steer, longitudinal))
               throw std::invalid_argument("this env core's plant has no actuation channels");
           }, py::arg("steer_ticks"), py::arg("longitudinal_ticks"),
           "Replace the plant's per-channel actuation dead times [ticks]; reset() after")
      .def("set_actuator", [](Core& e, const vdsim::ActuatorParams& a, std::int64_t dead_ticks) {
             if (dead_ticks < 0) throw std::invalid_argument("dead_ticks must be >= 0");
             if (!e.set_actuator(a, dead_ticks))
               throw std::invalid_argument("this env core's plant has no steering actuator");
           }, py::arg("actuator"), py::arg("dead_ticks"),
           "Replace the plant's steering actuator chain; reset() after")
      .def("set_latency", &Core::set_latency, py::arg("spec"), py::arg("policy"),
           "Mode-B latency (takes effect at the next reset)")
      .def("clear_latency", &Core::clear_latency)
      .def("set_network", &Core::set_network, py::arg("spec"), py::arg("policy"),
           "A network between controller and plant: losses, bursts, delay (next reset)")
      .def("clear_network", &Core::clear_network)
      .def("set_obs_delay", &Core::set_obs_delay, py::arg("age"),
           "A sensor delay: each step's observation is the plant's at its capture tick, "
           "the age drawn from `age` per grid sample (next reset)")
      .def("clear_obs_delay", &Core::clear_obs_delay)
      .def_property_readonly("has_obs_delay", &Core::has_obs_delay)
      .def("after_tick", &Core::after_tick,
           "Mode C: the sensor's captures due at the plant's tick now")
      .def("sensor_read", [](Core& e, FRow obs) {
             return e.sensor_read(row(obs, e.spec().obs_size(), "obs"));
           }, py::arg("obs"),
           "Mode C: the newest grid sample's captured observation into obs's task "
           "columns; its capture tick")
      .def_property_readonly("has_network", &Core::has_network)
      .def_property_readonly("n_lost", &Core::n_lost)
      .def_property_readonly("n_discarded", &Core::n_discarded)
      .def_property_readonly("has_latency", &Core::has_latency)
      .def_property_readonly("n_overrun", [](const Core& e) { return e.timeline().n_overrun(); })
      .def_property_readonly("n_skipped", [](const Core& e) { return e.timeline().n_skipped(); })
      .def_property_readonly("next_k", [](const Core& e) { return e.timeline().next_k(); })
      .def_property_readonly("next_sample", [](const Core& e) {
             // With latency: the upcoming sample's grid index, the tick of its controller
             // call and the exact start of its computation [s] (what an evaluation loop
             // needs before it calls the controller). Without: the plant's grid point now.
             if (!e.has_latency() && !e.has_network()) {
               const std::int64_t k = e.plant().tick() / e.task().ticks_per_period();
               return py::make_tuple(k, e.plant().tick(), e.plant().time());
             }
             const auto& tl = e.timeline();
             const std::int64_t k = tl.next_k();
             return py::make_tuple(k, tl.call_tick(k), tl.start_time(k));
           }, "(k, call_tick, t_start [s]) of the next sample")
      .def("command_in_force", [](const Core& e, std::optional<std::int64_t> tick) {
             // The plant's schedule is the one record of which command acts when.
             const auto& sched = e.plant().commands();
             const auto& c = tick ? sched.in_force_during(*tick) : sched.in_force();
             return py::make_tuple(c.sample_tick, c.apply_tick, c.command.steer,
                                   c.command.longitudinal);
           }, py::arg("tick") = py::none(),
           "(sample_tick, apply_tick, steer, longitudinal) of the command in force now, or "
           "during substep `tick` (at or after now: a pending one due by then); sample_tick "
           "-1 is the reset command")
      .def_property_readonly("pending_commands", [](const Core& e) {
             py::list out;
             for (const auto& c : e.plant().commands().entries())
               out.append(py::make_tuple(c.sample_tick, c.apply_tick, c.command.steer,
                                         c.command.longitudinal));
             return out;
           }, "The scheduled commands not yet applied, by apply tick: (sample_tick, "
              "apply_tick, steer, longitudinal)")
      .def_property_readonly("tick", [](const Core& e) { return e.plant().tick(); },
                             "The plant's substep counter")
      .def_property_readonly("control_period", &Core::control_period)
      .def_property_readonly("time", [](const Core& e) { return e.plant().time(); },
                             "The plant's time [s]")
      .def_property_readonly("task_info_size", &Core::task_info_size)
      .def("snapshot", [](const Core& e) { return std::make_unique<Core>(e); },
           "A copy of this core, parameters, configuration and whole state (plant, task, "
           "command schedule, delay lines, sensor ring, network chain, generators, episode "
           "counters): what restore() puts back")
      .def(py::pickle(
               [](const Core& e) {
                 // The whole core (archive.hpp): parameters, configuration and state.
                 return py::bytes(vdsim::blob::save(e, build_id()));
               },
               [](const py::bytes& state) {
                 auto core = Core::blank();
                 vdsim::blob::load(*core, std::string_view(state), build_id());
                 return core;
               }))
      .def("__reduce_ex__", [](py::handle self, int) -> py::tuple {
             // What protocol 2 pickles (copyreg.__newobj__, then __setstate__), for every
             // protocol: copyreg's own reduction for protocols 0 and 1 cannot make a
             // pybind11 object (it aborts).
             const py::object newobj = py::module_::import("copyreg").attr("__newobj__");
             const py::object state = self.attr("__getstate__")();
             return py::make_tuple(newobj, py::make_tuple(py::type::of(self)), state);
           }, py::arg("protocol"))
      .def("restore", [](Core& e, const Core& snapshot) { e.restore(snapshot); },
           py::arg("snapshot"),
           "This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the "
           "same actions then step it bit for bit as they stepped the snapshot's source")
      .def_property("time_limit_ticks", &Core::time_limit_ticks, [](Core& e, std::int64_t t) {
        if (t < 0) throw std::invalid_argument("time_limit_ticks must be >= 0 (0: none)");
        e.set_time_limit_ticks(t);
      }, "Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT")
      .def_property("run_end", &Core::run_end, [](Core& e, std::optional<std::int64_t> t) {
        if (t && *t < 0) throw std::invalid_argument("run_end must be >= 0 (None: none)");
        e.set_run_end(t ? *t : std::numeric_limits<std::int64_t>::max());
      }, "An evaluation's end tick (None: none, the largest int64): no step advances the "
         "plant past it (run_to_end advances it there)")
      .def_property("grid_rows", &Core::grid_rows_on, &Core::set_grid_rows,
                    "An evaluation's grid rows: the plant stops at each grid tick a step "
                    "passes and records its state there (EvalStepper.columns reads them); "
                    "setting it clears the rows")
      .def("run_to_end", [](Core& e) {
             run_interruptible([&] {
               e.run_to_end();
               return 0;
             });
           }, "The plant advanced to run_end without a sample (GIL released)");
  return cls;
}

}  // namespace vdsim_py
