#!/bin/sh
# bench_reference.sh - tools/bench_reference.sh, the driver of a harness of WRF's own code for
# `wrfgpu_bench --reference`: its two rows from what each call of the harness prints (the
# processes' row: the cells of all slices, the slowest slice's time), and its errors. The
# harness here is a stand-in that prints as a harness does (the real one is built from WRF's
# code, which this repository does not hold): slice I of call c takes 10+I cells and
# 100+10*I+c ms, the whole file 50+c ms.
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }
ref=tools/bench_reference.sh
cat > "$tmp/h" <<'EOH'
#!/bin/sh
f=$1; shift; rep=1; sl=""; n=""
while [ $# -gt 0 ]; do
  case $1 in --repeat) rep=$2; shift 2 ;; --slice) sl=$2; n=$3; shift 3 ;; *) exit 2 ;; esac
done
[ -r "$f" ] || exit 2
[ "$sl" = "${FAIL_SLICE:-x}" ] && { echo "slice $sl: error"; exit 1; }
c=1
while [ $c -le $rep ]; do
  if [ -n "$sl" ]; then
    [ "$sl" = "${MUTE_SLICE:-x}" ] && [ $c -eq 2 ] || echo "fortran cells=$((10 + sl)) threads=1 ms=$((100 + 10 * sl + c)).0"
  else
    echo "fortran cells=4242 threads=$OMP_NUM_THREADS ms=$((50 + c)).0"
  fi
  c=$((c + 1))
done
EOH
chmod +x "$tmp/h"
echo x > "$tmp/case.nc"

out=$(REF_THREADS=2 sh $ref "$tmp/h" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 0 ] || bad "exit $st: $out"
[ "$(echo "$out" | grep -c '^fortran-omp2 cells=4242 threads=2 ms=5[12]\.0$')" = 2 ] && ok "threads: each call's line, named fortran-omp2" \
  || bad "threads row: $out"
echo "$out" | grep -q '^fortran-2proc cells=21 ms=111\.0 (the slowest process, slice 1)$' &&
  echo "$out" | grep -q '^fortran-2proc cells=21 ms=112\.0 (the slowest process, slice 1)$' &&
  ok "processes: the cells of both slices, the slowest slice's time, per call" || bad "processes row: $out"

out=$(REF_THREADS=2 FAIL_SLICE=1 sh $ref "$tmp/h" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 1 ] && echo "$out" | grep -q "a slice of .* failed" && ok "a failing slice: exit 1, named" || bad "failing slice: exit $st: $out"
out=$(REF_THREADS=2 MUTE_SLICE=0 sh $ref "$tmp/h" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 1 ] && echo "$out" | grep -q "1 of 2 slices printed a timing for call 2" && ok "a slice without a timing: exit 1, named" \
  || bad "silent slice: exit $st: $out"
out=$(REF_THREADS=2 REF_SKIP=case sh $ref "$tmp/h" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 0 ] && echo "$out" | grep -q "^# skipped" && ! echo "$out" | grep -q "ms=" && ok "REF_SKIP: no timing" || bad "REF_SKIP: exit $st: $out"
out=$(REF_THREADS=0 sh $ref "$tmp/h" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 2 ] && echo "$out" | grep -q "REF_THREADS '0'" && ok "REF_THREADS=0: exit 2, named" || bad "REF_THREADS=0: exit $st: $out"
out=$(sh $ref "$tmp/none" "$tmp/case.nc" 2>&1); st=$?
[ $st -eq 2 ] && echo "$out" | grep -q "HARNESS $tmp/none: not an executable file" && ok "no harness: exit 2, named" || bad "no harness: exit $st: $out"
exit $rc
