// Python binding of egret.Sample: one input sequence (events, end time, readouts, optional
// labels or targets), built by python/src/sample.hpp's make_sample and read back as arrays.
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <vector>

#include "python/src/bindings.hpp"
#include "python/src/numpy_conversions.hpp"
#include "python/src/sample.hpp"

namespace egret::python {

namespace {

// Sample(label=...) is the name `labels` had before; accepted for one release with a warning.
PySample make_sample_accepting_label(const py::object& t, const py::object& channel,
                                     const py::object& value, Index channels, double end_time,
                                     const py::object& readout_times,
                                     const py::object& readout_windows, const py::object& labels,
                                     const py::object& targets, const py::object& label) {
  if (label.is_none())
    return make_sample(t, channel, value, channels, end_time, readout_times, readout_windows,
                       labels, targets);
  if (!labels.is_none()) throw std::invalid_argument("Sample: labels and label given; use labels");
  warn_deprecated(
      "Sample(label=...) is deprecated; use labels= (label is accepted until the "
      "next release)");
  return make_sample(t, channel, value, channels, end_time, readout_times, readout_windows, label,
                     targets);
}

}  // namespace

void bind_sample(py::module_& m) {
  py::class_<PySample>(m, "Sample",
                       "One input sequence: input events (time in ms, channel, value), the end of "
                       "the run, readouts (points, then windows) and optional targets.")
      .def(py::init(&make_sample_accepting_label), py::arg("t"), py::arg("channel"),
           py::arg("value") = py::none(), py::kw_only(), py::arg("channels"), py::arg("end_time"),
           py::arg("readout_times") = py::none(), py::arg("readout_windows") = py::none(),
           py::arg("labels") = py::none(), py::arg("targets") = py::none(),
           py::arg("label") = py::none(),
           "labels: one class per readout (an int applies to all readouts), for softmax "
           "cross-entropy; targets: array (readouts, outputs) for binary cross-entropy or MSE; "
           "label: the old name of labels (deprecated).")
      .def_property_readonly("t",
                             [](const PySample& p) {
                               std::vector<double> t;
                               for (const auto& e : p.s.input.events()) t.push_back(e.time);
                               return vector_to_numpy(t);
                             })
      .def_property_readonly("channel",
                             [](const PySample& p) {
                               std::vector<std::int64_t> c;
                               for (const auto& e : p.s.input.events()) c.push_back(e.channel);
                               return vector_to_numpy(c);
                             })
      .def_property_readonly("value",
                             [](const PySample& p) {
                               std::vector<double> v;
                               for (const auto& e : p.s.input.events()) v.push_back(e.value);
                               return vector_to_numpy(v);
                             })
      .def_property_readonly("channels", [](const PySample& p) { return p.s.input.channels(); })
      .def_property_readonly("end_time", [](const PySample& p) { return p.s.end_time; })
      .def_property_readonly("readout_times", [](const PySample& p) { return p.s.readout_times; })
      .def_property_readonly("readout_windows",
                             [](const PySample& p) { return p.s.readout_windows; })
      .def_property_readonly("readouts", &PySample::readouts)
      .def_property_readonly("labels",
                             [](const PySample& p) -> py::object {
                               if (!p.has_labels) return py::none();
                               return py::cast(p.s.targets.labels);
                             })
      .def_property_readonly(
          "targets",
          [](const PySample& p) -> py::object {
            if (!p.has_values) return py::none();
            py::array_t<double> a({static_cast<py::ssize_t>(p.s.targets.values.size()),
                                   static_cast<py::ssize_t>(p.s.targets.values[0].size())});
            auto w = a.mutable_unchecked<2>();
            for (py::ssize_t j = 0; j < a.shape(0); ++j)
              for (py::ssize_t k = 0; k < a.shape(1); ++k)
                w(j, k) =
                    p.s.targets.values[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
            return a;
          })
      .def("__len__", [](const PySample& p) { return p.s.input.size(); })
      .def("__repr__", [](const PySample& p) {
        std::ostringstream os;
        os << "<egret.Sample: " << p.s.input.size() << " input events on " << p.s.input.channels()
           << " channels, end_time " << p.s.end_time << " ms, " << p.readouts() << " readouts>";
        return os.str();
      });
}

}  // namespace egret::python
