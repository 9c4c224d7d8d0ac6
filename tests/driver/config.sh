#!/bin/sh
# config.sh - the settings table (src/common/config.cpp) is the one place the library reads
# the environment, docs/configuration.md is made from it, and every setting keeps its rules:
# a bad value stops with status 2 naming the variable and value, an unknown WRFGPU_* name is
# reported, the Fortran switches go through the same table.
cd "$(dirname "$0")/../.." || exit 2
drv=bin/wrfgpu_replay
[ -x "$drv" ] || { echo "config.sh: $drv missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }

# 1. docs/configuration.md is the table as the program prints it
"$drv" --list-config=markdown > "$tmp/conf.md" || bad "--list-config=markdown failed"
if diff -u docs/configuration.md "$tmp/conf.md" > "$tmp/diff"; then ok "docs/configuration.md is up to date"
else bad "docs/configuration.md differs from 'wrfgpu_replay --list-config=markdown' (regenerate it):"; head -20 "$tmp/diff"; fi

# 2. no other code of the library or the programs reads the environment; every WRFGPU_* name
#    the code reads is in the table
others=$(grep -rln 'getenv\|GET_ENVIRONMENT_VARIABLE\|get_environment_variable' src fortran_iface standalone_driver \
         --include=*.cpp --include=*.cu --include=*.h --include=*.F90 | grep -v '^src/common/config.cpp$' \
         | grep -v '^fortran_iface/module_wrfgpu_capture.F90$' | grep -v '^fortran_iface/tests/' | grep -v '^src/[^/]*/tests/')
[ -z "$others" ] && ok "only src/common/config.cpp reads the environment (and the capture module)" \
                 || bad "these read the environment themselves: $others"
"$drv" --list-config > "$tmp/list" || bad "--list-config failed"
names=$(grep -rhoE '(config::(flag|integer|choice|text)\("|wrfgpu_config_flag\('"'"'|GET_ENVIRONMENT_VARIABLE *\( *'"'"'|get_environment_variable\('"'"')WRFGPU_[A-Z0-9_]+' \
        src fortran_iface standalone_driver wrf_patch | grep -oE 'WRFGPU_[A-Z0-9_]+' | sort -u)
[ -n "$names" ] || bad "found no setting read in the code (the pattern of this test is stale)"
for n in $names; do
  grep -q "^$n " "$tmp/list" || bad "$n is read by the code but is not in the settings table"
done
[ $rc -eq 0 ] && ok "the $(echo $names | wc -w) WRFGPU_* names read in the code are all in the table"

# 3. bad values and unknown names
cap=test_data/quarter_ss_wsm5_d01_step0120_rank0.nc
expect2() { # NAME PATTERN -- command...
  name=$1 pat=$2; shift 3
  out=$("$@" 2>&1); st=$?
  if [ $st -eq 2 ] && echo "$out" | grep -q "$pat"; then ok "$name: exit 2, '$pat'"
  else bad "$name: exit $st, wanted 2 and '$pat': $(echo "$out" | tail -2)"; fi
}
expect2 "WRFGPU_BACKEND=gpux" "WRFGPU_BACKEND='gpux': expected one of gpu,cpu,auto,both" -- env WRFGPU_BACKEND=gpux "$drv" "$cap" --quiet
expect2 "WRFGPU_MODE=exact" "WRFGPU_MODE='exact': expected one of strict,fast" -- env WRFGPU_MODE=exact "$drv" "$cap" --backend cpu --quiet
expect2 "WRFGPU_RADM2SORG=maybe (Fortran switch)" "WRFGPU_RADM2SORG='maybe': expected 0 or 1" -- env WRFGPU_RADM2SORG=maybe bin/test_switches_fortran
expect2 "WRFGPU_ADVECT_CPU_TILE=3y" "WRFGPU_ADVECT_CPU_TILE='3y'" -- env WRFGPU_ADVECT_CPU_TILE=3y "$drv" test_data/ref_advect_pd_open.nc --backend cpu --quiet
out=$(WRFGPU_BAKEND=cpu "$drv" "$cap" --backend cpu --quiet 2>&1); st=$?
if [ $st -eq 0 ] && echo "$out" | grep -q "WRFGPU_BAKEND is set but is not a wrfgpu setting"; then ok "an unknown WRFGPU_BAKEND is reported, the run goes on"
else bad "unknown WRFGPU_BAKEND: exit $st: $(echo "$out" | tail -2)"; fi
exit $rc
