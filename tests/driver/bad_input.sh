#!/bin/sh
# Bad input to the replay driver: each case must exit with status 2 and one line naming the
# file and the variable/attribute/value at fault - never a crash, a hang or a silent pass.
cd "$(dirname "$0")/../.." || exit 2
drv=bin/wrfgpu_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# A small, valid WSM5 capture (3x2 columns, 4 levels) written from CDL, edited per case.
cdl() { # cdl KERNEL QV_VALUES [DROP_VAR] [FORMAT]
  kernel=$1 qv=$2 drop=$3 fmt=${4:-1}
  echo "netcdf c { dimensions: south_north = 2 ; bottom_top = 4 ; west_east = 3 ;"
  echo "variables:"
  for v in th qv qc qr qi qs rho pii p dz; do
    [ "$v" = "$drop" ] || echo "  float $v(south_north, bottom_top, west_east) ; $v:units = \"1\" ; $v:description = \"x\" ;"
  done
  echo "  float rainnc(south_north, west_east) ; rainnc:units = \"mm\" ; rainnc:description = \"x\" ;"
  echo "  float snownc(south_north, west_east) ; snownc:units = \"mm\" ; snownc:description = \"x\" ;"
  [ "$fmt" = none ] || echo "  :capture_format = \"$fmt\" ;"
  echo "  :kernel = \"$kernel\" ; :wrf_version = \"4.7.1\" ; :case_name = \"t\" ; :itimestep = 1 ; :dt = 12.f ; :delt = 12.f ;"
  echo "  :ids = 1 ; :ide = 4 ; :jds = 1 ; :jde = 3 ; :kds = 1 ; :kde = 5 ;"
  echo "  :its = 1 ; :ite = 3 ; :jts = 1 ; :jte = 2 ; :kts = 1 ; :kte = 4 ; :region_i0 = 1 ; :region_j0 = 1 ; :region_k0 = 1 ;"
  echo "  :real_kind = 4 ; :source = \"test\" ;"
  echo "data:"
  rep() { n=$1 x=$2 s=""; i=0; while [ $i -lt $n ]; do s="$s${s:+, }$x"; i=$((i+1)); done; echo "$s"; }
  for v in th qv qc qr qi qs rho pii p dz; do
    [ "$v" = "$drop" ] && continue
    case $v in th) x=300;; qv) x="";; qc|qr|qi|qs) x=0;; rho) x=1.1;; pii) x=0.97;; p) x=90000;; dz) x=500;; esac
    if [ "$v" = qv ]; then echo " qv = $qv ;"; else echo " $v = $(rep 24 $x) ;"; fi
  done
  echo " rainnc = $(rep 6 0) ; snownc = $(rep 6 0) ;"
  echo "}"
}
QV="0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01"
QVNAN="0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, NaNf, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01"

expect() { # expect NAME FILE PATTERN...
  name=$1 file=$2; shift 2
  out=$(timeout 60 $drv "$file" --backend cpu 2>&1); rc=$?
  ok=1
  [ $rc -eq 2 ] || ok=0
  for p in "$@"; do echo "$out" | grep -q -- "$p" || ok=0; done
  if [ $ok = 1 ]; then echo "ok   $name"; else
    echo "FAIL $name (exit $rc, wanted 2 and: $*)"; echo "$out" | sed 's/^/     /'; fails=$((fails+1)); fi
}

cdl wsm5 "$QV" | ncgen -4 -o "$tmp/good.nc" || { echo "ncgen failed"; exit 1; }
echo "this is not a NetCDF file" > "$tmp/garbage.nc"
expect "not NetCDF" "$tmp/garbage.nc" "garbage.nc" "cannot open"
head -c 3000 "$tmp/good.nc" > "$tmp/truncated.nc"
expect "truncated file" "$tmp/truncated.nc" "truncated.nc"
expect "missing file" "$tmp/none.nc" "none.nc" "No such file"
cdl wsm5 "$QV" "" none | ncgen -4 -o "$tmp/nofmt.nc"
expect "no capture_format" "$tmp/nofmt.nc" "nofmt.nc" "capture_format"
cdl wsm5 "$QV" "" 7 | ncgen -4 -o "$tmp/fmt7.nc"
expect "unknown format version" "$tmp/fmt7.nc" "fmt7.nc" "capture_format = '7'"
cdl radm9 "$QV" | ncgen -4 -o "$tmp/kernel.nc"
expect "unknown kernel" "$tmp/kernel.nc" "kernel.nc" "unknown kernel 'radm9'"
cdl wsm5 "$QV" qr | ncgen -4 -o "$tmp/noqr.nc"
expect "missing variable" "$tmp/noqr.nc" "noqr.nc" "'qr' is missing"
cdl wsm5 "$QVNAN" | ncgen -4 -o "$tmp/nan.nc"
expect "NaN in an input" "$tmp/nan.nc" "qv" "NaN\|non-finite\|not finite"
ncdump "$tmp/good.nc" | sed 's/th(south_north, bottom_top, west_east)/th(bottom_top, south_north, west_east)/' | ncgen -4 -o "$tmp/dims.nc"
expect "wrong dimensions" "$tmp/dims.nc" "dims.nc" "'th' has dimensions"
# Bad options are bad input too.
out=$($drv "$tmp/good.nc" --mode turbo 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "turbo"; then echo "ok   bad option value"; else echo "FAIL bad option value ($rc): $out"; fails=$((fails+1)); fi
[ $fails -eq 0 ]
