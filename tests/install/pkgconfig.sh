#!/bin/sh
# pkgconfig.sh - a user's build through pkg-config against an installed wrfgpu: `make install`
# into a temporary prefix, then, with only PKG_CONFIG_PATH pointing there,
#   - the C++ program (tests/install/consumer/consumer.cpp) linked with the shared library,
#   - the Fortran program (consumer_fortran.F90: USE of the installed modules) linked with the
#     shared library, and again with the archive (static_libs, as WRF links libwrfgpu.a),
# each run (WRFGPU_BACKEND=cpu, no LD_LIBRARY_PATH: the run paths from the .pc find the
# libraries) and passing its checks; the version the program prints is the .pc's.
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }
command -v pkg-config >/dev/null 2>&1 || { echo "FAIL: pkg-config not found (Debian package pkg-config: tools/install_deps.sh)"; exit 1; }
src=tests/install/consumer
prefix=$tmp/prefix
if ! ${MAKE:-make} --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"; echo "FAIL: make install PREFIX=$prefix"; exit 1
fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset LD_LIBRARY_PATH
pc_version=$(pkg-config --modversion wrfgpu) || { echo "FAIL: pkg-config does not find wrfgpu in $PKG_CONFIG_PATH"; exit 1; }
cflags=$(pkg-config --cflags wrfgpu)
libs=$(pkg-config --libs wrfgpu)
static_libs=$(pkg-config --variable=static_libs wrfgpu)
echo "pkg-config --cflags --libs wrfgpu: $cflags $libs"
case " $cflags " in *" -I$prefix/include/wrfgpu "*) ok "Cflags: -I PREFIX/include/wrfgpu" ;; *) bad "Cflags lack -I$prefix/include/wrfgpu" ;; esac
[ "$(pkg-config --variable=fmoddir wrfgpu)" = "$prefix/lib/wrfgpu/mod" ] && ok "fmoddir = PREFIX/lib/wrfgpu/mod" \
  || bad "fmoddir is '$(pkg-config --variable=fmoddir wrfgpu)'"

# run NAME PROGRAM: run with the CPU backend, expect exit 0 and its PASS line
run() {
  WRFGPU_BACKEND=cpu "$2" > "$tmp/$1.out" 2>&1; st=$?
  sed 's/^/    /' "$tmp/$1.out"
  if [ $st -eq 0 ] && grep -q ': PASS$' "$tmp/$1.out"; then ok "$1 runs and passes"; else bad "$1: exit status $st"; fi
}

# C++, shared library
if g++ -std=c++17 -O1 "$src/consumer.cpp" $cflags $libs -o "$tmp/consumer" 2> "$tmp/cxx.err"; then
  ok "C++: g++ consumer.cpp \$(pkg-config --cflags --libs wrfgpu)"
  run "C++ program (libwrfgpu.so, pkg-config)" "$tmp/consumer"
  v=$(sed -n 's/^wrfgpu //p' "$tmp/C++ program (libwrfgpu.so, pkg-config).out")
  [ -n "$v" ] && [ "$v" = "$pc_version" ] && ok "the program's version ($v) is the .pc's Version" \
    || bad "the program prints version '$v', the .pc says '$pc_version'"
else cat "$tmp/cxx.err"; bad "C++ consumer does not build"; fi

# Fortran, shared library and archive
if gfortran -O1 "$src/consumer_fortran.F90" $cflags $libs -J"$tmp" -o "$tmp/consumer_fortran" 2> "$tmp/f.err"; then
  ok "Fortran: gfortran consumer_fortran.F90 \$(pkg-config --cflags --libs wrfgpu)"
  run "Fortran program (libwrfgpu.so, pkg-config)" "$tmp/consumer_fortran"
else cat "$tmp/f.err"; bad "Fortran consumer does not build (shared)"; fi
if gfortran -O1 "$src/consumer_fortran.F90" $cflags $static_libs -J"$tmp" -o "$tmp/consumer_fortran_static" 2> "$tmp/fs.err"; then
  ok "Fortran: gfortran consumer_fortran.F90 \$(pkg-config --cflags wrfgpu) \$(pkg-config --variable=static_libs wrfgpu)"
  if readelf -d "$tmp/consumer_fortran_static" | grep -q 'libwrfgpu'; then bad "the static link still needs libwrfgpu.so"
  else ok "the static link does not need libwrfgpu.so"; fi
  run "Fortran program (libwrfgpu.a, pkg-config)" "$tmp/consumer_fortran_static"
else cat "$tmp/fs.err"; bad "Fortran consumer does not build (static)"; fi
exit $rc
