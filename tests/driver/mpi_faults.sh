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
check "rank 1 of 2 fails mid-run" "rank 1: .*wsm5_synth_12s_wrfref.nc: device failure injected" \
  mpirun --oversubscribe -np 2 -x WRFGPU_TEST_FAULT=1:fail $drv $f --backend cpu --quiet
check "rank 3 of 4 dies" "Process name: \[\[[0-9]+,[0-9]+\],3\]" \
  mpirun --oversubscribe -np 4 -x WRFGPU_TEST_FAULT=3:die $drv $f --backend cpu --quiet

# Bad input under MPI. Files are made in a temporary folder from the committed captures.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Chemistry capture whose jte disagrees with south_north: the ranks are split by the
# attributes, so every rank must refuse it before any of them waits in a collective.
ncdump -h test_data/radm2sorg_warm_40x15x20.nc | sed 's/:jte = 20 ;/:jte = 26 ;/' | ncgen -k nc4 -o "$tmp/jte.nc"
check "2 ranks, jte inconsistent with south_north" "jte.nc: tile bounds its..ite, jts..jte, kts..kte" \
  mpirun --oversubscribe -np 2 $drv "$tmp/jte.nc" --backend cpu --quiet
# A reference only rank 1's patch runs past (th_out 4 rows, the tile 6): the ranks agree on
# the error, skip the file together and go on with the next.
ncdump -p 9,17 $f | awk '
  /^dimensions:/ { print; print "\tsn_short = 4 ;"; next }
  /float th_out\(south_north,/ { sub(/th_out\(south_north,/, "th_out(sn_short,") }
  /^ th_out =/ { skip = 1; printf " th_out = "; for (n = 1; n <= 1280; ++n) printf "300%s", n < 1280 ? ", " : " ;\n" }
  skip { if ($0 ~ /;[ ]*$/) skip = 0; next }
  { print }' | ncgen -k nc4 -o "$tmp/short.nc"
check "rank 1 of 2 alone reads a bad reference" "rank 1: .*short.nc: variable 'th_out': dimension sn_short" \
  mpirun --oversubscribe -np 2 $drv "$tmp/short.nc" $f --backend cpu --quiet
echo "$out" | grep -q "1 of 2 files pass" || { echo "FAIL the file after the bad one was not replayed"; fails=$((fails+1)); }
# NaN in rank 1's patch only (the last cell of qv): found inside the kernel call on one rank,
# so the job stops with the message (exit 2), never hangs.
ncdump -p 9,17 $f | awk '/^ qv =/ { on = 1 } on && /;[ ]*$/ { sub(/[^ ,;]+ ;[ ]*$/, "NaNf ;"); on = 0 } { print }' |
  ncgen -k nc4 -o "$tmp/qvnan.nc"
check "NaN in rank 1's patch" "rank 1: .*qvnan.nc: wsm5: input field qv has NaN" \
  mpirun --oversubscribe -np 2 $drv "$tmp/qvnan.nc" --backend cpu --quiet
[ $rc -eq 2 ] || { echo "FAIL NaN in rank 1's patch: exit $rc, wanted 2"; fails=$((fails+1)); }
[ $fails -eq 0 ]
