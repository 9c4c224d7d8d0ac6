# wrfgpu Makefile. Run ./configure first; it writes configure.wrfgpu.
#
#   make              lib/libwrfgpu.a, lib/libwrfgpu.so, include/, bin/wrfgpu_replay
#   make check        build and run the tests (CPU always, GPU when one is visible)
#   make bench        build and run bin/wrfgpu_bench (device ceilings, then every kernel;
#                     BENCH_ARGS=... passes options)
#   make install PREFIX=/opt/wrfgpu   [DESTDIR=STAGE]; make uninstall PREFIX=... removes it again
#   make mech MECH_DIR=$WRF_DIR/chem/KPP/mechanisms/<name>   generate a KPP mechanism
#
# Layout (docs/design.md, "Layout"): src/common and one folder per kernel under src/<k>/, with
# fortran/ (its Fortran bridge, in the library), replay/ (its replay adapter, in the driver
# programs), tests/ (its tests) and kernel.mk (its public headers); all found by wildcard. In
# each kernel folder, *_cpu.cpp and *_gpu.cu are compiled twice, in the strict and the fast
# numerical mode (-DWRFGPU_MODE_NS=strict|fast, see docs/design.md); every other source once.

ifeq ($(wildcard configure.wrfgpu),)
$(error configure.wrfgpu not found: run ./configure first)
endif
include configure.wrfgpu

BUILD   := build
KDIRS   := $(sort $(dir $(wildcard src/*/)))
INCS    := $(addprefix -I,$(KDIRS)) -Isrc -Ifortran_iface $(NETCDF_CFLAGS)
DEFS    := -DWRFGPU_HAVE_CUDA=$(CUDA)

CXXSTD      := -std=c++17
CXXFLAGS    ?= -O2 -g -ffp-contract=off
CXXBASE     := $(CXXSTD) -fPIC $(OPENMP_FLAGS) -Wall -Wno-unknown-pragmas $(DEFS) $(INCS)
# Strict CPU backends: the optimisation flags of WRF's own gfortran build (configure.wrf
# FCOPTIM: -O2 -ftree-vectorize -funroll-loops). Without -ffast-math the vectoriser keeps every
# operation and its order (no reassociation, no vector maths library), so results are the same
# bits; no FMA contraction, as WRF's x86-64 build.
CXX_STRICT  := -O2 -ftree-vectorize -funroll-loops -ffp-contract=off -fno-fast-math
CXX_FAST    := -O3 -ffast-math
NVCCBASE    := $(CXXSTD) $(CUDA_GENCODE) -Xcompiler -fPIC,$(OPENMP_FLAGS) -lineinfo $(DEFS) $(INCS)
NVCC_STRICT := -O3 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false
# Fast mode keeps IEEE division: with nvcc's approximate division (-prec-div=false, part of
# --use_fast_math) WSM5 warms the model's theta by 6e-6 relative in 18 minutes of em_quarter_ss,
# 130 stock-ensemble deviations, and patched WRF fails the ensemble consistency test; with
# -prec-div=true it passes (docs/validation.md, "Ensemble consistency").
NVCC_FAST   := -O3 --use_fast_math -prec-div=true
FFLAGS      ?= -O2 -g
FFLAGS_ALL  := $(FFLAGS) -fPIC -ffree-line-length-none -Jinclude $(NETCDFF_FFLAGS)

# ---- sources ------------------------------------------------------------------------------
MODE_CPP := $(filter-out src/common/%,$(wildcard src/*/*_cpu.cpp))
MODE_CU  := $(filter-out src/common/%,$(wildcard src/*/*_gpu.cu))
NOCUDA_CPP := $(wildcard src/*/*_none.cpp)
ONCE_CPP := $(filter-out $(MODE_CPP) $(NOCUDA_CPP),$(wildcard src/*/*.cpp))
ONCE_CU  := $(filter-out $(MODE_CU),$(wildcard src/*/*.cu))
IFACE_CPP := $(wildcard fortran_iface/*.cpp src/*/fortran/*.cpp)
IFACE_F90 := $(wildcard fortran_iface/*.F90 src/*/fortran/*.F90)

OBJ := $(ONCE_CPP:%.cpp=$(BUILD)/%.o) \
       $(foreach m,strict fast,$(MODE_CPP:%.cpp=$(BUILD)/%_$(m).o)) \
       $(IFACE_CPP:%.cpp=$(BUILD)/%.o) $(IFACE_F90:%.F90=$(BUILD)/%.o)
ifeq ($(CUDA),1)
OBJ += $(ONCE_CU:%.cu=$(BUILD)/%.o) $(foreach m,strict fast,$(MODE_CU:%.cu=$(BUILD)/%_$(m).o))
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
else
OBJ += $(NOCUDA_CPP:%.cpp=$(BUILD)/%.o)
CUDA_LIBS :=
endif

LIBS := $(CUDA_LIBS) $(NETCDFF_LIBS) $(NETCDF_LIBS) -lgfortran $(OPENMP_FLAGS) -lm -ldl -lpthread

# The driver's pieces (replay adapters, reports, large cases) are shared by the three programs.
DRIVER_LIB := $(filter-out standalone_driver/main.cpp standalone_driver/wrfgpu_bench.cpp,$(wildcard standalone_driver/*.cpp)) \
              $(wildcard src/*/replay/*.cpp)
DRIVER_SRC := standalone_driver/main.cpp $(DRIVER_LIB)
BENCH_SRC  := standalone_driver/wrfgpu_bench.cpp $(DRIVER_LIB)
TEST_SRC   := $(wildcard tests/*.cpp tests/*/*.cpp src/*/tests/*.cpp)
FTEST_SRC  := $(wildcard fortran_iface/tests/*.F90 src/*/tests/*.F90)

HEADERS := $(wildcard src/*/*.h src/*/*/*.h tests/*.h tests/*/*.h standalone_driver/*.h fortran_iface/*.h)

.PHONY: all lib headers check check-cpu bench install uninstall clean distclean mech
all: lib bin/wrfgpu_replay bin/wrfgpu_make_large_case

lib: lib/libwrfgpu.a lib/libwrfgpu.so headers

# ---- compile rules ------------------------------------------------------------------------
# Header dependencies are coarse on purpose: any header change rebuilds, so a stale object
# can never hide a change in shared physics; so does a change of this file's compiler flags.
$(BUILD)/%.o: %.cpp $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(CXX) $(CXXBASE) $(CXXFLAGS) -c $< -o $@
$(BUILD)/%_strict.o: %.cpp $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(CXX) $(CXXBASE) $(CXX_STRICT) -g -DWRFGPU_MODE_NS=strict -c $< -o $@
$(BUILD)/%_fast.o: %.cpp $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(CXX) $(CXXBASE) $(CXX_FAST) -g -DWRFGPU_MODE_NS=fast -c $< -o $@
$(BUILD)/%.o: %.cu $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCBASE) -O3 -c $< -o $@
$(BUILD)/%_strict.o: %.cu $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCBASE) $(NVCC_STRICT) -DWRFGPU_MODE_NS=strict -c $< -o $@
$(BUILD)/%_fast.o: %.cu $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCBASE) $(NVCC_FAST) -DWRFGPU_MODE_NS=fast -c $< -o $@
# Fortran modules: .mod files go to include/ for WRF and the Fortran tests (make install puts
# them in PREFIX/lib/wrfgpu/mod).
$(BUILD)/%.o: %.F90 configure.wrfgpu
	@mkdir -p $(dir $@) include
	$(FC) $(FFLAGS_ALL) -c $< -o $@
# The kernels' modules use module_wrfgpu_host (wrfgpu_bridge_stop; advection's batch store is
# page-locked through it)
$(BUILD)/src/advection/fortran/module_wrfgpu_advect.o $(BUILD)/src/radm2sorg/fortran/module_wrfgpu_radm2sorg.o \
  $(BUILD)/src/wsm5/fortran/module_wrfgpu_wsm5.o: $(BUILD)/fortran_iface/module_wrfgpu_host.o

# ---- library ------------------------------------------------------------------------------
lib/libwrfgpu.a: $(OBJ)
	@mkdir -p lib
	rm -f $@
	ar rcs $@ $(OBJ)
lib/libwrfgpu.so: $(OBJ)
	@mkdir -p lib
	$(CXX) -shared -o $@ $(OBJ) $(LIBS)

# headers (include/wrfgpu/: the public headers, laid out as an install has them), install and
# uninstall: packaging/install.mk (included at the end of this file).

# ---- programs -----------------------------------------------------------------------------
# Programs share lib/libwrfgpu.so (one copy of the GPU code) and find it next to them
# (rpath $ORIGIN/../lib), so bin/ and lib/ can be moved together. WRF links the static library.
WRFGPU_LINK := -Llib -lwrfgpu -Wl,-rpath,'$$ORIGIN/../lib'

bin/wrfgpu_replay: $(DRIVER_SRC) $(HEADERS) lib/libwrfgpu.so
	@mkdir -p bin
	$(MPICXX) $(CXXBASE) $(CXXFLAGS) -Istandalone_driver $(DRIVER_SRC) -o $@ $(WRFGPU_LINK) $(LIBS)

bin/wrfgpu_bench: $(BENCH_SRC) $(HEADERS) lib/libwrfgpu.so
	@mkdir -p bin
	$(MPICXX) $(CXXBASE) $(CXXFLAGS) -Istandalone_driver $(BENCH_SRC) -o $@ $(WRFGPU_LINK) $(LIBS)

bin/wrfgpu_make_large_case: tools/make_large_case.cpp $(DRIVER_LIB) $(HEADERS) lib/libwrfgpu.so
	@mkdir -p bin
	$(MPICXX) $(CXXBASE) $(CXXFLAGS) -Istandalone_driver $< $(DRIVER_LIB) -o $@ $(WRFGPU_LINK) $(LIBS)

# Device tests (src/*/tests/*.cu: the physics run on the GPU and on the host, compared bitwise),
# in CUDA builds only: nvcc with the strict GPU flags and the library's gencode, the host half
# without FMA contraction or fast math either; linked into bin/wrfgpu_tests.
ifeq ($(CUDA),1)
TEST_CU_OBJ := $(patsubst %.cu,$(BUILD)/%.o,$(wildcard src/*/tests/*.cu))
$(TEST_CU_OBJ): $(BUILD)/%.o: %.cu $(HEADERS) configure.wrfgpu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCBASE) $(NVCC_STRICT) -Xcompiler -ffp-contract=off,-fno-fast-math -DWRFGPU_MODE_NS=strict -Itests -DWRFGPU_SOURCE_DIR='"$(CURDIR)"' -c $< -o $@
endif

bin/wrfgpu_tests: $(TEST_SRC) $(TEST_CU_OBJ) $(HEADERS) lib/libwrfgpu.so
	@mkdir -p bin
	$(CXX) $(CXXBASE) $(CXXFLAGS) -Itests -DWRFGPU_SOURCE_DIR='"$(CURDIR)"' $(TEST_SRC) $(TEST_CU_OBJ) -o $@ $(WRFGPU_LINK) -lgtest -lgtest_main $(LIBS)

# Helpers shared by the Fortran test programs (their .mod stays in build/, out of include/).
FTEST_SUPPORT := build/fortran_iface/tests/wrfgpu_test_gpu.o
$(FTEST_SUPPORT): fortran_iface/tests/support/wrfgpu_test_gpu.F90
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -fPIC -ffree-line-length-none -J$(@D) -c $< -o $@

# bin/<name>_fortran from <name>_fortran.F90 in fortran_iface/tests/ or any src/<k>/tests/.
vpath %_fortran.F90 $(sort $(dir $(FTEST_SRC)))
bin/%_fortran: %_fortran.F90 $(FTEST_SUPPORT) lib/libwrfgpu.so
	@mkdir -p bin
	$(FC) $(FFLAGS_ALL) -I$(dir $(FTEST_SUPPORT)) $< $(FTEST_SUPPORT) -o $@ $(WRFGPU_LINK) -lstdc++ $(LIBS)

FTEST_BIN := $(addprefix bin/,$(basename $(notdir $(FTEST_SRC))))

# Runs the benchmark (device ceilings, then every kernel on GPU and CPU); BENCH_ARGS passes
# options, e.g. BENCH_ARGS="--quick --kernels wsm5".
# OMP_WAIT_POLICY=active (unless set): the host side of the GPU calls runs in OpenMP regions
# between waits on the GPU, and waking sleeping threads is slow on some hosts (docs/performance.md).
bench: bin/wrfgpu_bench
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-active} bin/wrfgpu_bench $(BENCH_ARGS)

check: all bin/wrfgpu_tests bin/wrfgpu_bench $(FTEST_BIN)
	@sh tests/run_tests.sh

mech:
	@test -n "$(MECH_DIR)" || { echo "make mech: set MECH_DIR=<folder with the .kpp/.spc/.eqn files>"; exit 2; }
	python3 tools/kpp_gen/kpp_gen.py --mech-dir "$(MECH_DIR)" --out src/$$(basename $(MECH_DIR))/generated

clean:
	rm -rf $(BUILD) lib bin include

distclean: clean
	rm -f configure.wrfgpu

# make install [PREFIX=DIR] [DESTDIR=STAGE], make uninstall: the library, its public headers,
# Fortran modules, pkg-config and CMake package files (docs/design.md, "What make install puts
# where"). Kept in its own file: the objects depend on this Makefile, not on it.
include packaging/install.mk
