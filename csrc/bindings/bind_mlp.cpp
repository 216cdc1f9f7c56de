// vdsim::MlpPolicy (vdsim/mlp.hpp) for vdsim_gym.policies.compiled: a trained actor's
// decision in one call on one observation or a batch.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "vdsim/mlp.hpp"

namespace py = pybind11;

void bind_mlp(py::module_& m) {
  py::class_<vdsim::MlpPolicy>(m, "MlpPolicyKernel",
                               "A trained actor as doubles (vdsim/mlp.hpp): normalization, "
                               "dense layers, the action clipped or tanh-squashed")
      .def(py::init([](std::vector<std::vector<double>> weights,
                       std::vector<std::vector<double>> biases, std::vector<int64_t> widths,
                       const std::string& activation, std::vector<double> mean,
                       std::vector<double> inv_std, double clip_obs, bool squash) {
             vdsim::MlpPolicy::Activation act;
             if (activation == "tanh") act = vdsim::MlpPolicy::Activation::kTanh;
             else if (activation == "relu") act = vdsim::MlpPolicy::Activation::kRelu;
             else throw std::invalid_argument("activation: tanh or relu");
             return vdsim::MlpPolicy(std::move(weights), std::move(biases), std::move(widths),
                                     act, std::move(mean), std::move(inv_std), clip_obs,
                                     squash);
           }),
           py::arg("weights"), py::arg("biases"), py::arg("widths"), py::arg("activation"),
           py::arg("mean"), py::arg("inv_std"), py::arg("clip_obs"), py::arg("squash"))
      .def("set_path_features", &vdsim::MlpPolicy::set_path_features, py::arg("model"),
           py::arg("cols"), py::arg("scale"), py::arg("max_steer"), py::arg("delay"),
           py::arg("max_step"), py::arg("n_obs"),
           "Append the single-track prediction's e_y, e_psi, vy, r (PredictedStateFeatures "
           "of a path env) to each row before the layers")
      .def("set_gap_features", &vdsim::MlpPolicy::set_gap_features, py::arg("cols"),
           py::arg("scale"), py::arg("a_max"), py::arg("d_max"), py::arg("delay"),
           py::arg("n_obs"),
           "Append the ACC gap law's ego_speed, gap, rel_speed (PredictedStateFeatures of "
           "the ACC) to each row before the layers")
      .def_property_readonly("n_inputs", &vdsim::MlpPolicy::n_inputs)
      .def_property_readonly("n_actions", &vdsim::MlpPolicy::n_actions)
      .def(
          "__call__",
          [](vdsim::MlpPolicy& p, const py::array& obs) -> py::array_t<float> {
            if (obs.ndim() != 1 && obs.ndim() != 2)
              throw std::invalid_argument("obs: (n_obs,) or (N, n_obs)");
            const bool single = obs.ndim() == 1;
            const int64_t n = single ? 1 : obs.shape(0);
            const int64_t cols = obs.shape(obs.ndim() - 1);
            if (cols < p.n_read())
              throw std::invalid_argument("obs: fewer columns than the actor reads");
            const int64_t m = p.n_actions();
            py::array_t<float> out = single ? py::array_t<float>({m})
                                            : py::array_t<float>({n, m});
            float* o = out.mutable_data();
            auto run = [&](auto tag) {
              using T = decltype(tag);
              const auto* base = static_cast<const char*>(obs.data());
              const py::ssize_t rs = single ? 0 : obs.strides(0);
              const py::ssize_t cs = obs.strides(obs.ndim() - 1);
              if (cs % static_cast<py::ssize_t>(sizeof(T)) != 0)
                throw std::invalid_argument("obs: strides of whole elements");
              const int64_t step = cs / static_cast<py::ssize_t>(sizeof(T));
              for (int64_t i = 0; i < n; ++i)
                p.act(reinterpret_cast<const T*>(base + i * rs), step, o + i * m);
            };
            if (py::dtype::of<float>().is(obs.dtype())) run(float{});
            else if (py::dtype::of<double>().is(obs.dtype())) run(double{});
            else throw std::invalid_argument("obs: a float32 or float64 array");
            return out;
          },
          py::arg("obs"), "The actions (float32) of one observation or a batch");
}
