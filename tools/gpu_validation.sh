#!/bin/sh
# gpu_validation.sh [OUTDIR] - on a machine with a GPU, from a build or a bundle made by
# tools/bundle_binaries.sh (set WRFGPU_BUNDLE=DIR): runs the GPU tests, replays every bundled
# capture on both backends in both modes, runs compute-sanitizer (memcheck, racecheck,
# initcheck) on one small call of each kernel, and the benchmark. Logs go to OUTDIR.
# STAGES (default "version tests replay sanitize bench") picks what runs.
out=${1:-gpu_validation}
mkdir -p "$out"
cd "$(dirname "$0")/.." || exit 2
B=${WRFGPU_BUNDLE:-.}
unset WRFGPU_BUNDLE  # not a setting of the library: the programs would warn about it
[ -d "$B/lib" ] && export LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The machine's own Open MPI when it has one; else the bundled one.
if [ -d "$B/mpilib" ] && ldd "$B/bin/wrfgpu_replay" | grep -q "libmpi.so.40 => not found"; then
  export LD_LIBRARY_PATH="$B/mpilib:$LD_LIBRARY_PATH" OMPI_MCA_mca_base_component_path="$B/mpilib/openmpi3"
  echo "using the bundled Open MPI"
fi
ldd "$B/bin/wrfgpu_replay" "$B/bin/wrfgpu_tests" | grep "not found" && echo "(libraries missing, see above)"
stages=${STAGES:-"version tests replay sanitize bench"}
captures=$(ls test_data/*.nc 2>/dev/null)
rc=0
run() { # run NAME CMD... : log to $out/NAME.log, echo a one-line result
  name=$1; shift
  start=$(date +%s)
  "$@" > "$out/$name.log" 2>&1; r=$?
  echo "[$name] exit $r ($(( $(date +%s) - start )) s): $*"
  [ $r -eq 0 ] || rc=1
  return $r
}
for s in $stages; do
  case $s in
    version) run version "$B/bin/wrfgpu_replay" --version; cat "$out/version.log"; nvidia-smi -L ;;
    tests) run tests "$B/bin/wrfgpu_tests"; grep -E "^\[==========\] [0-9]|^\[  (PASSED|FAILED|SKIPPED)  *\] [0-9]" "$out/tests.log"; grep -E "^\[  (FAILED|SKIPPED) " "$out/tests.log" | sort -u | head ;;
    replay)
      for m in strict fast; do
        run "replay_$m" "$B/bin/wrfgpu_replay" $captures --backend both --mode $m --report "$out/replay_$m.json"
        grep -E "^== |result:|FAIL" "$out/replay_$m.log" | head -40; tail -n 1 "$out/replay_$m.log"
      done ;;
    sanitize)
      # One small capture per kernel (the smallest file of each; src/<k>/kernel.mk names the
      # part of its captures' file names).
      for k in $(sed -n 's/^CAPTURE_NAMES *+= *//p' src/*/kernel.mk); do
        f=$(ls -S test_data/*"$k"*.nc 2>/dev/null | tail -1)
        [ -n "$f" ] || continue
        for tool in memcheck racecheck initcheck; do
          run "sanitize_${k}_$tool" compute-sanitizer --tool $tool --error-exitcode 9 \
            "$B/bin/wrfgpu_replay" "$f" --backend gpu --max-plmv 1
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error" "$out/sanitize_${k}_$tool.log" | tail -2
        done
      done ;;
    bench) run bench "$B/bin/wrfgpu_bench" --json "$out/bench.json" ${BENCH_ARGS:-}; sed -n '/^measured ceilings/,$p' "$out/bench.log" ;;
  esac
done
exit $rc
