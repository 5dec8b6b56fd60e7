// The parts of the Python module egret._egret, one function per binding file.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace egret::python {

// A DeprecationWarning through Python's warnings module, attributed to the Python line that
// called into egret (so filters and pytest.warns see it like any other warning).
inline void warn_deprecated(const std::string& message) {
  namespace py = pybind11;
  const py::object category = py::module_::import("builtins").attr("DeprecationWarning");
  py::module_::import("warnings").attr("warn")(message, category, 1);
}

void bind_sample(pybind11::module_& m);     // Sample
void bind_network(pybind11::module_& m);    // Network, ForwardBatch
void bind_camera(pybind11::module_& m);     // event-camera files, transforms, gesture datasets
void bind_files(pybind11::module_& m);      // HDF5 traces and checkpoints
void bind_tasks(pybind11::module_& m);      // task generators (delay-copy)
void bind_evnn(pybind11::module_& m);       // the EvNN-convention EGRU on dense sequences
void bind_recording(pybind11::module_& m);  // a trained network on a camera recording

}  // namespace egret::python
