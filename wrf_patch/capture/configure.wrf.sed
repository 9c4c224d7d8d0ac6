# sed -i -f wrf_patch/capture/configure.wrf.sed configure.wrf   (run after ./configure, before ./compile)
# 1. compile the patched WRF files with the capture hooks
/^ARCH_LOCAL *=/{
/WRFGPU_CAPTURE/!s/$/ -DWRFGPU_CAPTURE/
}
# 2. find module_wrfgpu_capture.mod
/^INCLUDE_MODULES *=/a\
                      -I$(WRF_SRC_ROOT_DIR)/wrfgpu_capture \\
# 3. link the capture writer (LIB = ... $(LIB_LOCAL) ...); NetCDF-Fortran is repeated after it
$a\
LIB_LOCAL       +=   -L$(WRF_SRC_ROOT_DIR)/wrfgpu_capture -lwrfgpu_capture -L$(NETCDFPATH)/lib -lnetcdff -lnetcdf
