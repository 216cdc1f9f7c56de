// vdsim_gym._core: thin, private bindings of the C++ core. Split by topic.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_params(py::module_& m);
void bind_session(py::module_& m);
void bind_latency(py::module_& m);
void bind_task(py::module_& m);
void bind_vector(py::module_& m);
void bind_courses(py::module_& m);
void bind_dyno(py::module_& m);
void bind_realtime(py::module_& m);
void bind_gym_step(py::module_& m);
void bind_baselines(py::module_& m);
void bind_sil(py::module_& m);
void bind_mlp(py::module_& m);

PYBIND11_MODULE(_core, m) {
  m.doc() = "vdsim C++ core (private; use vdsim_gym)";
  m.attr("__version__") = VDSIM_VERSION;  // the git sha: vdsim_gym._build_info
  bind_params(m);
  bind_session(m);
  bind_latency(m);
  bind_task(m);
  bind_vector(m);
  bind_courses(m);
  bind_dyno(m);
  bind_realtime(m);
  bind_gym_step(m);
  bind_baselines(m);
  bind_sil(m);
  bind_mlp(m);
}
