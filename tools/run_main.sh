#!/bin/sh
# run_main.sh - the main job on a fresh machine: install what is missing, configure, build,
# and replay the bundled WRF captures through wrfgpu (GPU if one is visible, else CPU),
# printing the verification table against WRF's own outputs and the timing table.
# Extra arguments go to wrfgpu_replay (e.g. --backend both --mode fast --plot plots).
set -e
cd "$(dirname "$0")/.."
sh tools/install_deps.sh
[ -f configure.wrfgpu ] || ./configure
make -j"$(nproc)"
# The captures from WRF runs (supercell, squall line, WRF-Chem supercell chemistry) and the
# RADM2SORG harness references;
# the synthetic reference cases are for the tests.
set -- $(ls test_data/quarter_ss_*.nc test_data/squall2d_x_*.nc test_data/radm2sorg_*.nc 2>/dev/null) "$@"
exec bin/wrfgpu_replay "$@"
