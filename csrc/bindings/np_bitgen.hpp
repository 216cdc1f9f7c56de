// A numpy BitGenerator's C interface for the C++ draws (vdsim/numpy_draws.hpp).
#pragma once
#include <pybind11/pybind11.h>

#include "vdsim/numpy_draws.hpp"

namespace vdsim_py {

namespace py = pybind11;

// The C interface (bitgen_t) of a numpy BitGenerator (e.g. an env's
// np_random.bit_generator), from its capsule; the object must outlive its use.
inline vdsim::NpBitGen* np_bitgen(py::handle bit_generator) {
  py::object cap;
  try {
    cap = bit_generator.attr("capsule");
  } catch (py::error_already_set&) {
    throw py::type_error("expected a numpy BitGenerator (Generator.bit_generator)");
  }
  void* p = PyCapsule_GetPointer(cap.ptr(), "BitGenerator");
  if (!p) throw py::error_already_set();
  return static_cast<vdsim::NpBitGen*>(p);
}

}  // namespace vdsim_py
