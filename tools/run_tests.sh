#!/bin/sh
# run_tests.sh - the test command on a fresh machine: install what is missing, configure,
# build, run every test; ends with "N passed, N failed".
set -e
cd "$(dirname "$0")/.."
sh tools/install_deps.sh
[ -f configure.wrfgpu ] || ./configure "$@"
make -j"$(nproc)" check
