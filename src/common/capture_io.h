// capture_io.h - reading and writing capture files (format version 1, see
// docs/capture_format.md) with NetCDF-C. Every failure throws InputError naming the file
// and the variable/attribute/dimension concerned.
#pragma once
#include <cstddef>
#include <string>
#include <vector>
#include "errors.h"

namespace wrfgpu {

class NcFile {
 public:
  // Opens for reading (write=false) or creates/overwrites a NetCDF-4 file (write=true).
  NcFile(const std::string& path, bool write = false);
  ~NcFile();
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;

  const std::string& path() const { return path_; }
  bool has_var(const std::string& name) const;
  bool has_att(const std::string& name, const std::string& var = "") const;
  // Dimension lengths of a variable, in NetCDF order (slowest first).
  std::vector<std::size_t> var_shape(const std::string& name) const;
  std::vector<std::string> var_dim_names(const std::string& name) const;
  std::size_t dim_len(const std::string& dim) const;  // throws when absent

  // Whole-variable reads, converted to the requested type. `expect` (if non-empty) is the
  // shape the caller needs; a mismatch throws naming the variable and the dimensions.
  std::vector<float> read_float(const std::string& name,
                                const std::vector<std::size_t>& expect = {}) const;
  std::vector<double> read_double(const std::string& name,
                                  const std::vector<std::size_t>& expect = {}) const;
  // InputError naming the variable when it is missing or its shape is not `expect`.
  void check_shape(const std::string& name, const std::vector<std::size_t>& expect) const;
  // Hyperslab read: `start`/`count` per dimension, NetCDF order.
  std::vector<float> read_float_slab(const std::string& name, const std::vector<std::size_t>& start,
                                     const std::vector<std::size_t>& count) const;
  // Attributes; var == "" means global. Missing -> InputError (or the default in *_or).
  double att_double(const std::string& name, const std::string& var = "") const;
  int att_int(const std::string& name, const std::string& var = "") const;
  std::string att_string(const std::string& name, const std::string& var = "") const;
  double att_double_or(const std::string& name, double dflt, const std::string& var = "") const;
  int att_int_or(const std::string& name, int dflt, const std::string& var = "") const;
  std::string att_string_or(const std::string& name, const std::string& dflt,
                            const std::string& var = "") const;
  bool var_is_double(const std::string& name) const;
  std::vector<std::string> var_names() const;
  std::vector<std::string> global_att_names() const;

  // Writing (file opened with write=true). define_* are allowed at any time (NetCDF-4).
  void def_dim(const std::string& name, std::size_t len);
  // dims slowest first; deflate level 4 + shuffle when compress.
  void def_var(const std::string& name, bool is_double, const std::vector<std::string>& dims,
               const std::string& units, const std::string& description, bool compress = true);
  void put_float(const std::string& name, const std::vector<float>& v);
  void put_double(const std::string& name, const std::vector<double>& v);
  void put_att(const std::string& name, const std::string& value, const std::string& var = "");
  void put_att(const std::string& name, double value, const std::string& var = "");
  void put_att_int(const std::string& name, int value, const std::string& var = "");
  // Copies dims, variables (with data and attributes) and global attributes from another file,
  // except the variables named in `skip`.
  void copy_from(const NcFile& src, const std::vector<std::string>& skip = {});

  // Copies one attribute (global when var == "") from another file.
  void copy_att(const NcFile& src, const std::string& name, const std::string& var = "");
  int ncid() const { return ncid_; }
  // Variables defined after this call are (not) compressed; default: deflate level 4 with
  // shuffle. Large generated cases are written uncompressed, which is much faster to write
  // and to read back in hyperslabs.
  void set_deflate(bool on) { deflate_ = on; }

 private:
  int varid(const std::string& name) const;
  std::string path_;
  int ncid_ = -1;
  bool deflate_ = true;
  bool write_ = false;
};

// The library's NetCDF version string.
std::string netcdf_version();

// Columns i0..i0+ni-1, j0..j0+nj-1 of a captured tile, as 0-based offsets within it (e.g. an
// MPI rank's patch); ni/nj < 0: the whole tile.
struct TileWindow {
  int i0 = 0, ni = -1, j0 = 0, nj = -1;
};

// For the kernels' capture readers: reads a capture variable after checking its dimension
// names, only the window's columns (west_east, south_north); the other dimensions whole.
inline std::vector<float> read_checked(const NcFile& f, const std::string& var,
                                       const std::vector<std::string>& dims, const TileWindow& w = {}) {
  if (!f.has_var(var)) throw InputError(f.path() + ": variable '" + var + "' is missing");
  auto names = f.var_dim_names(var);
  if (names != dims) {
    std::string want, got;
    for (auto& d : dims) want += (want.empty() ? "" : ",") + d;
    for (auto& d : names) got += (got.empty() ? "" : ",") + d;
    throw InputError(f.path() + ": variable '" + var + "' has dimensions (" + got + "), expected (" +
                     want + ")");
  }
  std::vector<std::size_t> start, count;
  for (auto& d : dims) {
    const bool i = d == "west_east" && w.ni >= 0, j = d == "south_north" && w.nj >= 0;
    start.push_back(i ? w.i0 : j ? w.j0 : 0);
    count.push_back(i ? w.ni : j ? w.nj : f.dim_len(d));
  }
  return f.read_float_slab(var, start, count);
}

}  // namespace wrfgpu
