#!/bin/sh
# switches.sh - the RADM2SORG hook's run-time switch seen through the Fortran module, as the
# patched chem_driver.F sees it: WRFGPU_RADM2SORG=0 gives .FALSE. (WRF's own KPP code runs),
# anything else .TRUE.
cd "$(dirname "$0")/../.." || exit 2
b=bin/test_switches_fortran
[ -x "$b" ] || { echo "switches.sh: $b missing"; exit 1; }
rc=0
for v in 0 1 ""; do
  out=$(WRFGPU_RADM2SORG=$v "$b") || { echo "FAIL: WRFGPU_RADM2SORG='$v': $out"; rc=1; continue; }
  want=T; [ "$v" = 0 ] && want=F
  case "$out" in
    *"= $want") echo "ok   WRFGPU_RADM2SORG='$v': wrfgpu_radm2sorg_on() = $want" ;;
    *) echo "FAIL: WRFGPU_RADM2SORG='$v': $out"; rc=1 ;;
  esac
done
exit $rc
