// Training checkpoints in HDF5: the trainable values (flat, in training coordinates, for an exact
// resume), the optimizer's state, the RNG state, the epoch, the configuration they belong to,
// and the network's parameters by name in natural coordinates (for analysis). Written under a
// temporary name and renamed.
//
//   /            attrs egret_format = "egret-checkpoint", egret_format_version = 2,
//                epoch, optimizer_steps, configuration, rng_state,
//                egret_integrity (CRC-64 of every other dataset and attribute, by path),
//                egret_integrity_crc64 (CRC-64 of that table)
//   /training/values, /training/adam_m, /training/adam_v     float64 [P]
//   /parameters/layer<l>/  attr type (the cell family); every named parameter of the layer
//                (Layer::parameters(): matrices [rows, cols], vectors [N], scalars as attrs);
//   /parameters/readout/{W_o [C, N], b_o [C]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/network.hpp"

namespace egret {

struct Checkpoint {
  std::string config_text;  // the training configuration, verbatim
  int epoch = 0;
  std::vector<double> values;
  std::vector<double> adam_m, adam_v;
  std::int64_t optimizer_steps = 0;
  std::string rng_state;  // std::mt19937_64 state as text
};

// `net` (optional) adds the named parameters (float64 in the file whatever the run's precision).
template <class Scalar = double>  // double and float
void write_checkpoint(const std::string& path, const Checkpoint& c,
                      const Network<Scalar>* net = nullptr);
// Validated in a child process first (io/hdf5.hpp); a checkpoint any of whose datasets or
// attributes does not match its CRC-64 is refused, naming the damaged item.
Checkpoint read_checkpoint(const std::string& path);

// CRC-64/XZ (ECMA-182 polynomial, reflected, initial value and final XOR all ones).
std::uint64_t crc64(const void* data, std::size_t n);

}  // namespace egret
