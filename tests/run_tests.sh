#!/bin/sh
# run_tests.sh - runs every test of the project and ends with "N passed, N failed".
#   GoogleTest suites (bin/wrfgpu_tests): CPU tests always; GPU tests run when a GPU is
#   visible and are reported as skipped (with why) otherwise.
#   Fortran programs (bin/test_*_fortran): link the library through the Fortran bindings.
#   Driver checks (tests/driver/*.sh): the replay driver on the bundled captures and on bad
#   input.
#   Install checks (tests/install/*.sh): make install into a temporary prefix, and a C++ and a
#   Fortran program built against it through pkg-config and through CMake find_package.
cd "$(dirname "$0")/.." || exit 2
passed=0; failed=0; skipped=0
log=$(mktemp)

if [ -x bin/wrfgpu_tests ]; then
  bin/wrfgpu_tests --gtest_brief=0 > "$log" 2>&1
  cat "$log"
  p=$(grep -c '^\[       OK \]' "$log"); f=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$log" )
  # gtest repeats the failed list at the end: count unique failed names
  f=$(grep '^\[  FAILED  \] [A-Za-z].*(' "$log" | sed 's/ (.*//' | sort -u | wc -l)
  s=$(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$log")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if ! grep -q '^\[  PASSED  \]' "$log" && [ "$f" -eq 0 ]; then
    echo "wrfgpu_tests did not finish"; failed=$((failed + 1))
  fi
else
  echo "bin/wrfgpu_tests missing"; failed=$((failed + 1))
fi

# One program per test_*_fortran.F90 in fortran_iface/tests/ and src/*/tests/ (make check
# builds them): a missing one is a failure, not a test left out.
for src in fortran_iface/tests/test_*_fortran.F90 src/*/tests/test_*_fortran.F90; do
  [ -f "$src" ] || continue
  t=bin/$(basename "$src" .F90)
  echo "== $t"
  if [ ! -x "$t" ]; then echo "FAILED: $t was not built (make check builds it)"; failed=$((failed + 1)); continue; fi
  if "$t"; then passed=$((passed + 1)); else echo "FAILED: $t"; failed=$((failed + 1)); fi
done

# Driver and install checks: exit 0 passed, 77 skipped (what they need is not here, e.g. a
# GPU), else failed.
for t in tests/driver/*.sh tests/install/*.sh; do
  [ -f "$t" ] || continue
  echo "== $t"
  sh "$t"; rc=$?
  case $rc in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    *) echo "FAILED: $t"; failed=$((failed + 1)) ;;
  esac
done
# The Python tools (tools/ect, the ensemble consistency test; tools/wrf_node_bench.py and
# tools/mps.sh): unittest, one count per test method, run with the python tools/ect/ect uses
# (Debian's, with numpy, scipy, netCDF4 and matplotlib).
py=""
for c in python3 /usr/bin/python3; do
  command -v "$c" >/dev/null 2>&1 && "$c" -c 'import numpy, scipy, netCDF4, matplotlib' 2>/dev/null && { py=$c; break; }
done
for t in tests/ect/test_*.py tests/tools/test_*.py; do
  [ -f "$t" ] || continue
  echo "== $t"
  if [ -z "$py" ]; then echo "FAILED: no python3 with numpy, scipy, netCDF4, matplotlib (tools/install_deps.sh)"; failed=$((failed + 1)); continue; fi
  "$py" -m unittest -v "$t" > "$log" 2>&1; rc=$?
  cat "$log"
  p=$(grep -c '\.\.\. ok$' "$log"); f=$(grep -c -E '\.\.\. (FAIL|ERROR)$' "$log")
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "FAILED: $t did not finish"; failed=$((failed + 1)); fi
done
rm -f "$log"
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
