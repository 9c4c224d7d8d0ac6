#!/bin/sh
# The verdict follows the reference: the same capture with WRF's tendencies (tendency_out)
# scaled by 1 + 1e-3 must FAIL (exit 1: per-level mean variance 1e-3 against the 1e-6
# threshold); scaled by 1 + 1e-7 (about one float ulp) it must still pass (exit 0).
cd "$(dirname "$0")/../.." || exit 2
src=test_data/ref_advect_pd_specified_tile_interior.nc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ncdump -p 9,17 "$src" > "$tmp/a.cdl" || exit 1
scaled() { # scaled FACTOR OUT.nc: the capture with every tendency_out value times FACTOR
  awk -v fac="$1" '/^ *tendency_out =/ { inb = 1 }
    inb { for (i = 1; i <= NF; i++) { t = $i; sub(/[,;]$/, "", t)
            if (t ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) { s = substr($i, length(t) + 1); $i = sprintf("%.9g%s", t * fac, s) } }
          if ($0 ~ /;/) inb = 0 }
    { print }' "$tmp/a.cdl" > "$tmp/b.cdl" && ncgen -k nc4 -o "$2" "$tmp/b.cdl"
}
fails=0
scaled 1.001 "$tmp/off.nc" || exit 1
bin/wrfgpu_replay "$tmp/off.nc" --backend cpu --quiet > "$tmp/off.log" 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -q "result: FAIL" "$tmp/off.log"; then echo "ok   reference off by 1e-3: FAIL, exit 1"
else echo "FAIL reference off by 1e-3 gave exit $rc"; tail -8 "$tmp/off.log"; fails=1; fi
scaled 1.0000001 "$tmp/ulp.nc" || exit 1
bin/wrfgpu_replay "$tmp/ulp.nc" --backend cpu --quiet > "$tmp/ulp.log" 2>&1; rc=$?
if [ $rc -eq 0 ] && grep -q "result: PASS" "$tmp/ulp.log"; then echo "ok   reference off by 1e-7: PASS, exit 0"
else echo "FAIL reference off by 1e-7 gave exit $rc"; tail -8 "$tmp/ulp.log"; fails=1; fi
[ $fails -eq 0 ]
