# wrfgpu.cmake: added to WRF's cmake/ by wrfgpu's wrf_patch/apply.sh --cmake (--revert removes it)
#
# WRF's CMake build (configure_new / compile_new) with wrfgpu. apply.sh adds one marked line,
# include( wrfgpu ), to WRF's top CMakeLists.txt, just before "Accumulate option and definitions";
# this file then
#   - adds RUN_ON_GPU to WRF's compile definitions (PROJECT_COMPILE_DEFINITIONS_OPTIONS, so every
#     WRF target that uses WRF's definitions gets it, as ARCH_LOCAL does in the classic build);
#   - finds libwrfgpu: find_package( wrfgpu CONFIG ) when an installed package is there (make
#     install's lib/cmake/wrfgpu; its target wrfgpu::wrfgpu_static, the archive), else the static
#     library and Fortran modules of a wrfgpu build tree (WRFGPU_ROOT/lib/libwrfgpu.a,
#     WRFGPU_ROOT/include/*.mod) or install prefix (the modules in WRFGPU_ROOT/lib/wrfgpu/mod);
#   - links the archive to WRF_Core (PUBLIC: wrf, ideal, real get it and its Fortran module
#     directory), with the CUDA runtime (with a run path), libstdc++ and libgomp.
#
# Settings (cache variables; give them to configure_new after --, e.g.
#   ./configure_new -p GNU -x -- -DWRF_CORE=ARW -DWRF_NESTING=BASIC -DWRF_CASE=EM_REAL -DUSE_MPI=ON -DWRFGPU_ROOT=/opt/wrfgpu
# or to cmake in the build directory: cmake -DWRFGPU_ROOT=... _build):
#   WRFGPU_ROOT  wrfgpu build tree or install prefix; empty: the tree apply.sh came from (below)
#   wrfgpu_DIR   folder of an installed wrfgpuConfig.cmake (standard find_package; used when
#                WRFGPU_ROOT is empty and set)
#   USE_WRFGPU   ON (default): RUN_ON_GPU and libwrfgpu; OFF: neither (the patched sources then
#                compile to stock WRF)

# the wrfgpu tree apply.sh was run from (apply.sh writes it; WRFGPU_ROOT overrides it)
set( WRFGPU_APPLY_ROOT "@WRFGPU_APPLY_ROOT@" )

set( USE_WRFGPU  ON CACHE BOOL "USE_WRFGPU" )
set( WRFGPU_ROOT "" CACHE PATH "wrfgpu build tree or install prefix (lib/libwrfgpu.a, include/*.mod); empty: ${WRFGPU_APPLY_ROOT}" )

if ( NOT ${USE_WRFGPU} )
  message( STATUS "wrfgpu: USE_WRFGPU=OFF: no RUN_ON_GPU, libwrfgpu not linked" )
  return()
endif()
unset( WRFGPU_FROM )

# -DXEON_OPTIMIZED_WSM5 (configure.defaults' "Xeon (SNB with AVX mods)" stanzas) calls wsm5 before
# the tile loop: with RUN_ON_GPU WSM5 would run twice (the patched driver stops with #error)
string( REGEX MATCH "(^|[^A-Za-z0-9_])XEON_OPTIMIZED_WSM5([^A-Za-z0-9_]|$)" WRFGPU_XEON
        "${PROJECT_COMPILE_DEFINITIONS_STANZA};${PROJECT_COMPILE_DEFINITIONS_OPTIONS}" )
if ( WRFGPU_XEON )
  message( FATAL_ERROR "wrfgpu: the stanza defines XEON_OPTIMIZED_WSM5, which cannot be combined with RUN_ON_GPU "
                       "(WSM5 would run twice); choose another stanza, or configure with -DUSE_WRFGPU=OFF" )
endif()

# where: WRFGPU_ROOT if set; else a wrfgpu_DIR the user gave (not one found here under a root);
# else the tree apply.sh came from
if ( NOT "${WRFGPU_ROOT}" STREQUAL "" )
  set( WRFGPU_USE_ROOT "${WRFGPU_ROOT}" )
elseif( wrfgpu_DIR AND NOT "${wrfgpu_DIR}" STREQUAL "${WRFGPU_DIR_FROM_ROOT}" )
  set( WRFGPU_USE_ROOT "" )
else()
  set( WRFGPU_USE_ROOT "${WRFGPU_APPLY_ROOT}" )
endif()

# another root than last time: forget the package file found under the old one
if ( NOT "${WRFGPU_USE_ROOT}" STREQUAL "" AND DEFINED WRFGPU_ROOT_FOUND_FROM
     AND NOT "${WRFGPU_ROOT_FOUND_FROM}" STREQUAL "${WRFGPU_USE_ROOT}" )
  unset( wrfgpu_DIR CACHE )
endif()
set( WRFGPU_ROOT_FOUND_FROM "${WRFGPU_USE_ROOT}" CACHE INTERNAL "" )

if ( "${WRFGPU_USE_ROOT}" STREQUAL "" )
  # a wrfgpu_DIR the user named: say which folder lacks the package file (find_package would not)
  if ( NOT EXISTS "${wrfgpu_DIR}/wrfgpuConfig.cmake" AND NOT EXISTS "${wrfgpu_DIR}/wrfgpu-config.cmake" )
    message( FATAL_ERROR "wrfgpu: wrfgpu_DIR=${wrfgpu_DIR} has no wrfgpuConfig.cmake (make install PREFIX=P "
                         "writes it to P/lib/cmake/wrfgpu); set wrfgpu_DIR to that folder, or WRFGPU_ROOT to a "
                         "wrfgpu build tree or install prefix" )
  endif()
  find_package( wrfgpu CONFIG REQUIRED )
else()
  find_package( wrfgpu CONFIG QUIET PATHS "${WRFGPU_USE_ROOT}" NO_DEFAULT_PATH )
  set( WRFGPU_DIR_FROM_ROOT "${wrfgpu_DIR}" CACHE INTERNAL "" )
  if ( wrfgpu_FOUND )
  elseif( EXISTS "${WRFGPU_USE_ROOT}/lib/libwrfgpu.a" )
    # a build tree (./configure && make lib) or a prefix of make install without a package file
    set( WRFGPU_LIB "${WRFGPU_USE_ROOT}/lib/libwrfgpu.a" )   # the archive, never libwrfgpu.so
    set( WRFGPU_MOD_DIR "${WRFGPU_USE_ROOT}/include" )       # build tree
    if ( EXISTS "${WRFGPU_USE_ROOT}/lib/wrfgpu/mod/module_wrfgpu_wsm5.mod" )
      set( WRFGPU_MOD_DIR "${WRFGPU_USE_ROOT}/lib/wrfgpu/mod" ) # install prefix
    endif()
    if ( NOT EXISTS "${WRFGPU_MOD_DIR}/module_wrfgpu_wsm5.mod" )
      message( FATAL_ERROR "wrfgpu: ${WRFGPU_MOD_DIR}/module_wrfgpu_wsm5.mod not found (build wrfgpu: ./configure && make lib)" )
    endif()
    # built with CUDA? configure.wrfgpu says so in a build tree; else the archive's symbols
    set( WRFGPU_CUDA 0 )
    set( WRFGPU_CUDA_HOME /usr/local/cuda )
    if ( EXISTS "${WRFGPU_USE_ROOT}/configure.wrfgpu" )
      file( STRINGS "${WRFGPU_USE_ROOT}/configure.wrfgpu" WRFGPU_CF_CUDA      REGEX "^CUDA *=" )
      file( STRINGS "${WRFGPU_USE_ROOT}/configure.wrfgpu" WRFGPU_CF_CUDA_HOME REGEX "^CUDA_HOME *=" )
      string( REGEX REPLACE "^CUDA *= *" "" WRFGPU_CUDA "${WRFGPU_CF_CUDA}" )
      string( REGEX REPLACE "^CUDA_HOME *= *" "" WRFGPU_CF_CUDA_HOME "${WRFGPU_CF_CUDA_HOME}" )
      string( STRIP "${WRFGPU_CUDA}" WRFGPU_CUDA )
      string( STRIP "${WRFGPU_CF_CUDA_HOME}" WRFGPU_CF_CUDA_HOME )
      if ( NOT "${WRFGPU_CF_CUDA_HOME}" STREQUAL "" )
        set( WRFGPU_CUDA_HOME "${WRFGPU_CF_CUDA_HOME}" )
      endif()
    elseif( CMAKE_NM )
      execute_process( COMMAND ${CMAKE_NM} -u "${WRFGPU_LIB}" OUTPUT_VARIABLE WRFGPU_NM ERROR_QUIET )
      if ( "${WRFGPU_NM}" MATCHES "[ \t]cuda[A-Z]" )
        set( WRFGPU_CUDA 1 )
      endif()
    endif()
    set( WRFGPU_LINK "" )
    if ( "${WRFGPU_CUDA}" STREQUAL "1" )
      find_library( WRFGPU_CUDART NAMES cudart PATHS "${WRFGPU_CUDA_HOME}/lib64" "${WRFGPU_CUDA_HOME}/lib" NO_DEFAULT_PATH )
      if ( NOT WRFGPU_CUDART )
        message( FATAL_ERROR "wrfgpu: libwrfgpu.a was built with CUDA but libcudart is not in ${WRFGPU_CUDA_HOME}/lib64" )
      endif()
      get_filename_component( WRFGPU_CUDART_DIR "${WRFGPU_CUDART}" DIRECTORY )
      # by full path, and a run path: wrf.exe finds libcudart without LD_LIBRARY_PATH
      list( APPEND WRFGPU_LINK "${WRFGPU_CUDART}" "-Wl,-rpath,${WRFGPU_CUDART_DIR}" )
    endif()
    list( APPEND WRFGPU_LINK "$<TARGET_NAME_IF_EXISTS:netCDF::netcdf>" stdc++ gomp )
    add_library( wrfgpu::wrfgpu_static STATIC IMPORTED )
    set_target_properties( wrfgpu::wrfgpu_static
                           PROPERTIES
                             IMPORTED_LOCATION             "${WRFGPU_LIB}"
                             INTERFACE_INCLUDE_DIRECTORIES "${WRFGPU_MOD_DIR}"
                             INTERFACE_LINK_LIBRARIES      "${WRFGPU_LINK}"
                           )
    set( WRFGPU_FROM "${WRFGPU_LIB}" )
  else()
    message( FATAL_ERROR "wrfgpu: no wrfgpu in ${WRFGPU_USE_ROOT}: neither lib/cmake/wrfgpu/wrfgpuConfig.cmake "
                         "nor lib/libwrfgpu.a (build wrfgpu there: ./configure && make lib; or set WRFGPU_ROOT "
                         "to a wrfgpu build tree or install prefix)" )
  endif()
endif()

# the archive, as the classic build links it (the package's wrfgpu::wrfgpu is libwrfgpu.so)
set( WRFGPU_LINK_EXTRA "" )
if ( TARGET wrfgpu::wrfgpu_static )
  set( WRFGPU_TARGET wrfgpu::wrfgpu_static )
elseif( TARGET wrfgpu::wrfgpu )
  set( WRFGPU_TARGET wrfgpu::wrfgpu )
else()
  message( FATAL_ERROR "wrfgpu: the wrfgpu package (${wrfgpu_DIR}) defines neither wrfgpu::wrfgpu_static nor wrfgpu::wrfgpu" )
endif()
if ( NOT DEFINED WRFGPU_FROM )
  set( WRFGPU_FROM "package ${wrfgpu_DIR} (${WRFGPU_TARGET})" )
  if ( wrfgpu_CUDART_LIBRARY )   # the package's libcudart: a run path to it, as apply.sh gives
    get_filename_component( WRFGPU_CUDART_DIR "${wrfgpu_CUDART_LIBRARY}" DIRECTORY )
    set( WRFGPU_LINK_EXTRA "-Wl,-rpath,${WRFGPU_CUDART_DIR}" )
  endif()
endif()

list( APPEND PROJECT_COMPILE_DEFINITIONS_OPTIONS RUN_ON_GPU )

# WRF_Core exists only further down WRF's CMakeLists.txt: link it at the end of that file
function( wrfgpu_link_wrf_core )
  target_link_libraries( ${PROJECT_NAME}_Core PUBLIC ${WRFGPU_TARGET} ${WRFGPU_LINK_EXTRA} )
endfunction()
cmake_language( DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL wrfgpu_link_wrf_core )

message( STATUS "wrfgpu: RUN_ON_GPU, libwrfgpu: ${WRFGPU_FROM}" )
