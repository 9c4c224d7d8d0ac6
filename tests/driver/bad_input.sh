#!/bin/sh
# Bad input to the replay driver, the large-case tool and the benchmark: each case must exit
# with status 2 and one line naming the file, option, variable, attribute or value at fault -
# never a crash, a hang or a silent pass. A reference that proves nothing or a file that fails
# to run gives 1; nothing to compare with gives 0 and says NOT VERIFIED.
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
expect "NaN in an input" "$tmp/nan.nc" "nan.nc: " "qv" "NaN\|non-finite\|not finite"
ncdump "$tmp/good.nc" | sed 's/th(south_north, bottom_top, west_east)/th(bottom_top, south_north, west_east)/' | ncgen -4 -o "$tmp/dims.nc"
expect "wrong dimensions" "$tmp/dims.nc" "dims.nc" "'th' has dimensions"
ncdump -h "$tmp/good.nc" | ncgen -4 -o "$tmp/unwritten.nc"
expect "variables never written" "$tmp/unwritten.nc" "unwritten.nc" "holds its fill value"
cdl wsm5 "$QV" | sed 's/:real_kind = 4/:real_kind = 8/' | ncgen -4 -o "$tmp/r8.nc"
expect "real_kind 8" "$tmp/r8.nc" "r8.nc" "real_kind = 8"
cdl wsm5 "$QV" | sed 's/:source = "test" ;/:source = "test" ; :dens = 0.f ;/' | ncgen -4 -o "$tmp/dens0.nc"
expect "constant dens = 0" "$tmp/dens0.nc" "dens0.nc" "constant 'dens'"
# Bad options are bad input too.
out=$($drv "$tmp/good.nc" --mode turbo 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "turbo"; then echo "ok   bad option value"; else echo "FAIL bad option value ($rc): $out"; fails=$((fails+1)); fi

# want NAME RC PATTERN CMD...: CMD exits with status RC within 60 s, its output matching PATTERN (grep -E).
want() {
  name=$1 rc_want=$2 pat=$3; shift 3
  out=$(timeout ${WANT_TIMEOUT:-60} "$@" 2>&1); rc=$?
  if [ $rc -eq "$rc_want" ] && echo "$out" | grep -qE -- "$pat"; then echo "ok   $name"; else
    echo "FAIL $name (exit $rc, wanted $rc_want and /$pat/)"; echo "$out" | tail -8 | sed 's/^/     /'; fails=$((fails+1)); fi
}
# setvar IN OUT VAR first|all VALUE: OUT is IN with the first or every value of VAR replaced.
setvar() {
  ncdump -p 9,17 "$1" | awk -v var="$3" -v how="$4" -v val="$5" '
    $0 ~ "^ " var " =" { on = 1; p = index($0, "="); printf "%s", substr($0, 1, p); $0 = substr($0, p + 1) }
    on { if (how == "all") gsub(/[^ ,;]+/, val); else if (!done) done = sub(/[^ ,;]+/, val); if ($0 ~ /;[ ]*$/) on = 0 }
    { print }' | ncgen -k nc4 -o "$2"
}
W=test_data/wsm5_synth_12s_wrfref.nc
mk=bin/wrfgpu_make_large_case
bench=bin/wrfgpu_bench

# Option values out of range: named, exit 2 (a count that overflows int used to crash or run once).
want "--repeat 1e12" 2 "option --repeat: '1e12'" $drv "$tmp/good.nc" --backend cpu --repeat 1e12
want "--repeat 3000000000" 2 "option --repeat: '3000000000'" $drv "$tmp/good.nc" --backend cpu --repeat 3000000000
want "--steps 1e12" 2 "option --steps: '1e12'" $drv test_data/ref_advect_pd_periodic.nc --backend cpu --steps 1e12
want "--max-plmv nan" 2 "option --max-plmv: 'nan'" $drv "$tmp/good.nc" --backend cpu --max-plmv nan
want "--max-plmv -1" 2 "option --max-plmv: '-1'" $drv "$tmp/good.nc" --backend cpu --max-plmv -1

# A WRF reference that proves nothing fails (exit 1): NaN in it, a surface field far off.
setvar $W "$tmp/thnan.nc" th_out first NaNf
want "NaN in a WRF reference" 1 "th_out holds 1 non-finite values" $drv "$tmp/thnan.nc" --backend cpu
setvar $W "$tmp/rain.nc" rainnc_out all 12345
want "rainnc_out = 12345" 1 "FAIL rainnc: max abs difference" $drv "$tmp/rain.nc" --backend cpu
want "surface fields have a rule" 0 "rainncv +.*maxabs<=1.0e-05 +\| ok" $drv $W --backend cpu

# Nothing to compare with: NOT VERIFIED, exit 0.
nccopy -V th,qv,qc,qr,qi,qs,rho,pii,p,dz,rainnc,snownc $W "$tmp/noout.nc"
want "no WRF outputs" 0 "result: NOT VERIFIED" $drv "$tmp/noout.nc" --backend cpu
want "--steps 3 (no reference)" 0 "result: NOT VERIFIED" $drv test_data/ref_advect_pd_periodic.nc --backend cpu --steps 3
$mk $W "$tmp/large.nc" --size 10x8x5 > /dev/null
want "a large case" 0 "result: NOT VERIFIED" $drv "$tmp/large.nc" --backend cpu

# A failing file is named and recorded; the next file is replayed and the report written.
$mk test_data/radm2sorg_warm_40x15x20.nc "$tmp/chem.nc" --size 4x3x2 > /dev/null
setvar "$tmp/chem.nc" "$tmp/hohuge.nc" ho first 1e30
want "run-time failure, then the next file" 1 "1 of 2 files pass" $drv "$tmp/hohuge.nc" $W --backend cpu --report "$tmp/r.json"
echo "$out" | grep -q "hohuge.nc: radm2sorg: the Rosenbrock integration failed" && [ "$(grep -c '"file"' "$tmp/r.json")" = 2 ] ||
  { echo "FAIL run-time failure: file not named or report incomplete"; fails=$((fails+1)); }
ncdump -h test_data/radm2sorg_warm_40x15x20.nc | sed 's/:jte = 20 ;/:jte = 26 ;/' | ncgen -k nc4 -o "$tmp/jte.nc"
want "RADM2SORG tile bounds" 2 "jte.nc: tile bounds its..ite, jts..jte, kts..kte \(40x26x15\)" $drv "$tmp/jte.nc" --backend cpu

# A capture is NetCDF-4: a classic file (cut short, it reads as zeros) is refused.
nccopy -k classic "$tmp/good.nc" "$tmp/classic.nc"
want "classic format" 2 "classic.nc: NetCDF format classic" $drv "$tmp/classic.nc" --backend cpu
nccopy -k classic $W "$tmp/classic_w.nc"
head -c 20000 "$tmp/classic_w.nc" > "$tmp/classic_cut.nc"  # the header whole, most data missing
want "classic format cut short" 2 "classic_cut.nc: NetCDF format classic" $drv "$tmp/classic_cut.nc" --backend cpu

# The large-case tool: strict options, mixing ratios kept positive, no partial output.
want "make_large_case --perturbation 5" 2 "--perturbation '5'" $mk $W "$tmp/x.nc" --perturbation 5
want "make_large_case --perturbation abc" 2 "--perturbation 'abc'" $mk $W "$tmp/x.nc" --perturbation abc
want "make_large_case --nscalar abc" 2 "--nscalar 'abc'" $mk $W "$tmp/x.nc" --nscalar abc
want "make_large_case --nscalar -3" 2 "--nscalar '-3'" $mk $W "$tmp/x.nc" --nscalar -3
want "make_large_case --size 10x10x10abc" 2 "--size '10x10x10abc'" $mk $W "$tmp/x.nc" --size 10x10x10abc
want "make_large_case too large" 2 "needs about [0-9.]+ GiB" $mk $W "$tmp/x.nc" --size 100000x100000x100
[ -e "$tmp/x.nc" ] && { echo "FAIL make_large_case left $tmp/x.nc"; fails=$((fails+1)); }
ncdump -p 9,17 $W | awk '/^variables:/ { print; print "\tchar note(west_east) ;"; next }
  /^data:/ { print; print " note = \"abcdefgh\" ;"; next } { print }' | ncgen -k nc4 -o "$tmp/charvar.nc"
want "make_large_case fails mid-way" 2 "charvar.nc: reading variable 'note'" $mk "$tmp/charvar.nc" "$tmp/y.nc" --size 10x8x5
[ -e "$tmp/y.nc" ] && { echo "FAIL make_large_case left a partial $tmp/y.nc"; fails=$((fails+1)); }

# The benchmark measures something or says why not.
mkdir "$tmp/empty"
want "bench --json /nonexistent" 2 "--json /nonexistent/x.json: cannot write" $bench --json /nonexistent/x.json
want "bench --kernels xyz" 2 "unknown kernel 'xyz' \(known: advect_scalar, advect_scalar_pd, radm2sorg_kpp, wsm5\)" $bench --kernels xyz
want "bench --kernels radm2sorg (alias), no captures" 1 "nothing was measured" \
  env CUDA_VISIBLE_DEVICES= $bench --kernels radm2sorg --data "$tmp/empty" --json "$tmp/b.json"
want "bench --data /nonexistent" 2 "--data /nonexistent: no such folder" $bench --data /nonexistent
want "bench --no-cpu without a GPU" 1 "nothing to measure: --no-cpu and no GPU" env CUDA_VISIBLE_DEVICES= $bench --no-cpu
want "bench --repeat abc" 2 "option --repeat 'abc'" $bench --repeat abc

# --reference K=CMD (WRF's own code timed on the same case files): a malformed option exits 2;
# a command that times another number of cells than the case holds is named with the file
# (exit 1), after the rows of a command that reports its calls well, whose median is printed.
want "bench --reference without =" 2 "option --reference 'radm2sorg_kpp': expected KERNEL=COMMAND" $bench --reference radm2sorg_kpp
want "bench --reference xyz=true" 2 "unknown kernel 'xyz'" $bench --reference xyz=true
cat > "$tmp/ref.sh" <<'EOF2'
c=$(ncdump -h "$1" | awk '/^\t(west_east|south_north|bottom_top) = / { n = n ? n * $3 : $3 } END { print n }')
for t in 50 70 60; do echo "refgood cells=$c ms=$t"; done
EOF2
# (the CPU backend on three cases, and the cases made on a first run: 24 s on 2 cores)
WANT_TIMEOUT=240 want "bench --reference, one good and one that times 7 cells" 1 \
  "--reference: 'echo refbad cells=7 ms=1 '.*_39x39x19.nc'' timed 7 cells, the case .*_39x39x19.nc has 28899" \
  env CUDA_VISIBLE_DEVICES= $bench --kernels radm2sorg --quick --cpu-repeat 1 --json "$tmp/b.json" \
  --reference "radm2sorg_kpp=sh $tmp/ref.sh" --reference "radm2sorg_kpp=echo refbad cells=7 ms=1"
echo "$out" | grep -qE "^radm2sorg_kpp +28,899 cells \(39x39x19\), warm +refgood +60\.000 .* 60\.000 " ||
  { echo "FAIL bench --reference: no row 'refgood' with the median 60.000 of 50, 70, 60"; echo "$out" | grep refgood | head -3; fails=$((fails+1)); }
[ $fails -eq 0 ]
