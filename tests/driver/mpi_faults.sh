#!/bin/sh
# Faults under MPI end the job with one clear message naming the rank and a nonzero exit,
# never a hang (issue: a rank without a usable device, a device failing mid-run, a rank that
# dies). CPU-only machines run all three; the no-device case hides the GPUs with
# CUDA_VISIBLE_DEVICES= so it is the real device check on any machine.
cd "$(dirname "$0")/../.." || exit 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
drv=bin/wrfgpu_replay
f=test_data/wsm5_synth_12s_wrfref.nc
fails=0
# check NAME EXPECTED_PATTERN CMD...: nonzero exit within 120 s, output matching the pattern
check() {
  name=$1; pat=$2; shift 2
  out=$(timeout 120 "$@" 2>&1); rc=$?
  if [ $rc -eq 124 ]; then echo "FAIL $name: hung (killed after 120 s)"; fails=$((fails+1)); return; fi
  if [ $rc -eq 0 ]; then echo "FAIL $name: exit 0"; fails=$((fails+1)); return; fi
  if ! echo "$out" | grep -qE "$pat"; then
    echo "FAIL $name: exit $rc but no line matching '$pat':"; echo "$out" | tail -5; fails=$((fails+1)); return
  fi
  echo "ok   $name: exit $rc, $(echo "$out" | grep -E "$pat" | head -1 | cut -c1-150)"
}
check "2 ranks, no usable GPU" "rank [01]: .*(GPU|CUDA|device)" \
  mpirun --oversubscribe -np 2 -x CUDA_VISIBLE_DEVICES= $drv $f --backend gpu --quiet
check "rank 1 of 2 fails mid-run" "rank 1: device failure injected" \
  mpirun --oversubscribe -np 2 -x WRFGPU_TEST_FAULT=1:fail $drv $f --backend cpu --quiet
check "rank 3 of 4 dies" "Process name: \[\[[0-9]+,[0-9]+\],3\]" \
  mpirun --oversubscribe -np 4 -x WRFGPU_TEST_FAULT=3:die $drv $f --backend cpu --quiet
[ $fails -eq 0 ]
