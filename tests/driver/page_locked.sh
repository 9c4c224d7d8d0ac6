#!/bin/sh
# wrfgpu_replay --page-locked: the call's arrays in page-locked host memory, the path WRF takes
# with wrf_patch's registration (the GPU backend copies straight between them and the device).
# - A replay that cannot page-lock (--steps keeps the tracers pageable; RADM2SORG has no such
#   path) says so in a note and runs with pageable arrays.
# - With a GPU: advection (both schemes) and WSM5 page-locked, GPU against CPU and WRF, pass,
#   and the report says "page-locked arrays".
# - Without one: page-locked memory cannot be had, and the file fails with a line naming it
#   (exit 1), never a silent pageable run.
cd "$(dirname "$0")/../.." || exit 2
drv=bin/wrfgpu_replay
T=test_data
fails=0
check() { # check NAME WANTED_RC OUTPUT RC PATTERN...
  name=$1 want=$2 out=$3 rc=$4; shift 4
  ok=1
  [ "$rc" -eq "$want" ] || ok=0
  for p in "$@"; do echo "$out" | grep -q -- "$p" || ok=0; done
  if [ $ok = 1 ]; then echo "ok   $name"; else
    echo "FAIL $name (exit $rc, wanted $want and: $*)"; echo "$out" | sed 's/^/     /'; fails=$((fails+1)); fi
}
out=$(timeout 120 $drv $T/ref_advect_pd_open.nc --backend cpu --steps 2 --page-locked 2>&1); rc=$?
check "--steps keeps pageable arrays, and says so" 0 "$out" $rc "with --steps has no page-locked arrays; replayed with pageable ones"
if $drv --version 2>&1 | grep -q "GPU: none"; then
  out=$(timeout 120 $drv $T/ref_advect_pd_open.nc --backend cpu --page-locked 2>&1); rc=$?
  check "no GPU: the file fails, named" 1 "$out" $rc "ERROR: $T/ref_advect_pd_open.nc: cannot allocate" "page-locked host memory" "0 of 1 files pass"
else
  out=$(timeout 300 $drv $T/ref_advect_pd_open.nc $T/ref_advect_un_specified_tile_sw.nc $T/quarter_ss_wsm5_d01_step0120_rank0.nc \
        --backend both --page-locked 2>&1); rc=$?
  check "GPU: advection and WSM5 page-locked pass" 0 "$out" $rc "3 of 3 files pass"
  n=$(echo "$out" | grep -c "page-locked arrays")
  check "GPU: the report says page-locked for each file" 0 "$n" $([ "$n" -ge 3 ] && echo 0 || echo 1)
  out=$(timeout 120 $drv $T/quarter_ss_chem_radm2sorg_kpp_d01_step0010_rank3.nc --backend gpu --page-locked 2>&1); rc=$?
  check "RADM2SORG: pageable, and says so" 0 "$out" $rc "this kernel's replay has no page-locked arrays"
fi
[ $fails -eq 0 ]
