// The pybind11 module `egret._egret`. C++ exceptions arrive as Python exceptions with the same
// messages: std::invalid_argument -> ValueError, std::runtime_error -> RuntimeError (pybind11's
// standard translation).
#include <pybind11/pybind11.h>

#include "python/src/bindings.hpp"

PYBIND11_MODULE(_egret, m) {
  m.doc() =
      "egret: event-driven simulation and exact gradients of activity-sparse recurrent networks "
      "(continuous-time EGRU)";
  egret::python::bind_sample(m);
  egret::python::bind_network(m);
  egret::python::bind_camera(m);
  egret::python::bind_files(m);
  egret::python::bind_tasks(m);
  egret::python::bind_evnn(m);
  egret::python::bind_recording(m);  // after bind_camera: CAMERA_EVENT_DTYPE
}
