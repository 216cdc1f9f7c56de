// The SIL shared-memory transport (vdsim/shm_link.hpp) for vdsim_gym.sil: the
// simulator's side (create=True) and a Python controller's. recv waits with the GIL
// released; Ctrl-C reaches it within 50 ms.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <utility>
#include <vector>

#include "vdsim/shm_link.hpp"

namespace py = pybind11;
using vdsim::ShmLink;

namespace {

std::optional<std::pair<py::bytes, uint32_t>> shm_recv(ShmLink& link, double timeout,
                                                        double spin) {
  std::vector<unsigned char> buf(ShmLink::kCapacity + 1);
  uint32_t writer = 0;
  bool interrupted = false;
  long n;
  {
    py::gil_scoped_release release;
    n = link.recv(buf.data(), buf.size(), timeout, spin, writer, [&] {
      py::gil_scoped_acquire gil;
      interrupted = PyErr_CheckSignals() != 0;
      return interrupted;
    });
  }
  if (interrupted) throw py::error_already_set();
  if (n < 0) return std::nullopt;
  return std::make_pair(py::bytes(reinterpret_cast<const char*>(buf.data()),
                                  static_cast<size_t>(n)), writer);
}

}  // namespace

void bind_sil(py::module_& m) {
  py::class_<ShmLink>(m, "ShmLink",
                      "One side of a SIL shared-memory region (docs/SIL.md): create=True "
                      "makes it (the simulator), False opens it (a controller)")
      .def(py::init<const std::string&, bool>(), py::arg("name"), py::arg("create"))
      .def("send", [](ShmLink& link, py::bytes data) {
             std::string_view v = data;
             if (v.size() > ShmLink::kCapacity)
               throw py::value_error("a message of " + std::to_string(v.size()) +
                                     " bytes does not fit a slot of " +
                                     std::to_string(ShmLink::kCapacity));
             py::gil_scoped_release release;
             link.send(reinterpret_cast<const unsigned char*>(v.data()), v.size());
           }, py::arg("data"), "Writes a message to this side's outgoing slot")
      .def("recv", &shm_recv, py::arg("timeout"), py::arg("spin") = 200e-6,
           "The next message and its writer's pid, or None after timeout seconds "
           "(polls for spin seconds first, then sleeps until written)")
      .def("close", &ShmLink::close_link,
           "Unmaps the region (the creator also removes its name); idempotent")
      .def_property_readonly("closed", &ShmLink::closed)
      .def_property_readonly("name", &ShmLink::name)
      .def_readonly_static("CAPACITY", &ShmLink::kCapacity)
      .def_readonly_static("SIZE", &ShmLink::kSize);
}
