// Long core work with the GIL released that Ctrl-C can still stop: a StopToken that
// checks Python's signals (taking the GIL for the check only), installed for the call.
#pragma once
#include <pybind11/pybind11.h>

#include "vdsim/interrupt.hpp"

namespace vdsim_py {

namespace py = pybind11;

class PySignalStop : public vdsim::StopToken {
 public:
  // Runs the Python signal handlers (main thread only; elsewhere always false). A handler
  // that raises (KeyboardInterrupt) leaves its exception set for the caller to re-raise.
  bool stop_requested() override {
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  }
};

// f() with the GIL released; a Python signal handler that raises ends it at the core's
// next poll (within ~10 ms of physics) and its exception is raised here.
template <class F>
auto run_interruptible(F&& f) -> decltype(f()) {
  PySignalStop stop;
  try {
    py::gil_scoped_release release;
    vdsim::ScopedStop scope(&stop);
    return f();
  } catch (const vdsim::Interrupted&) {
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

}  // namespace vdsim_py
