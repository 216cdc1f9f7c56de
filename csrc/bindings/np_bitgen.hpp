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

// numpy's PCG64.state of a C++ generator, as a dict numpy's PCG64 takes.
inline py::dict pcg64_state(const vdsim::NpPcg64& g) {
  uint64_t w[4];
  int has = 0;
  uint32_t u = 0;
  g.state(w, has, u);
  auto u128 = [](uint64_t hi, uint64_t lo) {
    return py::int_(hi).attr("__lshift__")(64).attr("__or__")(py::int_(lo));
  };
  py::dict inner;
  inner["state"] = u128(w[0], w[1]);
  inner["inc"] = u128(w[2], w[3]);
  py::dict d;
  d["bit_generator"] = "PCG64";
  d["state"] = inner;
  d["has_uint32"] = has;
  d["uinteger"] = u;
  return d;
}

}  // namespace vdsim_py
