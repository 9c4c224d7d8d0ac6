#!/bin/sh
# wrf_cmake_module.sh - wrf_patch/cmake/wrfgpu.cmake (what apply.sh --cmake puts in WRF's cmake/)
# in a stand-in for WRF's CMake build: a project named WRF that sets its definition lists, includes
# the module where WRF's CMakeLists.txt does (before "Accumulate option and definitions"), and
# then makes WRF_Core (a static library) and the wrf executable the way WRF does. No WRF code:
# the stand-in's Fortran reads RUN_ON_GPU and USEs a wrfgpu module, as the patched WRF files do.
# Checked: RUN_ON_GPU reaches WRF_Core's sources, the .mod directory is found, wrf links against
# lib/libwrfgpu.a (with the CUDA runtime through a run path when the library has CUDA) and runs
# without LD_LIBRARY_PATH; the default root apply.sh writes (this build tree), WRFGPU_ROOT at a
# `make install` prefix (its package file: wrfgpu::wrfgpu_static; and without the package file),
# wrfgpu_DIR, each configured twice where it matters; USE_WRFGPU=OFF builds without either; a
# root without wrfgpu and an XEON_OPTIMIZED_WSM5 stanza stop cmake.
# Skips (77) without cmake 3.20+ or gfortran; needs lib/libwrfgpu.a and include/*.mod (make lib).
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
command -v cmake >/dev/null 2>&1 || { echo "wrf_cmake_module.sh: SKIPPED: no cmake"; exit 77; }
v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $v
{ [ "${1:-0}" -gt 3 ] || { [ "${1:-0}" -eq 3 ] && [ "${2:-0}" -ge 20 ]; }; } \
  || { echo "wrf_cmake_module.sh: SKIPPED: cmake $1.$2 (WRF's CMake build needs 3.20)"; exit 77; }
fc=$(sed -n 's/^FC *= *//p' configure.wrfgpu 2>/dev/null | head -1)
[ -n "$fc" ] || fc=gfortran
command -v "$fc" >/dev/null 2>&1 || { echo "wrf_cmake_module.sh: SKIPPED: no Fortran compiler ($fc)"; exit 77; }
[ -f lib/libwrfgpu.a ] && [ -f include/module_wrfgpu_radm2sorg.mod ] \
  || { echo "wrf_cmake_module.sh: lib/libwrfgpu.a or include/*.mod missing (make lib)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }

src=$tmp/WRF
mkdir -p "$src/cmake" "$src/main"
# cmake/wrfgpu.cmake as apply.sh writes it (the tree apply.sh comes from as the default root)
sed -e "s|@WRFGPU_APPLY_ROOT@|$root|" wrf_patch/cmake/wrfgpu.cmake > "$src/cmake/wrfgpu.cmake"
cat > "$src/CMakeLists.txt" <<'EOF'
cmake_minimum_required( VERSION 3.20 )
project( WRF )
enable_language( C )
enable_language( CXX )
enable_language( Fortran )
list( APPEND CMAKE_MODULE_PATH ${PROJECT_SOURCE_DIR}/cmake/ )
set( CMAKE_INSTALL_RPATH_USE_LINK_PATH TRUE )
set( CMAKE_Fortran_PREPROCESS ON )
set( WRF_ARCH_LOCAL "NONSTANDARD_SYSTEM_SUBR" CACHE STRING "stand-in for the stanza's ARCH_LOCAL" )
set( PROJECT_COMPILE_DEFINITIONS_CONFCHECK "" )
set( PROJECT_COMPILE_DEFINITIONS_OPTIONS   EM_CORE=1 )
set( PROJECT_COMPILE_DEFINITIONS_STANZA    ${WRF_ARCH_LOCAL} )
find_package( netCDF QUIET )   # WRF's finder makes netCDF::netcdf; the module links it if present
include( wrfgpu )
# Accumulate option and definitions
set( PROJECT_COMPILE_DEFINITIONS ${PROJECT_COMPILE_DEFINITIONS_CONFCHECK} ${PROJECT_COMPILE_DEFINITIONS_OPTIONS}
                                 ${PROJECT_COMPILE_DEFINITIONS_STANZA} )
add_library( ${PROJECT_NAME}_Core STATIC )
target_sources( ${PROJECT_NAME}_Core PRIVATE core.F )
set_target_properties( ${PROJECT_NAME}_Core PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/modules Fortran_FORMAT FREE )
target_include_directories( ${PROJECT_NAME}_Core PUBLIC ${CMAKE_BINARY_DIR}/modules )
add_subdirectory( main )
target_compile_definitions( ${PROJECT_NAME}_Core PRIVATE ${PROJECT_COMPILE_DEFINITIONS} )
target_link_libraries( ${PROJECT_NAME}_Core PUBLIC $<TARGET_NAME_IF_EXISTS:netCDF::netcdf> )
EOF
cat > "$src/main/CMakeLists.txt" <<'EOF'
add_compile_definitions( "${PROJECT_COMPILE_DEFINITIONS}" )
add_executable( wrf wrf.F )
set_target_properties( wrf PROPERTIES Fortran_FORMAT FREE )
target_link_libraries( wrf PRIVATE ${PROJECT_NAME}_Core )
EOF
cat > "$src/core.F" <<'EOF'
MODULE module_core
CONTAINS
  SUBROUTINE core_run()
#ifdef RUN_ON_GPU
    USE module_wrfgpu_radm2sorg, ONLY : wrfgpu_radm2sorg_on
    WRITE(*, '(A,L1)') 'core: RUN_ON_GPU, wrfgpu_radm2sorg_on() = ', wrfgpu_radm2sorg_on()
#else
    WRITE(*, '(A)') 'core: stock'
#endif
  END SUBROUTINE core_run
END MODULE module_core
EOF
cat > "$src/main/wrf.F" <<'EOF'
PROGRAM wrf
  USE module_core, ONLY : core_run
#ifdef RUN_ON_GPU
  WRITE(*, '(A)') 'wrf: RUN_ON_GPU'
#endif
  CALL core_run()
END PROGRAM wrf
EOF

# configure_and_build NAME [cmake -D...]: configure and build $tmp/NAME; its output in $tmp/NAME.log
configure_and_build() {
  b=$tmp/$1; shift
  cmake -S "$src" -B "$b" -DCMAKE_Fortran_COMPILER="$fc" "$@" > "$b.log" 2>&1 && cmake --build "$b" >> "$b.log" 2>&1
}

# 1. the default root: the wrfgpu tree apply.sh came from
if configure_and_build default; then
  out=$(env -u LD_LIBRARY_PATH WRFGPU_RADM2SORG=0 "$tmp/default/main/wrf" 2>&1)
  case "$out" in
    *"wrf: RUN_ON_GPU"*"core: RUN_ON_GPU, wrfgpu_radm2sorg_on() = F"*)
      ok "default root: RUN_ON_GPU in WRF_Core and wrf, the wrfgpu module found, wrf linked with libwrfgpu.a and runs" ;;
    *) bad "default root: wrf printed: $out" ;;
  esac
  grep -q "wrfgpu: RUN_ON_GPU, libwrfgpu: $root/lib/libwrfgpu.a" "$tmp/default.log" \
    && ok "cmake says: wrfgpu: RUN_ON_GPU, libwrfgpu: <repo>/lib/libwrfgpu.a" || bad "no 'wrfgpu: RUN_ON_GPU' line in cmake's output"
  if [ "$(sed -n 's/^CUDA *= *//p' configure.wrfgpu 2>/dev/null)" = 1 ]; then
    home=$(sed -n 's/^CUDA_HOME *= *//p' configure.wrfgpu)
    rp=$(readelf -d "$tmp/default/main/wrf" 2>/dev/null | grep -E 'RUNPATH|RPATH')
    case "$rp" in
      *"$home/lib64"*) ok "CUDA library: wrf has the run path $home/lib64" ;;
      *) bad "CUDA library: no run path $home/lib64 in wrf ($rp)" ;;
    esac
    readelf -d "$tmp/default/main/wrf" | grep -q 'NEEDED.*libcudart' && ok "wrf needs libcudart" || bad "wrf does not link libcudart"
  fi
else
  bad "default root: cmake failed:"; tail -20 "$tmp/default.log"
fi

# 2. WRFGPU_ROOT at a make-install prefix: its package file (find_package(wrfgpu CONFIG)), the
#    archive wrfgpu::wrfgpu_static; configured again, the same
pre=$tmp/prefix
if ! ${MAKE:-make} --no-print-directory install PREFIX="$pre" > "$tmp/install.log" 2>&1; then
  tail -20 "$tmp/install.log"; bad "make install PREFIX=$pre"
fi
static_ok() {   # static_ok BUILD WHAT: wrf of BUILD runs through RUN_ON_GPU without libwrfgpu.so
  out=$(env -u LD_LIBRARY_PATH "$1/main/wrf" 2>&1)
  case "$out" in *"core: RUN_ON_GPU, wrfgpu_radm2sorg_on() = T"*) ok "$2: wrf runs" ;;
    *) bad "$2: wrf printed: $out" ;; esac
  readelf -d "$1/main/wrf" | grep -q 'NEEDED.*libwrfgpu' && bad "$2: wrf needs libwrfgpu.so (not the archive)" \
    || ok "$2: the archive is linked (no libwrfgpu.so needed)"
}
pkgline="wrfgpu: RUN_ON_GPU, libwrfgpu: package $pre/lib/cmake/wrfgpu (wrfgpu::wrfgpu_static)"
if configure_and_build bypkg -DWRFGPU_ROOT="$pre"; then
  grep -qF "$pkgline" "$tmp/bypkg.log" && ok "WRFGPU_ROOT=<make install prefix>: find_package(wrfgpu CONFIG) takes its package, wrfgpu::wrfgpu_static" \
    || { bad "WRFGPU_ROOT=<prefix>: package not used:"; grep wrfgpu "$tmp/bypkg.log"; }
  static_ok "$tmp/bypkg" "WRFGPU_ROOT=<prefix>"
  grep -q 'CMake Warning' "$tmp/bypkg.log" && { bad "WRFGPU_ROOT=<prefix>: cmake warned:"; sed -n '/CMake Warning/,/^$/p' "$tmp/bypkg.log"; }
  if cmake "$tmp/bypkg" > "$tmp/bypkg2.log" 2>&1 && grep -qF "$pkgline" "$tmp/bypkg2.log"; then
    ok "configured again: the same package"
  else
    bad "configured again: package lost:"; grep -i 'wrfgpu\|error' "$tmp/bypkg2.log" | head -5
  fi
else
  bad "WRFGPU_ROOT=<prefix>: cmake failed:"; tail -20 "$tmp/bypkg.log"
fi

# 3. wrfgpu_DIR named by the user (WRFGPU_ROOT empty): that package, not the default root; again
if configure_and_build bydir -Dwrfgpu_DIR="$pre/lib/cmake/wrfgpu" && grep -qF "$pkgline" "$tmp/bydir.log" \
   && cmake "$tmp/bydir" > "$tmp/bydir2.log" 2>&1 && grep -qF "$pkgline" "$tmp/bydir2.log"; then
  ok "wrfgpu_DIR=<prefix>/lib/cmake/wrfgpu: find_package takes it (and again when configured again)"
  static_ok "$tmp/bydir" "wrfgpu_DIR"
else
  bad "wrfgpu_DIR: not used:"; grep -i 'wrfgpu\|error' "$tmp/bydir.log" "$tmp/bydir2.log" | head -5
fi

# 3b. the prefix without its package file: lib/libwrfgpu.a and the modules in lib/wrfgpu/mod
rm -rf "$pre/lib/cmake"
if configure_and_build byroot -DWRFGPU_ROOT="$pre"; then
  grep -q "wrfgpu: RUN_ON_GPU, libwrfgpu: $pre/lib/libwrfgpu.a" "$tmp/byroot.log" \
    && ok "WRFGPU_ROOT=<prefix without package file>: lib/libwrfgpu.a, modules from lib/wrfgpu/mod" \
    || { bad "WRFGPU_ROOT=<prefix without package file>:"; grep wrfgpu "$tmp/byroot.log"; }
  static_ok "$tmp/byroot" "WRFGPU_ROOT=<prefix without package file>"
else
  bad "WRFGPU_ROOT=<prefix without package file>: cmake failed:"; tail -20 "$tmp/byroot.log"
fi

# 4. USE_WRFGPU=OFF: no RUN_ON_GPU, no library
if configure_and_build off -DUSE_WRFGPU=OFF; then
  out=$("$tmp/off/main/wrf" 2>&1)
  case "$out" in
    *"wrf: RUN_ON_GPU"*|*"core: RUN_ON_GPU"*) bad "USE_WRFGPU=OFF: still RUN_ON_GPU: $out" ;;
    *"core: stock"*) ok "USE_WRFGPU=OFF: no RUN_ON_GPU" ;;
    *) bad "USE_WRFGPU=OFF: wrf printed: $out" ;;
  esac
  grep -rq 'libwrfgpu' "$tmp/off/main/CMakeFiles/wrf.dir/link.txt" && bad "USE_WRFGPU=OFF: libwrfgpu still linked" \
    || ok "USE_WRFGPU=OFF: libwrfgpu not linked"
else
  bad "USE_WRFGPU=OFF: cmake failed:"; tail -20 "$tmp/off.log"
fi

# 5. refusals at configure time
if cmake -S "$src" -B "$tmp/noroot" -DCMAKE_Fortran_COMPILER="$fc" -DWRFGPU_ROOT="$tmp/nowhere" > "$tmp/noroot.log" 2>&1; then
  bad "WRFGPU_ROOT without wrfgpu: cmake did not stop"
else
  grep -q "wrfgpu: no wrfgpu in $tmp/nowhere" "$tmp/noroot.log" && ok "WRFGPU_ROOT without wrfgpu: cmake stops and says so" \
    || { bad "WRFGPU_ROOT without wrfgpu: other error:"; tail -5 "$tmp/noroot.log"; }
fi
mkdir -p "$tmp/nopkg"
if cmake -S "$src" -B "$tmp/baddir" -DCMAKE_Fortran_COMPILER="$fc" -Dwrfgpu_DIR="$tmp/nopkg" > "$tmp/baddir.log" 2>&1; then
  bad "wrfgpu_DIR without a package file: cmake did not stop"
else
  grep -q "wrfgpu: wrfgpu_DIR=$tmp/nopkg has no wrfgpuConfig.cmake" "$tmp/baddir.log" \
    && ok "wrfgpu_DIR without a package file: cmake stops, naming the folder and wrfgpuConfig.cmake" \
    || { bad "wrfgpu_DIR without a package file: other error:"; tail -8 "$tmp/baddir.log"; }
fi
if cmake -S "$src" -B "$tmp/xeon" -DCMAKE_Fortran_COMPILER="$fc" -DWRF_ARCH_LOCAL="NONSTANDARD_SYSTEM_SUBR XEON_OPTIMIZED_WSM5" > "$tmp/xeon.log" 2>&1; then
  bad "XEON_OPTIMIZED_WSM5 stanza: cmake did not stop"
else
  grep -q "wrfgpu: the stanza defines XEON_OPTIMIZED_WSM5" "$tmp/xeon.log" \
    && ok "XEON_OPTIMIZED_WSM5 stanza: cmake stops" || { bad "XEON stanza: other error:"; tail -5 "$tmp/xeon.log"; }
fi
exit $rc
