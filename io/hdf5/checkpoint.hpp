// Training checkpoints in HDF5: the trainable values (flat, in training coordinates, for an exact
// resume), the optimizer's state, the RNG state, the epoch, the configuration they belong to,
// and the network's parameters by name in natural coordinates (for analysis). Written under a
// temporary name and renamed.
//
//   /            attrs egret_format = "egret-checkpoint", egret_format_version = 3,
//                epoch, optimizer_steps, configuration, rng_state, [training_loop],
//                egret_integrity (CRC-64 of every other dataset and attribute, by path),
//                egret_integrity_crc64 (CRC-64 of that table)
//   /training/values, /training/adam_m, /training/adam_v     float64 [P]
//   /parameters/layer<l>/  attr type (the cell family); every named parameter of the layer
//                (Layer::parameters(): matrices [rows, cols], vectors [N], scalars as attrs);
//   /parameters/readout/{W_o [C, N], b_o [C]}
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/network.hpp"

namespace egret {

struct Checkpoint {
  // The file's egret_format_version (docs/formats.md). Before 4, a per-unit time constant is one
  // value per layer, in /training and /parameters: ParameterVector::from_format3 reads them.
  std::int64_t format_version = 4;
  std::string config_text;  // the training configuration, verbatim
  int epoch = 0;
  std::vector<double> values;
  std::vector<double> adam_m, adam_v;
  std::int64_t optimizer_steps = 0;
  std::string rng_state;  // std::mt19937_64 state as text
  // The training loop's own state at `epoch` (JSON, attr training_loop; empty when absent, as
  // in older files and in those egret.Network.save_checkpoint writes): what else a
  // resumed loop needs to go on as if it had not stopped (cli/training_checkpoint.hpp).
  std::string loop_state;
  // /parameters, when written: "layer<l>.<name>" or "readout.<name>" -> values, row-major. The
  // trainable values above are in training coordinates (log tau, softplus^-1 theta), whose
  // round trip can move a value by an ulp; these are the values themselves.
  std::map<std::string, std::vector<double>> natural_parameters;
};

// `net` (optional) adds the named parameters (float64 in the file whatever the run's precision).
template <class Scalar = double>  // double and float
void write_checkpoint(const std::string& path, const Checkpoint& c,
                      const Network<Scalar>* net = nullptr);
// Validated in a child process first (io/hdf5/hdf5.hpp); a checkpoint any of whose datasets or
// attributes does not match its CRC-64 is refused, naming the damaged item.
Checkpoint read_checkpoint(const std::string& path);

// `net` (built from the checkpoint's training values) with its constrained parameters (time
// constants, thresholds) replaced by the checkpoint's natural values, so that a saved network
// reloads bit for bit. Each must agree with the training value within 1e-6 relative (a float
// run writes float-rounded values), else the file contradicts itself and is refused.
template <class Scalar>
Network<Scalar> with_exact_constrained_parameters(const Network<Scalar>& net, const Checkpoint& c,
                                                  const std::string& path) {
  Network<Scalar> out;
  for (Index l = 0; l < net.size(); ++l) {
    NamedParameters<Scalar> p = net.layer(l).parameters();
    for (auto& e : p) {
      if (e.spec.constraint == Constraint::kFree) continue;
      const std::string name = "layer" + std::to_string(l) + "." + e.spec.name;
      const auto it = c.natural_parameters.find(name);
      if (it == c.natural_parameters.end()) continue;
      const Index rows = e.value.rows(), cols = e.value.cols();
      // Before format 4 a per-unit time constant was one attribute for the layer: every unit's.
      const bool broadcast = e.spec.was_scalar && it->second.size() == 1 && c.format_version < 4;
      if (!broadcast && static_cast<Index>(it->second.size()) != rows * cols)
        throw std::runtime_error(path + ": /parameters " + name + " has " +
                                 std::to_string(it->second.size()) + " values, the network " +
                                 std::to_string(rows * cols));
      for (Index i = 0; i < rows; ++i) {
        for (Index j = 0; j < cols; ++j) {
          const double v = it->second[broadcast ? 0 : static_cast<std::size_t>(i * cols + j)];
          const double trained = static_cast<double>(e.value(i, j));
          if (!(std::abs(v - trained) <= 1e-6 * std::max(std::abs(v), std::abs(trained)))) {
            std::ostringstream os;
            os.precision(17);
            os << path << ": /parameters " << name << " = " << v
               << " contradicts /training/values (" << trained << ")";
            throw std::runtime_error(os.str());
          }
          e.value(i, j) = static_cast<Scalar>(v);
        }
      }
    }
    out.add_layer(net.layer(l).with_parameters(p));
  }
  if (net.readout()) out.set_readout(*net.readout());
  return out;
}

// CRC-64/XZ (ECMA-182 polynomial, reflected, initial value and final XOR all ones).
std::uint64_t crc64(const void* data, std::size_t n);

}  // namespace egret
