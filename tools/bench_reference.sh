#!/bin/sh
# bench_reference.sh HARNESS FILE - times a harness of WRF's own code on a case file in the
# protocol of `wrfgpu_bench --reference K=CMD` (one line `NAME ... cells=N ... ms=T` per timed
# call), on all the host's cores, two ways:
#   fortran-ompN:  one process, N OpenMP threads (OMP_PROC_BIND=close, OMP_PLACES=cores);
#   fortran-Nproc: N single-thread processes at once, process I on CPU I with the I-th of N
#                  contiguous slices of the cells, as N MPI ranks (WRF-Chem's usual build): the
#                  slowest process's time, and the cells of all of them.
#
#   make bench BENCH_ARGS="--kernels radm2sorg_kpp --reference 'radm2sorg_kpp=tools/bench_reference.sh /path/to/harness'"
#
# HARNESS is built by the user from WRF's code, which this repository does not hold
# (docs/performance.md, "RADM2SORG against WRF-Chem's own Fortran", says what it does). It is
# run as `HARNESS FILE --repeat R [--slice I N]` and prints `fortran cells=N threads=T ms=X`
# for each call. Environment: REF_THREADS (default: the CPUs, nproc), REF_SKIP=S (files whose
# path contains S are skipped: they print no timing, which the bench reports as a failed
# reference). Case files over 100 MB (CONUS) are timed once, smaller ones twice.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 HARNESS FILE" >&2
  exit 2
fi
H=$1 CASE=$2
[ -x "$H" ] || { echo "bench_reference: HARNESS $H: not an executable file" >&2; exit 2; }
[ -r "$CASE" ] || { echo "bench_reference: FILE $CASE: not readable" >&2; exit 2; }
NT=${REF_THREADS:-$(nproc)}
case $NT in '' | *[!0-9]* | 0) echo "bench_reference: REF_THREADS '$NT': expected a whole number >= 1" >&2; exit 2 ;; esac
if [ -n "${REF_SKIP:-}" ]; then
  case "$CASE" in *"$REF_SKIP"*) echo "# skipped (REF_SKIP=$REF_SKIP): $CASE"; exit 0 ;; esac
fi
rep=2
[ "$(stat -c %s "$CASE")" -gt 100000000 ] && rep=1
echo "# host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $NT threads; $rep timed calls"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=$NT OMP_PROC_BIND=close OMP_PLACES=cores "$H" "$CASE" --repeat $rep > "$tmp/omp.txt" 2>&1
rc=$?
sed "s/^fortran /fortran-omp$NT /" "$tmp/omp.txt"
[ $rc -eq 0 ] || { echo "bench_reference: $H $CASE failed (status $rc)" >&2; exit 1; }

pids=""
i=0
while [ $i -lt "$NT" ]; do
  OMP_NUM_THREADS=1 taskset -c "$i" "$H" "$CASE" --slice "$i" "$NT" --repeat $rep > "$tmp/s$i.txt" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
if [ $rc -ne 0 ]; then
  cat "$tmp"/s*.txt >&2
  echo "bench_reference: a slice of $H $CASE failed" >&2
  exit 1
fi
# Repeat r: the cells of all slices, the slowest slice's time.
r=1
while [ $r -le $rep ]; do
  awk -v r=$r -v nt="$NT" '
    /^fortran / { if (++k[FILENAME] != r) next
                  t = -1
                  for (f = 1; f <= NF; f++) {
                    if ($f ~ /^ms=/) t = substr($f, 4) + 0
                    if ($f ~ /^cells=/) c += substr($f, 7)
                  }
                  n++
                  if (t > mx) { mx = t; sl = FILENAME } }
    END { if (n != nt) { printf "bench_reference: %d of %d slices printed a timing for call %d\n", n, nt, r > "/dev/stderr"; exit 1 }
          sub(/.*\/s/, "", sl); sub(/\.txt$/, "", sl)
          printf "fortran-%dproc cells=%d ms=%.1f (the slowest process, slice %s)\n", nt, c, mx, sl }' "$tmp"/s*.txt || exit 1
  r=$((r + 1))
done
