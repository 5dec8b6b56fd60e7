// Python bindings of egret's HDF5 files: event traces (read back as numpy arrays) and the raw
// contents of checkpoints. Writing goes through egret.Network (write_trace, save_checkpoint).
#include <pybind11/stl.h>

#include <string>

#include "io/hardware/hardware_estimate.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/checkpoint_network.hpp"
#include "io/hdf5/trace_file.hpp"
#include "io/nir/nir_export.hpp"
#include "io/nir/nir_import.hpp"
#include "io/nir/nir_reader.hpp"
#include "io/nir/nir_writer.hpp"
#include "python/src/bindings.hpp"
#include "python/src/numpy_conversions.hpp"

namespace egret::python {

void bind_files(py::module_& m) {
  m.def(
      "read_trace",
      [](const std::string& path) {
        TraceData d;
        {
          py::gil_scoped_release release;
          d = read_trace_file(path);
        }
        py::list layers;
        for (const auto& l : d.layers) {
          py::dict x;
          x["name"] = l.name;
          x["type"] = l.type;
          x["sorting"] = l.sorting;
          x["timestamps"] = vector_to_numpy(l.timestamps);
          x["node_ids"] = vector_to_numpy(l.node_ids);
          x["values"] = vector_to_numpy(l.values);
          x["sample_offsets"] = vector_to_numpy(l.sample_offsets);
          x["metrics"] = l.metrics;
          x["per_sample"] = l.per_sample;
          layers.append(x);
        }
        py::dict out;
        out["layers"] = layers;
        out["sample_start"] = vector_to_numpy(d.sample_start);
        out["sample_duration"] = vector_to_numpy(d.sample_duration);
        out["sample_label"] = vector_to_numpy(d.sample_label);
        out["provenance"] = d.provenance;
        out["snapshot_times"] = vector_to_numpy(d.snapshot_times);
        return out;
      },
      py::arg("path"),
      "Read an egret HDF5 event trace (checked): {layers: [{name, type, sorting, timestamps [ms], "
      "node_ids, values, sample_offsets, metrics, per_sample}], sample_start, sample_duration, "
      "sample_label, "
      "provenance, snapshot_times}.");
  m.def(
      "_estimate_json",
      [](const std::string& path, const std::string& profile, bool write) {
        const HardwareProfile p = load_hardware_profile(profile);
        HardwareEstimate e;
        {
          py::gil_scoped_release release;
          e = estimate_hardware(read_trace_file(path), path, p);
          if (write) add_estimate_to_trace(path, e);
        }
        return estimate_json(e);
      },
      py::arg("path"), py::arg("profile"), py::arg("write"),
      "The hardware estimate of a trace as JSON text (egret.estimate parses it).");
  m.def("hardware_profiles", &builtin_profile_names, "The built-in hardware profiles, by name.");
  m.def(
      "_export_nir",
      [](const std::string& source, bool is_config_text, const std::string& path, bool extension) {
        py::gil_scoped_release release;
        nir::ExportOptions options;
        options.extension = extension;
        const nir::NetworkValues values =
            is_config_text ? nir::values_of_config(parse_network_config(
                                 source, "configuration", checkpoint_training_sections()))
                           : nir::values_of_file(source);
        nir::write_nir_file(path, nir::export_graph(values, options));
      },
      py::arg("source"), py::arg("is_config_text"), py::arg("path"), py::arg("extension"),
      "Write a network (configuration text, or a configuration or checkpoint file) as a NIR "
      "graph (egret.export_nir).");
  m.def(
      "_import_nir_json",
      [](const std::string& path, double dt_ms) {
        py::gil_scoped_release release;
        nir::ImportOptions options;
        options.dt_ms = dt_ms;
        return nir::import_config(nir::read_nir_file(path), path, options);
      },
      py::arg("path"), py::arg("dt_ms"),
      "The network configuration (JSON text) that runs a NIR graph (egret.import_nir).");
  m.def(
      "read_checkpoint",
      [](const std::string& path) {
        const Checkpoint c = read_checkpoint(path);
        py::dict out;
        out["configuration"] = c.config_text;
        out["epoch"] = c.epoch;
        out["values"] = vector_to_numpy(c.values);
        out["adam_m"] = vector_to_numpy(c.adam_m);
        out["adam_v"] = vector_to_numpy(c.adam_v);
        out["optimizer_steps"] = c.optimizer_steps;
        return out;
      },
      py::arg("path"),
      "The raw contents of a checkpoint: configuration text, epoch, flat trainable values "
      "(training "
      "coordinates) and optimizer state. Network.load_checkpoint builds the network.");
}

}  // namespace egret::python
