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
set -- $(ls test_data/*.nc 2>/dev/null | grep -v -e '_ref' -e 'synthetic') "$@"
exec bin/wrfgpu_replay "$@"
