#include "io/checkpoint.hpp"

#include <cstdio>
#include <stdexcept>

#include "io/hdf5.hpp"

namespace egret {
namespace {

constexpr std::int64_t kCheckpointVersion = 1;

template <class M>
void write_eigen(hid_t g, const std::string& name, const M& m) {
  std::vector<double> rows;  // row-major for HDF5
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) rows.push_back(static_cast<double>(m(i, j)));
  if (m.cols() == 1)
    h5::write_vector(g, name, rows);
  else
    h5::write_matrix(g, name, rows, static_cast<std::size_t>(m.rows()),
                     static_cast<std::size_t>(m.cols()));
}

}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c, const Network<double>* net) {
  const std::string tmp = path + ".tmp-egret";
  try {
    {
      h5::Id file = h5::create_file(tmp);
      const hid_t f = file.get();
      h5::write_attribute(f, "egret_format", std::string("egret-checkpoint"));
      h5::write_attribute(f, "egret_format_version", kCheckpointVersion);
      h5::write_attribute(f, "epoch", static_cast<std::int64_t>(c.epoch));
      h5::write_attribute(f, "optimizer_steps", c.optimizer_steps);
      h5::write_attribute(f, "configuration", c.config_text);
      h5::write_attribute(f, "rng_state", c.rng_state);
      h5::Id training = h5::create_group(f, "training");
      h5::write_vector(training.get(), "values", c.values);
      h5::write_vector(training.get(), "adam_m", c.adam_m);
      h5::write_vector(training.get(), "adam_v", c.adam_v);
      if (net) {
        h5::Id params = h5::create_group(f, "parameters");
        for (Index l = 0; l < net->size(); ++l) {
          // Every named parameter of the layer's family; a scalar is an attribute.
          h5::Id g = h5::create_group(params.get(), "layer" + std::to_string(l));
          h5::write_attribute(g.get(), "type", net->layer(l).type_name());
          for (const auto& e : net->layer(l).parameters()) {
            if (e.spec.rank == Rank::kScalar)
              h5::write_attribute(g.get(), e.spec.name, e.value(0, 0));
            else
              write_eigen(g.get(), e.spec.name, e.value);
          }
        }
        if (const auto* ro = net->readout()) {
          h5::Id g = h5::create_group(params.get(), "readout");
          write_eigen(g.get(), "W_o", ro->W_o);
          write_eigen(g.get(), "b_o", ro->b_o);
        }
      }
      if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error(path + ": flush failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error(path + ": cannot rename the finished checkpoint into place");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

Checkpoint read_checkpoint(const std::string& path) {
  h5::Id file = h5::open_file_read(path);
  const hid_t f = file.get();
  if (!h5::has_attribute(f, "egret_format") ||
      h5::read_string_attribute(f, "egret_format", path) != "egret-checkpoint")
    throw std::runtime_error(path + ": not an egret checkpoint");
  const std::int64_t version = h5::read_int_attribute(f, "egret_format_version", path);
  if (version != kCheckpointVersion)
    throw std::runtime_error(path + ": unsupported checkpoint version " + std::to_string(version));
  Checkpoint c;
  c.epoch = static_cast<int>(h5::read_int_attribute(f, "epoch", path));
  c.optimizer_steps = h5::read_int_attribute(f, "optimizer_steps", path);
  c.config_text = h5::read_string_attribute(f, "configuration", path);
  c.rng_state = h5::read_string_attribute(f, "rng_state", path);
  h5::Id training = h5::open_group(f, "training", path);
  c.values = h5::read_doubles(training.get(), "values", path + ":/training");
  c.adam_m = h5::read_doubles(training.get(), "adam_m", path + ":/training");
  c.adam_v = h5::read_doubles(training.get(), "adam_v", path + ":/training");
  return c;
}

}  // namespace egret
