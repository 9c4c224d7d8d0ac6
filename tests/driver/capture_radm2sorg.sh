#!/bin/sh
# Capture mode, RADM2SORG writer: the routine the chem_driver.F hook calls
# (wrf_patch/capture/0003-radm2sorg-capture.patch) writes a file that holds exactly what it was given
# (bin/capture_radm2sorg_fortran reads it back), under the name WRFGPU_CAPTURE_* ask for, that
# follows the capture format (check_capture.py) and that the replay driver accepts and
# reproduces (CPU backend, strict mode).
cd "$(dirname "$0")/../.." || exit 2
src=test_data/radm2sorg_warm_40x15x20.nc
[ -x bin/capture_radm2sorg_fortran ] || { echo "bin/capture_radm2sorg_fortran missing (make check builds it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WRFGPU_CAPTURE_DIR=$tmp WRFGPU_CAPTURE_STEPS=5,7-9 WRFGPU_CAPTURE_CASE=capcheck \
  bin/capture_radm2sorg_fortran "$src" 8 || exit 1
f=$tmp/capcheck_radm2sorg_kpp_d01_step0008_rank0.nc
[ -f "$f" ] || { echo "FAIL: expected $f"; ls "$tmp"; exit 1; }
python3 wrf_patch/capture/check_capture.py "$f" || { echo "FAIL: the written file does not follow the capture format"; exit 1; }
bin/wrfgpu_replay "$f" --backend cpu --mode strict > "$tmp/replay.txt" 2>&1
rc=$?
cat "$tmp/replay.txt"
[ $rc -eq 0 ] || { echo "FAIL: wrfgpu_replay exit $rc on the written capture"; exit 1; }
grep -q "radm2sorg_kpp" "$tmp/replay.txt" || { echo "FAIL: replay did not dispatch on radm2sorg_kpp"; exit 1; }
echo "capture_radm2sorg: PASS"
