#!/bin/sh
# build.sh OUTDIR [P...] - the split prototype (docs/radm2sorg.md, "Cells split over warps,
# measured"): one whole Ros3 step of 32 cells split over P warps (gen_step.py; P = 8 unless
# given), checked on the CPU against the library's generated functions and level by level (the
# same bits), and built for a GPU machine as OUTDIR/step_bench_P (run there: step_bench_P [steps]).
set -e
out=${1:?usage: tools/split_proto/build.sh OUTDIR [P...]}
shift
cd "$(dirname "$0")/../.."
mkdir -p "$out"
inc="-DWRFGPU_MODE_NS=strict -I src/common -I src/radm2sorg/generated"
for p in ${*:-8}; do
  h="$out/step_$p.h"
  python3 tools/split_proto/gen_step.py $p "$h"
  g++ -std=c++20 -pthread -O1 -ffp-contract=off $inc -DSTEP_HEADER="\"$h\"" tools/split_proto/step_check.cpp -o "$out/step_check"
  "$out/step_check"
  nvcc -O3 -arch=sm_90 --fmad=false -prec-div=true $inc -DSTEP_HEADER="\"$h\"" tools/split_proto/step_bench.cu \
    -o "$out/step_bench_$p"
done
