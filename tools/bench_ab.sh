#!/bin/bash
# bench_ab.sh OLD NEW [OUTDIR] - the benchmark of two builds, alternating on this host
# (new old new old), so that a before/after comparison comes from one host and one session.
# OLD and NEW are bundles of tools/bundle_binaries.sh (bin/wrfgpu_bench, lib/); NEW's lib/
# also serves OLD's other libraries. GPU only (--no-cpu); WSM5 and advection at every size,
# RADM2SORG at 28,899 cells (--quick: its CONUS cases take minutes each). Prints each run's
# result table; logs and JSON go to OUTDIR (default bench_ab).
set -u
old=${1:?usage: tools/bench_ab.sh OLD NEW [OUTDIR]}; new=${2:?usage: tools/bench_ab.sh OLD NEW [OUTDIR]}
out=${3:-bench_ab}; mkdir -p "$out"
cd "$(dirname "$0")/.." || exit 2
for r in new:1 old:1 new:2 old:2; do
  v=${r%:*}; i=${r#*:}; [ "$v" = new ] && b=$new || b=$old
  for k in "wsm5,advect_scalar_pd:" "radm2sorg_kpp:--quick"; do
    ks=${k%:*}; q=${k#*:}; log="$out/${v}_${i}_${ks%%,*}"
    LD_LIBRARY_PATH="$b/lib:$new/lib" OMP_WAIT_POLICY=active "$b/bin/wrfgpu_bench" --no-cpu \
      --work /tmp/wrfgpu_bench_ab --kernels "$ks" $q --json "$log.json" > "$log.log" 2>&1
    echo "== $v run $i ($ks): exit $?"
    grep -E "^(wsm5|advect_scalar_pd|radm2sorg_kpp) " "$log.log"
  done
done
