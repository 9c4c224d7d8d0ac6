// capture_io.cpp - NetCDF-C access for capture files. Every error names the file and the
// variable, attribute or dimension, so a user can tell what is wrong with their capture.
#include "capture_io.h"
#include <netcdf.h>
#include <cstdio>
#include <cstring>
#include <sstream>
#include "errors.h"

namespace wrfgpu {

namespace {
std::string shape_str(const std::vector<std::size_t>& s) {
  std::ostringstream o;
  o << "(";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ")";
  return o.str();
}
}  // namespace

#define NC_TRY(call, what)                                                             \
  do {                                                                                 \
    int st_ = (call);                                                                  \
    if (st_ != NC_NOERR)                                                               \
      throw InputError(path_ + ": " + (what) + ": " + nc_strerror(st_));               \
  } while (0)

NcFile::NcFile(const std::string& path, bool write) : path_(path), write_(write) {
  int st = write ? nc_create(path.c_str(), NC_NETCDF4 | NC_CLOBBER, &ncid_)
                 : nc_open(path.c_str(), NC_NOWRITE, &ncid_);
  if (st != NC_NOERR) {
    ncid_ = -1;
    throw InputError(path + ": cannot " + (write ? "create" : "open") +
                     " as NetCDF: " + nc_strerror(st));
  }
  // A capture is NetCDF-4 (HDF5). A classic-format file cut short still opens, and its
  // missing data reads as fill values: refuse it rather than replay zeros.
  int fmt = 0;
  if (!write && (nc_inq_format(ncid_, &fmt) != NC_NOERR ||
                 (fmt != NC_FORMAT_NETCDF4 && fmt != NC_FORMAT_NETCDF4_CLASSIC))) {
    const char* name = fmt == NC_FORMAT_CLASSIC ? "classic (CDF-1)"
                       : fmt == NC_FORMAT_64BIT_OFFSET ? "64-bit offset (CDF-2)"
                       : fmt == NC_FORMAT_CDF5 ? "CDF-5" : "unknown";
    nc_close(ncid_);
    ncid_ = -1;
    throw InputError(path + ": NetCDF format " + name + "; a capture file is NetCDF-4");
  }
}

NcFile::~NcFile() {
  if (ncid_ >= 0) nc_close(ncid_);
}

int NcFile::varid(const std::string& name) const {
  int id;
  if (nc_inq_varid(ncid_, name.c_str(), &id) != NC_NOERR)
    throw InputError(path_ + ": variable '" + name + "' is missing");
  return id;
}

bool NcFile::has_var(const std::string& name) const {
  int id;
  return nc_inq_varid(ncid_, name.c_str(), &id) == NC_NOERR;
}

bool NcFile::has_att(const std::string& name, const std::string& var) const {
  int vid = NC_GLOBAL;
  if (!var.empty() && nc_inq_varid(ncid_, var.c_str(), &vid) != NC_NOERR) return false;
  nc_type t;
  std::size_t len;
  return nc_inq_att(ncid_, vid, name.c_str(), &t, &len) == NC_NOERR;
}

std::vector<std::size_t> NcFile::var_shape(const std::string& name) const {
  int id = varid(name), nd;
  NC_TRY(nc_inq_varndims(ncid_, id, &nd), "variable '" + name + "'");
  std::vector<int> dims(nd);
  NC_TRY(nc_inq_vardimid(ncid_, id, dims.data()), "variable '" + name + "'");
  std::vector<std::size_t> s(nd);
  for (int i = 0; i < nd; ++i) NC_TRY(nc_inq_dimlen(ncid_, dims[i], &s[i]), "variable '" + name + "'");
  return s;
}

std::vector<std::string> NcFile::var_dim_names(const std::string& name) const {
  int id = varid(name), nd;
  NC_TRY(nc_inq_varndims(ncid_, id, &nd), "variable '" + name + "'");
  std::vector<int> dims(nd);
  NC_TRY(nc_inq_vardimid(ncid_, id, dims.data()), "variable '" + name + "'");
  std::vector<std::string> out;
  for (int d : dims) {
    char buf[NC_MAX_NAME + 1];
    NC_TRY(nc_inq_dimname(ncid_, d, buf), "variable '" + name + "'");
    out.push_back(buf);
  }
  return out;
}

std::size_t NcFile::dim_len(const std::string& dim) const {
  int id;
  if (nc_inq_dimid(ncid_, dim.c_str(), &id) != NC_NOERR)
    throw InputError(path_ + ": dimension '" + dim + "' is missing");
  std::size_t n;
  NC_TRY(nc_inq_dimlen(ncid_, id, &n), "dimension '" + dim + "'");
  return n;
}

template <class T>
static void check_var_shape(const std::string& path, const std::string& name,
                        const std::vector<std::size_t>& got, const std::vector<std::size_t>& expect) {
  if (!expect.empty() && got != expect)
    throw InputError(path + ": variable '" + name + "' has dimensions " + shape_str(got) +
                     ", expected " + shape_str(expect));
}

// A value equal to the variable's fill value (NetCDF's default 9.97e36 unless the file sets
// another) was never written: a capture cut short or a variable defined but not filled. WRF
// never produces it; read as data it becomes a finite, absurd input and garbage results.
static void check_written(int ncid, int varid, const std::string& path, const std::string& name,
                          const std::vector<float>& v) {
  int no_fill = 0;
  float fill = 0;
  if (nc_inq_var_fill(ncid, varid, &no_fill, &fill) != NC_NOERR || no_fill) return;
  for (std::size_t q = 0; q < v.size(); ++q)
    if (v[q] == fill) {
      char f[32];
      std::snprintf(f, sizeof f, "%g", fill);
      throw InputError(path + ": variable '" + name + "' holds its fill value (" + f + ") at element " +
                       std::to_string(q) + ": never written");
    }
}

std::vector<float> NcFile::read_float(const std::string& name,
                                      const std::vector<std::size_t>& expect) const {
  auto s = var_shape(name);
  check_var_shape<float>(path_, name, s, expect);
  std::size_t n = 1;
  for (auto d : s) n *= d;
  std::vector<float> v(n);
  NC_TRY(nc_get_var_float(ncid_, varid(name), v.data()), "reading variable '" + name + "'");
  check_written(ncid_, varid(name), path_, name, v);
  return v;
}

void NcFile::check_shape(const std::string& name, const std::vector<std::size_t>& expect) const {
  check_var_shape<float>(path_, name, var_shape(name), expect);
}

std::vector<float> NcFile::read_float_slab(const std::string& name,
                                           const std::vector<std::size_t>& start,
                                           const std::vector<std::size_t>& count) const {
  auto s = var_shape(name);
  if (start.size() != s.size() || count.size() != s.size())
    throw InputError(path_ + ": variable '" + name + "' has " + std::to_string(s.size()) +
                     " dimensions, a slab of " + std::to_string(start.size()) + " was asked for");
  std::size_t n = 1;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (start[d] + count[d] > s[d])
      throw InputError(path_ + ": variable '" + name + "': slab " + shape_str(start) + "+" +
                       shape_str(count) + " outside its dimensions " + shape_str(s));
    n *= count[d];
  }
  std::vector<float> v(n);
  NC_TRY(nc_get_vara_float(ncid_, varid(name), start.data(), count.data(), v.data()),
         "reading variable '" + name + "'");
  check_written(ncid_, varid(name), path_, name, v);
  return v;
}

std::vector<double> NcFile::read_double(const std::string& name,
                                        const std::vector<std::size_t>& expect) const {
  auto s = var_shape(name);
  check_var_shape<double>(path_, name, s, expect);
  std::size_t n = 1;
  for (auto d : s) n *= d;
  std::vector<double> v(n);
  NC_TRY(nc_get_var_double(ncid_, varid(name), v.data()), "reading variable '" + name + "'");
  return v;
}

static int att_owner(const NcFile& f, const std::string& var, const std::string& path, int ncid) {
  if (var.empty()) return NC_GLOBAL;
  int id;
  if (nc_inq_varid(ncid, var.c_str(), &id) != NC_NOERR)
    throw InputError(path + ": variable '" + var + "' is missing");
  (void)f;
  return id;
}

static std::string att_label(const std::string& name, const std::string& var) {
  return var.empty() ? "global attribute '" + name + "'" : "attribute '" + var + ":" + name + "'";
}

double NcFile::att_double(const std::string& name, const std::string& var) const {
  int vid = att_owner(*this, var, path_, ncid_);
  nc_type t;
  std::size_t len;
  if (nc_inq_att(ncid_, vid, name.c_str(), &t, &len) != NC_NOERR)
    throw InputError(path_ + ": " + att_label(name, var) + " is missing");
  if (t == NC_CHAR || t == NC_STRING || len < 1)
    throw InputError(path_ + ": " + att_label(name, var) + " is not a number");
  std::vector<double> v(len);
  NC_TRY(nc_get_att_double(ncid_, vid, name.c_str(), v.data()), att_label(name, var));
  return v[0];
}

int NcFile::att_int(const std::string& name, const std::string& var) const {
  double d = att_double(name, var);
  int i = (int)d;
  if ((double)i != d)
    throw InputError(path_ + ": " + att_label(name, var) + " = " + std::to_string(d) +
                     " is not an integer");
  return i;
}

std::string NcFile::att_string(const std::string& name, const std::string& var) const {
  int vid = att_owner(*this, var, path_, ncid_);
  nc_type t;
  std::size_t len;
  if (nc_inq_att(ncid_, vid, name.c_str(), &t, &len) != NC_NOERR)
    throw InputError(path_ + ": " + att_label(name, var) + " is missing");
  if (t == NC_CHAR) {
    std::string s(len, '\0');
    NC_TRY(nc_get_att_text(ncid_, vid, name.c_str(), &s[0]), att_label(name, var));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }
  if (t == NC_STRING && len >= 1) {
    std::vector<char*> p(len);
    NC_TRY(nc_get_att_string(ncid_, vid, name.c_str(), p.data()), att_label(name, var));
    std::string s = p[0] ? p[0] : "";
    nc_free_string(len, p.data());
    return s;
  }
  // A number where a string is expected: give its text form (e.g. capture_format = 1).
  return std::to_string(att_int(name, var));
}

double NcFile::att_double_or(const std::string& name, double dflt, const std::string& var) const {
  return has_att(name, var) ? att_double(name, var) : dflt;
}
int NcFile::att_int_or(const std::string& name, int dflt, const std::string& var) const {
  return has_att(name, var) ? att_int(name, var) : dflt;
}
std::string NcFile::att_string_or(const std::string& name, const std::string& dflt,
                                  const std::string& var) const {
  return has_att(name, var) ? att_string(name, var) : dflt;
}

bool NcFile::var_is_double(const std::string& name) const {
  nc_type t;
  NC_TRY(nc_inq_vartype(ncid_, varid(name), &t), "variable '" + name + "'");
  return t == NC_DOUBLE;
}

void NcFile::copy_att(const NcFile& src, const std::string& name, const std::string& var) {
  int sv = var.empty() ? NC_GLOBAL : src.varid(var);
  int dv = var.empty() ? NC_GLOBAL : varid(var);
  NC_TRY(nc_copy_att(src.ncid_, sv, name.c_str(), ncid_, dv), "copying " + att_label(name, var));
}

std::vector<std::string> NcFile::var_names() const {
  int n;
  NC_TRY(nc_inq_nvars(ncid_, &n), "listing variables");
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    char buf[NC_MAX_NAME + 1];
    NC_TRY(nc_inq_varname(ncid_, i, buf), "listing variables");
    out.push_back(buf);
  }
  return out;
}

std::vector<std::string> NcFile::global_att_names() const {
  int n;
  NC_TRY(nc_inq_varnatts(ncid_, NC_GLOBAL, &n), "listing attributes");
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    char buf[NC_MAX_NAME + 1];
    NC_TRY(nc_inq_attname(ncid_, NC_GLOBAL, i, buf), "listing attributes");
    out.push_back(buf);
  }
  return out;
}

void NcFile::def_dim(const std::string& name, std::size_t len) {
  int id;
  if (nc_inq_dimid(ncid_, name.c_str(), &id) == NC_NOERR) {
    std::size_t have;
    NC_TRY(nc_inq_dimlen(ncid_, id, &have), "dimension '" + name + "'");
    if (have != len)
      throw InputError(path_ + ": dimension '" + name + "' already has length " +
                       std::to_string(have) + ", not " + std::to_string(len));
    return;
  }
  NC_TRY(nc_def_dim(ncid_, name.c_str(), len, &id), "defining dimension '" + name + "'");
}

void NcFile::def_var(const std::string& name, bool is_double, const std::vector<std::string>& dims,
                     const std::string& units, const std::string& description, bool compress) {
  std::vector<int> ids;
  for (auto& d : dims) {
    int id;
    if (nc_inq_dimid(ncid_, d.c_str(), &id) != NC_NOERR)
      throw InputError(path_ + ": defining '" + name + "': dimension '" + d + "' not defined");
    ids.push_back(id);
  }
  int vid;
  NC_TRY(nc_def_var(ncid_, name.c_str(), is_double ? NC_DOUBLE : NC_FLOAT, (int)ids.size(),
                    ids.data(), &vid),
         "defining variable '" + name + "'");
  if (compress && deflate_ && !ids.empty())
    NC_TRY(nc_def_var_deflate(ncid_, vid, 1, 1, 4), "compressing variable '" + name + "'");
  put_att("units", units, name);
  put_att("description", description, name);
}

void NcFile::put_float(const std::string& name, const std::vector<float>& v) {
  NC_TRY(nc_put_var_float(ncid_, varid(name), v.data()), "writing variable '" + name + "'");
}
void NcFile::put_double(const std::string& name, const std::vector<double>& v) {
  NC_TRY(nc_put_var_double(ncid_, varid(name), v.data()), "writing variable '" + name + "'");
}
void NcFile::put_att(const std::string& name, const std::string& value, const std::string& var) {
  int vid = var.empty() ? NC_GLOBAL : varid(var);
  NC_TRY(nc_put_att_text(ncid_, vid, name.c_str(), value.size(), value.c_str()),
         "writing " + att_label(name, var));
}
void NcFile::put_att(const std::string& name, double value, const std::string& var) {
  int vid = var.empty() ? NC_GLOBAL : varid(var);
  NC_TRY(nc_put_att_double(ncid_, vid, name.c_str(), NC_DOUBLE, 1, &value),
         "writing " + att_label(name, var));
}
void NcFile::put_att_int(const std::string& name, int value, const std::string& var) {
  int vid = var.empty() ? NC_GLOBAL : varid(var);
  NC_TRY(nc_put_att_int(ncid_, vid, name.c_str(), NC_INT, 1, &value),
         "writing " + att_label(name, var));
}

void NcFile::copy_from(const NcFile& src, const std::vector<std::string>& skip) {
  int ngatts;
  NC_TRY(nc_inq_varnatts(src.ncid_, NC_GLOBAL, &ngatts), "copying global attributes");
  for (int a = 0; a < ngatts; ++a) {
    char name[NC_MAX_NAME + 1];
    NC_TRY(nc_inq_attname(src.ncid_, NC_GLOBAL, a, name), "copying global attributes");
    NC_TRY(nc_copy_att(src.ncid_, NC_GLOBAL, name, ncid_, NC_GLOBAL),
           std::string("copying global attribute '") + name + "'");
  }
  for (const auto& v : src.var_names()) {
    bool skipped = false;
    for (auto& s : skip) skipped |= (s == v);
    if (skipped) continue;
    int sid = src.varid(v), nd, natts;
    nc_type t;
    NC_TRY(nc_inq_var(src.ncid_, sid, nullptr, &t, &nd, nullptr, &natts), "variable '" + v + "'");
    auto dn = src.var_dim_names(v);
    auto sh = src.var_shape(v);
    std::vector<int> ids;
    for (std::size_t d = 0; d < dn.size(); ++d) {
      def_dim(dn[d], sh[d]);
      int id;
      nc_inq_dimid(ncid_, dn[d].c_str(), &id);
      ids.push_back(id);
    }
    int vid;
    NC_TRY(nc_def_var(ncid_, v.c_str(), t, nd, ids.data(), &vid), "defining '" + v + "'");
    if (nd > 0 && deflate_) NC_TRY(nc_def_var_deflate(ncid_, vid, 1, 1, 4), "compressing '" + v + "'");
    for (int a = 0; a < natts; ++a) {
      char name[NC_MAX_NAME + 1];
      NC_TRY(nc_inq_attname(src.ncid_, sid, a, name), "copying attributes of '" + v + "'");
      NC_TRY(nc_copy_att(src.ncid_, sid, name, ncid_, vid), "copying attributes of '" + v + "'");
    }
    std::size_t n = 1;
    for (auto d : sh) n *= d;
    if (t == NC_DOUBLE) {
      std::vector<double> buf(n);
      NC_TRY(nc_get_var_double(src.ncid_, sid, buf.data()), "reading '" + v + "'");
      NC_TRY(nc_put_var_double(ncid_, vid, buf.data()), "writing '" + v + "'");
    } else if (t == NC_INT) {
      std::vector<int> buf(n);
      NC_TRY(nc_get_var_int(src.ncid_, sid, buf.data()), "reading '" + v + "'");
      NC_TRY(nc_put_var_int(ncid_, vid, buf.data()), "writing '" + v + "'");
    } else {
      std::vector<float> buf(n);
      NC_TRY(nc_get_var_float(src.ncid_, sid, buf.data()), "reading '" + v + "'");
      NC_TRY(nc_put_var_float(ncid_, vid, buf.data()), "writing '" + v + "'");
    }
  }
}

std::string netcdf_version() { return nc_inq_libvers(); }

}  // namespace wrfgpu
