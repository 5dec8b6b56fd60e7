// What the three parts of egret's HDF5 layer share (io/hdf5/hdf5.cpp, validating_child.cpp,
// output_file.cpp): error checks that name the failing call, and a file's size on disk. Not part
// of the layer's interface (io/hdf5/hdf5.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "io/hdf5/hdf5.hpp"

namespace egret::h5::detail {

[[noreturn]] void fail(const std::string& what);
Id check(hid_t id, const std::string& what);  // an id, or an error naming `what`
void check_status(herr_t status, const std::string& what);
std::uint64_t file_size_of(const std::string& path);  // 0 when it cannot be read

}  // namespace egret::h5::detail
