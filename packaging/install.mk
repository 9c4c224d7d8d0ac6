# packaging/install.mk - public headers, make install and make uninstall (included by the
# Makefile, after configure.wrfgpu). What goes where, and why: docs/design.md, "What make
# install puts where".
#
#   PREFIX/lib/libwrfgpu.{a,so}
#   PREFIX/include/wrfgpu/            the public C++ headers (compile with -I PREFIX/include/wrfgpu)
#   PREFIX/lib/wrfgpu/mod/            the Fortran modules (.mod files of this build's gfortran)
#   PREFIX/lib/pkgconfig/wrfgpu.pc
#   PREFIX/lib/cmake/wrfgpu/          wrfgpuConfig.cmake, wrfgpuConfigVersion.cmake
#   PREFIX/bin/wrfgpu_replay          (and wrfgpu_bench when it was built)
#
# The package files are made from packaging/*.in at install time with this build's
# configure.wrfgpu values (CUDA, NetCDF, compilers), so nothing of the build machine is written
# by hand. DESTDIR stages the tree elsewhere; the files still name PREFIX.

# ---- the public C++ API -------------------------------------------------------------------
# The common headers a caller needs (errors it catches, the version, GPU queries and page-locked
# memory, the settings table), then each kernel's own: src/<k>/kernel.mk adds its API header and
# what that includes to PUBLIC_HEADERS, and its generated/ headers (kept in generated/ below
# include/wrfgpu) to PUBLIC_GENERATED. Physics, CUDA helpers, capture I/O and verification stay
# private. tests/install/layout.sh compiles every installed header alone against the installed
# tree, so a public header that starts to include a private one fails it.
PUBLIC_HEADERS := $(addprefix src/common/,version.h modes.h errors.h wrf_dims.h wrfgpu_hd.h device.h config.h)
PUBLIC_GENERATED :=
include $(sort $(wildcard src/*/kernel.mk))

# The build tree's include/wrfgpu/ is laid out as an install's (one folder, generated/ below
# it), so -I include/wrfgpu works on a build tree as -I PREFIX/include/wrfgpu on an install.
headers: $(PUBLIC_HEADERS) $(PUBLIC_GENERATED)
	@rm -rf include/wrfgpu
	@mkdir -p include/wrfgpu/generated
	@cp -p $(PUBLIC_HEADERS) include/wrfgpu/
	@cp -p $(PUBLIC_GENERATED) include/wrfgpu/generated/

# ---- values written into the package files ------------------------------------------------
WRFGPU_VERSION = $(shell sed -n 's/^\#define WRFGPU_VERSION "\(.*\)"/\1/p' src/common/version.h)
# An absolute prefix, whatever the command line gave (PREFIX=inst works from the repository root)
IPREFIX := $(abspath $(PREFIX))
DEST    := $(DESTDIR)$(IPREFIX)
# What the static archive needs after it (the shared library records these itself): NetCDF
# (the capture module), the Fortran and C++ runtimes, OpenMP's runtime (-lgomp for -fopenmp,
# so that a link by gfortran or g++ without -fopenmp works), libm, libdl, libpthread.
OPENMP_LIBS := $(if $(filter -fopenmp,$(OPENMP_FLAGS)),-lgomp,$(OPENMP_FLAGS))
STATIC_DEPS := $(strip $(NETCDFF_LIBS) $(NETCDF_LIBS) -lgfortran -lstdc++ $(OPENMP_LIBS) -lm -ldl -lpthread)
# The compiler that wrote the .mod files: gfortran's module format changes between releases,
# so a user's compiler must match (recorded; CMake warns on a different one).
FC_ID      = $(shell $(FC) --version 2>/dev/null | head -1 | grep -q '^GNU Fortran' && echo GNU || echo unknown)
FC_VERSION = $(shell $(FC) -dumpfullversion 2>/dev/null)
CUDA_HOME_ := $(if $(filter 1,$(CUDA)),$(CUDA_HOME),)

PKG_SUBST = sed -e 's|@PREFIX@|$(IPREFIX)|g' -e 's|@VERSION@|$(WRFGPU_VERSION)|g' \
  -e 's|@CUDA@|$(CUDA)|g' -e 's|@CUDA_HOME@|$(CUDA_HOME_)|g' -e 's|@CUDA_LIBS@|$(CUDA_LIBS)|g' \
  -e 's|@STATIC_DEPS@|$(STATIC_DEPS)|g' -e 's|@FC_ID@|$(FC_ID)|g' -e 's|@FC_VERSION@|$(FC_VERSION)|g'

# ---- install / uninstall ------------------------------------------------------------------
# Needs what it installs, nothing more (not `all`): on a built tree nothing is rebuilt.
# include/wrfgpu and lib/wrfgpu/mod are emptied first, so a header or module dropped since an
# earlier install does not stay behind; module_wrfgpu_*.mod left in PREFIX/include by installs
# before lib/wrfgpu/mod existed are removed (wrf_patch/apply.sh would otherwise find them).
install: lib bin/wrfgpu_replay
	@test -n "$(WRFGPU_VERSION)" || { echo "install: no WRFGPU_VERSION in src/common/version.h" >&2; exit 1; }
	rm -rf $(DEST)/include/wrfgpu $(DEST)/lib/wrfgpu/mod
	rm -f $(DEST)/include/module_wrfgpu_*.mod
	install -d $(DEST)/lib $(DEST)/bin $(DEST)/include/wrfgpu/generated $(DEST)/lib/wrfgpu/mod \
	  $(DEST)/lib/pkgconfig $(DEST)/lib/cmake/wrfgpu
	install -m 644 lib/libwrfgpu.a $(DEST)/lib/
	install -m 755 lib/libwrfgpu.so $(DEST)/lib/
	install -m 644 $(PUBLIC_HEADERS) $(DEST)/include/wrfgpu/
	install -m 644 $(PUBLIC_GENERATED) $(DEST)/include/wrfgpu/generated/
	install -m 644 include/*.mod $(DEST)/lib/wrfgpu/mod/
	install -m 755 bin/wrfgpu_replay $(DEST)/bin/
	@test ! -f bin/wrfgpu_bench || { echo "install -m 755 bin/wrfgpu_bench $(DEST)/bin/"; install -m 755 bin/wrfgpu_bench $(DEST)/bin/; }
	@for f in pkgconfig/wrfgpu.pc cmake/wrfgpu/wrfgpuConfig.cmake cmake/wrfgpu/wrfgpuConfigVersion.cmake; do \
	  echo "writing $(DEST)/lib/$$f from packaging/$${f##*/}.in"; \
	  $(PKG_SUBST) packaging/$${f##*/}.in > $(DEST)/lib/$$f || exit 1; done
	@echo "wrfgpu $(WRFGPU_VERSION) installed in $(DEST)"

# Removes what install wrote, and lib/pkgconfig and lib/cmake when that leaves them empty.
uninstall:
	rm -rf $(DEST)/include/wrfgpu $(DEST)/lib/wrfgpu $(DEST)/lib/cmake/wrfgpu
	rm -f $(DEST)/lib/libwrfgpu.a $(DEST)/lib/libwrfgpu.so $(DEST)/lib/pkgconfig/wrfgpu.pc \
	  $(DEST)/bin/wrfgpu_replay $(DEST)/bin/wrfgpu_bench $(DEST)/include/module_wrfgpu_*.mod
	@rmdir $(DEST)/lib/pkgconfig $(DEST)/lib/cmake 2>/dev/null || true
