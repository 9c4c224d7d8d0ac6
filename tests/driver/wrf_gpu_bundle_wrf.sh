#!/bin/sh
# wrf_gpu_bundle_wrf.sh - tools/wrf_gpu_bundle.sh on a real wrf.exe: the bundle's executables,
# with only the bundle's lib/ (and the C library, libcuda and MPI, which it leaves to the target
# machine), resolve every library and symbol (ldd -r) and start: in an empty directory wrf.exe
# stops at the missing namelist.input, not in the loader. With WRFGPU_TEST_WRF_RUN, a run
# directory in which that wrf.exe runs, run.sh runs it for one model minute on the CPU backend
# and must reach "SUCCESS COMPLETE WRF".
#
# WRF is not part of this repository: the test needs a built wrf.exe named by WRFGPU_TEST_WRF_EXE
# (and optionally a second one, WRFGPU_TEST_WRF_EXE2, bundled alongside as `b`) and SKIPS (77)
# without one. It takes a minute or two: the bundle is compressed with xz -9e.
cd "$(dirname "$0")/../.." || exit 2
E1=${WRFGPU_TEST_WRF_EXE:-}
E2=${WRFGPU_TEST_WRF_EXE2:-}
R=${WRFGPU_TEST_WRF_RUN:-}
if [ -z "$E1" ]; then
  echo "wrf_gpu_bundle_wrf.sh: SKIPPED: no wrf.exe (set WRFGPU_TEST_WRF_EXE to a built wrf.exe; WRFGPU_TEST_WRF_RUN to a run directory for a one-minute run)"
  exit 77
fi
[ -f "$E1" ] || { echo "wrf_gpu_bundle_wrf.sh: FAIL: WRFGPU_TEST_WRF_EXE=$E1: no such file"; exit 1; }
[ -z "$E2" ] || [ -f "$E2" ] || { echo "wrf_gpu_bundle_wrf.sh: FAIL: WRFGPU_TEST_WRF_EXE2=$E2: no such file"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }

if [ -n "$R" ]; then
  run=$R
else
  run=$tmp/run; mkdir -p "$run"
  cp test_data/namelists/namelist.input.quarter_ss "$run/namelist.input"
fi
set -- --exe a="$E1"
names=a
[ -z "$E2" ] || { set -- "$@" --exe b="$E2"; names="a b"; }
O=$tmp/bundle
if bash tools/wrf_gpu_bundle.sh "$run" "$O" "$@" --backends cpu > "$tmp/bundle.log" 2>&1; then
  ok "bundle: $(tail -1 "$tmp/bundle.log" | sed 's/.*(\(.*\)).*/\1/')"
else
  cat "$tmp/bundle.log"; echo "FAIL: the bundle"; exit 1
fi
grep -i 'icudata\|strip' "$tmp/bundle.log" | sed 's/^/     /'
(cd "$O" && xz -dc payload.tar.xz | tar -xf -) || { echo "FAIL: payload.tar.xz does not unpack"; exit 1; }

for n in $names; do
  x=$O/$n.exe
  LD_LIBRARY_PATH=$O/lib ldd -r "$x" > "$tmp/ldd.$n" 2>&1
  if grep -q 'not found\|undefined symbol' "$tmp/ldd.$n"; then
    grep 'not found\|undefined symbol' "$tmp/ldd.$n" | head; bad "$n.exe: ldd -r with lib/"
  else
    ok "$n.exe: ldd -r with lib/ resolves every library and symbol"
  fi
  # what comes from outside lib/: only what the bundle leaves to the target machine
  outside=$(awk -v lib="$O/lib/" '$2 == "=>" && index($3, lib) != 1 {print $1}' "$tmp/ldd.$n" \
    | grep -v -E '^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil)\.so|^libcuda\.so|^libnvidia-|^(libmpi|libopen-pal|libopen-rte|libpmix|libhwloc|libevent|libfabric|libuc[pstm]|libpsm|libibverbs|librdmacm|libnl-|libmunge)' \
    | tr '\n' ' ')
  [ -z "$outside" ] && ok "$n.exe: nothing else from outside the bundle" || bad "$n.exe loads from outside the bundle: $outside"
  mkdir -p "$tmp/empty.$n"
  (cd "$tmp/empty.$n" && LD_LIBRARY_PATH=$O/lib WRFGPU_BACKEND=cpu timeout 120 "$x" > out.log 2>&1)
  cat "$tmp/empty.$n"/out.log "$tmp/empty.$n"/rsl.error.0000 > "$tmp/start.$n" 2>/dev/null
  if grep -q 'error while loading shared libraries\|symbol lookup error' "$tmp/start.$n"; then
    head -5 "$tmp/start.$n"; bad "$n.exe: a loader error"
  elif grep -q 'namelist' "$tmp/start.$n"; then
    ok "$n.exe starts: $(grep -m1 namelist "$tmp/start.$n")"
  else
    head -5 "$tmp/start.$n"; bad "$n.exe: no namelist error in an empty directory"
  fi
done

if [ -n "$R" ]; then
  sed -i -e 's/^ *run_days *=.*/ run_days = 0,/' -e 's/^ *run_hours *=.*/ run_hours = 0,/' \
         -e 's/^ *run_minutes *=.*/ run_minutes = 1,/' -e 's/^ *run_seconds *=.*/ run_seconds = 0,/' \
         "$O/input/namelist.input"
  rm -rf "$O/ref"
  for n in $names; do
    OMP_NUM_THREADS=1 "$O/run.sh" --exe "$n" cpu > "$tmp/run.$n" 2>&1
    d=$O/out_${n}_cpu
    if grep -q 'SUCCESS COMPLETE WRF' "$d/wrf.log" "$d/rsl.error.0000" 2>/dev/null; then
      ok "$n.exe, run.sh --exe $n cpu, one model minute: $(grep "$n.exe" "$tmp/run.$n" | tail -1 | sed 's/ *outputs:.*//')"
    else
      tail -20 "$tmp/run.$n"; bad "$n.exe: run.sh --exe $n cpu did not reach SUCCESS COMPLETE WRF"
    fi
  done
fi

[ $rc -eq 0 ] && echo "wrf_gpu_bundle_wrf.sh: all checks passed"
exit $rc
