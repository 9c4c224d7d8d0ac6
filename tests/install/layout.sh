#!/bin/sh
# layout.sh - what `make install` writes and where (docs/design.md, "What make install puts
# where"): with DESTDIR, into a staging folder, for PREFIX=/opt/wrfgpu-layout-test.
#   - the library, the public headers in include/wrfgpu/, the Fortran modules in lib/wrfgpu/mod,
#     wrfgpu.pc and the CMake package files, and nothing of the private headers;
#   - every installed header compiles alone with only -I PREFIX/include/wrfgpu;
#   - the package files name PREFIX (not the staging folder, not this build tree) and this
#     version; install needs no rebuild of a built tree; make uninstall removes every file.
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }
MAKE=${MAKE:-make}
prefix=/opt/wrfgpu-layout-test
stage=$tmp/stage
P=$stage$prefix
version=$(sed -n 's/^#define WRFGPU_VERSION "\(.*\)"/\1/p' src/common/version.h)
[ -n "$version" ] || { echo "FAIL: no WRFGPU_VERSION in src/common/version.h"; exit 1; }

# 1. install needs nothing rebuilt on a built tree (make check has built it)
if "$MAKE" -n --no-print-directory install PREFIX=$prefix DESTDIR="$stage" 2>&1 \
     | grep -E '^(ar rcs|[^ ]*(g\+\+|nvcc|gfortran|mpicxx)) ' > "$tmp/rebuild"; then
  bad "make install would rebuild:"; head -5 "$tmp/rebuild"
else ok "make install rebuilds nothing on a built tree"; fi

# 2. install into the staging folder
if ! "$MAKE" --no-print-directory install PREFIX=$prefix DESTDIR="$stage" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"; echo "FAIL: make install PREFIX=$prefix DESTDIR=$stage"; exit 1
fi
ok "make install PREFIX=$prefix DESTDIR=<staging folder>"
[ -z "$(ls -A "$stage" | grep -v '^opt$')" ] && [ -d "$P" ] && ok "DESTDIR holds PREFIX and nothing else" \
  || bad "the staging folder holds $(ls -A "$stage")"
for f in lib/libwrfgpu.a lib/libwrfgpu.so lib/pkgconfig/wrfgpu.pc lib/cmake/wrfgpu/wrfgpuConfig.cmake \
         lib/cmake/wrfgpu/wrfgpuConfigVersion.cmake bin/wrfgpu_replay \
         include/wrfgpu/wsm5.h include/wrfgpu/advection.h include/wrfgpu/radm2sorg.h \
         include/wrfgpu/errors.h include/wrfgpu/version.h include/wrfgpu/generated/radm2sorg_mechanism.h; do
  [ -f "$P/$f" ] || bad "$f not installed"
done
for m in include/*.mod; do
  [ -f "$P/lib/wrfgpu/mod/$(basename "$m")" ] || bad "$(basename "$m") not in lib/wrfgpu/mod"
done
[ -z "$(find "$P/include" -maxdepth 1 -type f)" ] && ok "nothing loose in PREFIX/include (headers in include/wrfgpu, modules in lib/wrfgpu/mod)" \
  || bad "loose files in PREFIX/include: $(find "$P/include" -maxdepth 1 -type f)"

# 3. only public headers: none of the physics, CUDA helpers, capture I/O, verification
priv=""
for h in wsm5_physics.h wsm5_radar.h wsm5_backends.h advection_impl.h advection_physics.h \
         advection_capture.h radm2sorg_backends.h cuda_util.h capture_io.h verify.h stream_copy.h \
         finite_check.h call_timing.h host_cores.h ceilings.h; do
  [ -e "$P/include/wrfgpu/$h" ] && priv="$priv $h"
done
n=$(find "$P/include/wrfgpu" -name '*.h' | wc -l)
[ -z "$priv" ] && ok "$n headers installed, none of the private ones" || bad "private headers installed:$priv"

# 4. each installed header compiles alone, with only the installed include folder
bad_h=""
for h in $(cd "$P/include/wrfgpu" && find . -name '*.h' | sed 's|^\./||' | sort); do
  printf '#include "%s"\n' "$h" > "$tmp/one.cpp"
  g++ -std=c++17 -fsyntax-only -I"$P/include/wrfgpu" "$tmp/one.cpp" 2> "$tmp/err" \
    || { bad_h="$bad_h $h"; head -3 "$tmp/err"; }
done
[ -z "$bad_h" ] && ok "all $n headers compile alone with -I PREFIX/include/wrfgpu" || bad "headers that do not compile alone:$bad_h"

# 5. the package files name PREFIX and this version, never the staging folder or this tree
pc=$P/lib/pkgconfig/wrfgpu.pc
grep -q "^prefix=$prefix\$" "$pc" && grep -q "^Version: $version\$" "$pc" && ok "wrfgpu.pc: prefix=$prefix, Version: $version" \
  || bad "wrfgpu.pc: $(grep -E '^(prefix|Version)' "$pc" | tr '\n' ' ')"
grep -q "set(PACKAGE_VERSION \"$version\")" "$P/lib/cmake/wrfgpu/wrfgpuConfigVersion.cmake" && ok "wrfgpuConfigVersion.cmake: $version" \
  || bad "wrfgpuConfigVersion.cmake does not say $version"
if grep -l -e "$stage" -e "$(pwd)" "$pc" "$P"/lib/cmake/wrfgpu/*.cmake > "$tmp/leak"; then
  bad "the staging folder or the build tree is named in: $(cat "$tmp/leak")"
else ok "no package file names the staging folder or the build tree"; fi
grep -q '@[A-Z_]*@' "$pc" "$P"/lib/cmake/wrfgpu/*.cmake && bad "a package file kept an @NAME@ placeholder" || ok "no placeholder left"

# 6. a second install over the first gives the same tree; uninstall removes every file
(cd "$stage" && find . | sort) > "$tmp/tree1"
"$MAKE" --no-print-directory install PREFIX=$prefix DESTDIR="$stage" > "$tmp/install2.log" 2>&1 || { bad "second make install failed"; cat "$tmp/install2.log"; }
(cd "$stage" && find . | sort) > "$tmp/tree2"
cmp -s "$tmp/tree1" "$tmp/tree2" && ok "installing twice gives the same tree" || bad "a second install changed the tree: $(diff "$tmp/tree1" "$tmp/tree2" | head -5)"
"$MAKE" --no-print-directory uninstall PREFIX=$prefix DESTDIR="$stage" > "$tmp/uninstall.log" 2>&1 || { bad "make uninstall failed"; cat "$tmp/uninstall.log"; }
left=$(find "$stage" -type f)
[ -z "$left" ] && ok "make uninstall removes every installed file" || bad "left after make uninstall: $left"
exit $rc
