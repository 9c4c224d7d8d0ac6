#!/bin/sh
# The same answer for any rank count: each capture is replayed with 1, 2 and 4 MPI ranks on
# the CPU backend (strict); the gathered outputs must be bitwise identical, and so must the
# verification table (it is reduced over ranks).
cd "$(dirname "$0")/../.." || exit 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
drv=bin/wrfgpu_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
files=$(ls test_data/wsm5_synth_60s_wrfref.nc test_data/ref_advect_pd_specified.nc \
           test_data/ref_advect_pd_open.nc test_data/quarter_ss_wsm5_d01_step0120_rank0.nc test_data/quarter_ss_advect_scalar_pd_d01_step0180_rank0.nc \
           test_data/radm2sorg_warm_*.nc 2>/dev/null)
for f in $files; do
  b=$(basename "$f" .nc)
  for np in 1 2 4; do
    timeout 300 mpirun --oversubscribe -np $np $drv "$f" --backend cpu --quiet \
      --write-outputs "$tmp/$b.np$np.nc" > "$tmp/$b.np$np.log" 2>&1
    rc=$?
    # the same answer must also be the right one: every file passes against WRF
    [ $rc -eq 0 ] || { echo "  $np ranks: exit $rc"; tail -5 "$tmp/$b.np$np.log"; echo "FAIL $b"; fails=$((fails+1)); }
    # the table without the timing lines and the rank count in the summary
    grep -E "\| (ok|FAIL)$" "$tmp/$b.np$np.log" > "$tmp/$b.np$np.table"
  done
  same=1
  for np in 2 4; do
    # every *_out variable, all digits
    for v in $(ncdump -h "$tmp/$b.np1.nc" | sed -n 's/.*float \([a-z_0-9]*_out\)(.*/\1/p'); do
      ncdump -p 9,17 -v "$v" "$tmp/$b.np1.nc" | sed '1,/^data:/d' > "$tmp/a"
      ncdump -p 9,17 -v "$v" "$tmp/$b.np$np.nc" | sed '1,/^data:/d' > "$tmp/b"
      cmp -s "$tmp/a" "$tmp/b" || { echo "  $v differs between 1 and $np ranks"; same=0; }
    done
    cmp -s "$tmp/$b.np1.table" "$tmp/$b.np$np.table" || { echo "  report differs between 1 and $np ranks"; diff "$tmp/$b.np1.table" "$tmp/$b.np$np.table" | head -5; same=0; }
  done
  [ -s "$tmp/$b.np1.table" ] || { echo "  no report for $f"; cat "$tmp/$b.np1.log" | tail -5; same=0; }
  if [ $same = 1 ]; then echo "ok   $b: 1, 2, 4 ranks bitwise identical"; else echo "FAIL $b"; fails=$((fails+1)); fi
done
# Multi-step advection: 6 steps with MPI halo exchange between them (periodic wrap,
# specified boundaries, the real supercell capture); the tracers after the last step must be
# bitwise identical for 1, 2 and 4 ranks.
for f in test_data/ref_advect_pd_periodic.nc test_data/ref_advect_pd_specified.nc \
         test_data/quarter_ss_advect_scalar_pd_d01_step0120_rank0.nc; do
  b=$(basename "$f" .nc).steps
  for np in 1 2 4; do
    timeout 300 mpirun --oversubscribe -np $np $drv "$f" --backend cpu --quiet --steps 6 \
      --write-outputs "$tmp/$b.np$np.nc" > "$tmp/$b.np$np.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { echo "  $np ranks: exit $rc"; tail -5 "$tmp/$b.np$np.log"; echo "FAIL $b"; fails=$((fails+1)); }
    ncdump -p 9,17 -v field_after_steps "$tmp/$b.np$np.nc" 2>/dev/null | sed '1,/^data:/d' > "$tmp/$b.np$np.dump"
  done
  same=1
  [ -s "$tmp/$b.np1.dump" ] || { echo "  no output for $f"; tail -5 "$tmp/$b.np1.log"; same=0; }
  grep -q "6 steps with halo exchange" "$tmp/$b.np1.log" || { echo "  not a 6-step run"; same=0; }
  for np in 2 4; do
    cmp -s "$tmp/$b.np1.dump" "$tmp/$b.np$np.dump" || { echo "  field_after_steps differs between 1 and $np ranks"; same=0; }
  done
  if [ $same = 1 ]; then echo "ok   $b: 6 steps, 1, 2, 4 ranks bitwise identical"; else echo "FAIL $b"; fails=$((fails+1)); fi
done
[ $fails -eq 0 ]
