// VectorEnvCore: one GIL-released call steps N env cores into caller-owned batch
// buffers. Shapes and dtypes are checked once per call (noconvert: a wrong dtype is an
// error, never a temporary copy that would swallow the writes); the cores are kept alive
// by a tuple held next to the session.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "interruptible.hpp"
#include "vdsim/vector_env_core.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

struct PyVectorEnvCore {
  py::tuple cores;  // keeps the env cores alive as long as the session
  std::unique_ptr<VectorEnvCore> impl;
};

std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

template <typename T>
T* buffer(py::array& a, py::ssize_t n, py::ssize_t cols, const char* what, const char* dtype) {
  const bool shape_ok = cols == 0 ? (a.ndim() == 1 && a.shape(0) == n)
                                  : (a.ndim() == 2 && a.shape(0) == n && a.shape(1) == cols);
  if (!shape_ok) {
    const std::string want = cols == 0 ? "(" + std::to_string(n) + ",)"
                                       : "(" + std::to_string(n) + ", " + std::to_string(cols) + ")";
    throw std::invalid_argument(std::string(what) + " must have shape " + want + ", got " +
                                shape_str(a));
  }
  if (!py::isinstance<py::array_t<T>>(a) || !(a.flags() & py::array::c_style))
    throw std::invalid_argument(std::string(what) + " must be a C-contiguous " + dtype +
                                " array");
  if (!a.writeable()) throw std::invalid_argument(std::string(what) + " must be writeable");
  return static_cast<T*>(a.mutable_data());
}

}  // namespace

void bind_vector(py::module_& m) {
  py::class_<PyVectorEnvCore>(m, "VectorEnvCore")
      .def(py::init([](py::sequence cores, int threads) {
             if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
             auto out = std::make_unique<PyVectorEnvCore>();
             out->cores = py::tuple(cores);
             std::vector<EnvCoreBase*> ptrs;
             ptrs.reserve(out->cores.size());
             for (auto c : out->cores) ptrs.push_back(c.cast<EnvCoreBase*>());
             out->impl = std::make_unique<VectorEnvCore>(std::move(ptrs), threads);
             return out;
           }), py::arg("cores"), py::arg("threads") = 0,
           "N env cores (one spec) stepped together; threads=0: all cores, 1: inline")
      .def("step", [](PyVectorEnvCore& v, py::array actions, py::array step_mask, py::array obs,
                      py::array rewards, py::array flags, py::array terms, py::array info) {
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             const py::ssize_t n = v.impl->size();
             const EnvSpec& spec = v.impl->spec();
             VectorStepBuffers b;
             b.actions_f32 = py::isinstance<py::array_t<float>>(actions);
             if (b.actions_f32) {
               b.actions = buffer<float>(actions, n, spec.action_size(), "actions",
                                         "float32 or float64");
             } else {
               b.actions = buffer<double>(actions, n, spec.action_size(), "actions",
                                          "float32 or float64");
             }
             b.step_mask = buffer<uint8_t>(step_mask, n, 0, "step_mask", "uint8");
             b.obs = buffer<float>(obs, n, spec.obs_size(), "obs", "float32");
             b.rewards = buffer<double>(rewards, n, 0, "rewards", "float64");
             b.flags = buffer<int32_t>(flags, n, 0, "flags", "int32");
             b.terms = buffer<double>(terms, n, spec.term_size(), "terms", "float64");
             b.info = buffer<double>(info, n, spec.info_size(), "info", "float64");
             for (py::ssize_t i = 0; i < n; ++i) {
               // Checked per call: Python may reconfigure a core's latency between steps.
               if (b.step_mask[i] && v.impl->core(i).measured_latency())
                 throw std::invalid_argument(
                     "env " + std::to_string(i) +
                     " has LatencyModel.measured(): the vector session draws delays from "
                     "the model and cannot take measured ones");
             }
             vdsim_py::run_interruptible([&] { v.impl->step(b); });
           }, py::arg("actions"), py::arg("step_mask"), py::arg("obs"), py::arg("rewards"),
           py::arg("flags"), py::arg("terms"), py::arg("info"),
           "One env step of every env whose step_mask is nonzero (GIL released)")
      .def("advance_physics", [](PyVectorEnvCore& v, py::array_t<double> actions) {
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             VectorStepBuffers b;
             b.actions = buffer<double>(actions, v.impl->size(), v.impl->spec().action_size(),
                                        "actions", "float64");
             b.physics_only = true;
             vdsim_py::run_interruptible([&] { v.impl->step(b); });
           }, py::arg("actions"),
           "Benchmark reference: every env's physics for one control period (command now, "
           "advance), without latency, task, observation or reward (GIL released)")
      .def("close", [](PyVectorEnvCore& v) {
             py::gil_scoped_release release;
             v.impl->close();
           }, "Stop and join the workers (idempotent)")
      .def_property_readonly("closed", [](const PyVectorEnvCore& v) { return v.impl->closed(); })
      .def_property_readonly("num_envs", [](const PyVectorEnvCore& v) { return v.impl->size(); })
      .def_property_readonly("threads", [](const PyVectorEnvCore& v) { return v.impl->threads(); })
      .def("__len__", [](const PyVectorEnvCore& v) { return v.impl->size(); });
}
