// Writing a .nir file in NIR's layout (io/nir/nir_reader.hpp describes it): what `nir.read`
// reads. Parameters are written as float64, Input / Output shapes and Flatten's dimensions as
// int64, strings as UTF-8 variable-length strings (h5py's form). Written atomically (a
// temporary file renamed into place: io/hdf5/hdf5.hpp OutputFile).
#pragma once

#include <string>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

void write_nir_file(const std::string& path, const Graph& graph);

}  // namespace egret::nir
