#!/bin/sh
# A failure inside WRF ends the run through WRF's own wrf_error_fatal (its FATAL block with
# wrfgpu's message) and a nonzero exit status, even where WRF's serial wrf_abort exits with
# STOP (status 0): bin/wrf_fatal_fortran stands in for wrf.exe (fortran_iface/bridge.h).
cd "$(dirname "$0")/../.." || exit 2
t=bin/wrf_fatal_fortran
[ -x $t ] || { echo "FAIL $t was not built (make check builds it)"; exit 1; }
fails=0
# check NAME STATUS PATTERN ARGS...: exit status STATUS and a line matching PATTERN
check() {
  name=$1; want=$2; pat=$3; shift 3
  out=$(timeout 60 "$@" 2>&1); rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL $name: exit $rc, wanted $want:"; echo "$out" | tail -6; fails=$((fails+1)); return; fi
  if ! echo "$out" | grep -qE "$pat"; then
    echo "FAIL $name: no line matching '$pat':"; echo "$out" | tail -6; fails=$((fails+1)); return
  fi
  echo "ok   $name: exit $rc, $(echo "$out" | grep -E "$pat" | head -1 | cut -c1-140)"
}
nanline="^wrfgpu: wsm5_gpu: .*qv.*NaN"
check "wsm5_gpu without stat, NaN in qv: WRF's FATAL, status 2" 2 "$nanline" $t nan
out=$($t nan 2>/dev/null)
echo "$out" | grep -q -- "-------------- FATAL CALLED" && echo "$out" | grep -qE "$nanline" \
  && echo "ok   the FATAL block carries wrfgpu's message" \
  || { echo "FAIL no FATAL block with the message on stdout:"; echo "$out"; fails=$((fails+1)); }
echo "$out" | grep -q "wsm5_gpu returned" && { echo "FAIL wsm5_gpu returned after the failure"; fails=$((fails+1)); }
check "wsm5_gpu with stat: no stop, stat = 2" 0 "wsm5_gpu returned stat = 2" $t nanstat
$t nanstat 2>/dev/null | grep -q "FATAL" && { echo "FAIL FATAL called although stat was present"; fails=$((fails+1)); }
# wsm5_gpu_init with the GPUs hidden: the rank, the cause and the way out, through FATAL
check "wsm5_gpu_init, no usable GPU: WRF's FATAL, status 1" 1 \
  "wrfgpu: wsm5_gpu_init: rank 0 of 1 .*no usable GPU.*WRFGPU_BACKEND=cpu" \
  env CUDA_VISIBLE_DEVICES= WRFGPU_BACKEND=gpu $t init
env CUDA_VISIBLE_DEVICES= WRFGPU_BACKEND=gpu $t init 2>/dev/null | grep -q -- "-------------- FATAL CALLED" \
  && echo "ok   wsm5_gpu_init: FATAL block" || { echo "FAIL wsm5_gpu_init: no FATAL block"; fails=$((fails+1)); }
check "wsm5_gpu_init, WRFGPU_BACKEND=cpu: runs on" 0 "wsm5_gpu_init returned" \
  env CUDA_VISIBLE_DEVICES= WRFGPU_BACKEND=cpu $t init
check "wsm5_gpu_init, bad WRFGPU_BACKEND: status 2" 2 "WRFGPU_BACKEND.*gpux" env WRFGPU_BACKEND=gpux $t init
[ $fails -eq 0 ]
