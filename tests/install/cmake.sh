#!/bin/sh
# cmake.sh - a user's CMake project against an installed wrfgpu: `make install` into a
# temporary prefix, the prefix moved elsewhere (the package is relocatable), then
# tests/install/consumer/CMakeLists.txt (find_package(wrfgpu 0.1), CMAKE_PREFIX_PATH only)
# builds the C++ and the Fortran program, each with wrfgpu::wrfgpu (libwrfgpu.so) and with
# wrfgpu::wrfgpu_static (libwrfgpu.a); all four run (WRFGPU_BACKEND=cpu) and pass their
# checks; the version the programs print is the package's. The version file accepts 0.1 and
# this version, and refuses a newer minor and another major version.
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }
command -v cmake >/dev/null 2>&1 || { echo "FAIL: cmake not found (Debian package cmake: tools/install_deps.sh)"; exit 1; }
src=$(pwd)/tests/install/consumer
version=$(sed -n 's/^#define WRFGPU_VERSION "\(.*\)"/\1/p' src/common/version.h)
if ! ${MAKE:-make} --no-print-directory install PREFIX="$tmp/installed" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"; echo "FAIL: make install PREFIX=$tmp/installed"; exit 1
fi
mv "$tmp/installed" "$tmp/moved"
prefix=$tmp/moved
unset LD_LIBRARY_PATH
unset CXXFLAGS FFLAGS LDFLAGS   # a user's project: nothing of this build's settings

if cmake -S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log" 2>&1; then
  ok "cmake configure: find_package(wrfgpu 0.1 REQUIRED) with CMAKE_PREFIX_PATH=<moved prefix>"
  grep 'wrfgpu ' "$tmp/configure.log" | sed 's/^/    /'
  grep -q "from $prefix/lib/cmake/wrfgpu" "$tmp/configure.log" && ok "found in the moved prefix" || bad "wrfgpu_DIR is not the moved prefix's"
  grep -q 'CMake Warning' "$tmp/configure.log" && { bad "configure warned:"; sed -n '/CMake Warning/,/^$/p' "$tmp/configure.log"; }
  [ "$(cat "$tmp/build/wrfgpu_version.txt")" = "$version" ] && ok "wrfgpu_VERSION = $version (src/common/version.h)" \
    || bad "wrfgpu_VERSION is '$(cat "$tmp/build/wrfgpu_version.txt")', the source says $version"
else
  cat "$tmp/configure.log"; echo "FAIL: cmake configure"; exit 1
fi
if cmake --build "$tmp/build" > "$tmp/build.log" 2>&1; then ok "cmake --build: 4 programs"
else cat "$tmp/build.log"; echo "FAIL: cmake --build"; exit 1; fi

for e in consumer consumer_static consumer_fortran consumer_fortran_static; do
  WRFGPU_BACKEND=cpu "$tmp/build/$e" > "$tmp/$e.out" 2>&1; st=$?
  sed 's/^/    /' "$tmp/$e.out"
  if [ $st -eq 0 ] && grep -q ': PASS$' "$tmp/$e.out"; then ok "$e runs and passes"; else bad "$e: exit status $st"; fi
  case $e in
    *_static) readelf -d "$tmp/build/$e" | grep -q libwrfgpu && bad "$e needs libwrfgpu.so" ;;
    *) readelf -d "$tmp/build/$e" | grep -q 'NEEDED.*\[libwrfgpu.so\]' && ok "$e needs libwrfgpu.so by name" \
         || bad "$e: no NEEDED libwrfgpu.so by name: $(readelf -d "$tmp/build/$e" | grep wrfgpu)" ;;
  esac
done
v=$(sed -n 's/^wrfgpu //p' "$tmp/consumer.out")
[ "$v" = "$version" ] && ok "the C++ program prints version $v" || bad "the C++ program prints '$v', the package is $version"

# the version file: find_package(wrfgpu REQ) in a project that only looks
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
for req in "$major.$minor" "$version" "$major.$((minor + 1))" "$((major + 1)).0"; do
  mkdir -p "$tmp/v/$req"
  printf 'cmake_minimum_required(VERSION 3.18)\nproject(v LANGUAGES NONE)\nfind_package(wrfgpu %s QUIET)\nfile(WRITE "${CMAKE_BINARY_DIR}/found" "${wrfgpu_FOUND}")\n' "$req" > "$tmp/v/$req/CMakeLists.txt"
  cmake -S "$tmp/v/$req" -B "$tmp/v/$req/b" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/v/$req.log" 2>&1 || { cat "$tmp/v/$req.log"; bad "cmake failed for find_package(wrfgpu $req)"; continue; }
  found=$(cat "$tmp/v/$req/b/found")
  case $req in
    "$major.$minor"|"$version") want=1 ;;
    *) want=0 ;;
  esac
  case "$found" in 1|TRUE|ON) got=1 ;; *) got=0 ;; esac
  [ $got = $want ] && ok "find_package(wrfgpu $req): $([ $got = 1 ] && echo accepted || echo refused)" \
    || bad "find_package(wrfgpu $req): wrfgpu_FOUND='$found'"
done
exit $rc
