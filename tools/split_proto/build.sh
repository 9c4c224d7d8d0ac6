#!/bin/sh
# build.sh OUTDIR - the split prototype (docs/radm2sorg.md, "A model of the lane kernel's
# traffic, and of cells split over warps"): for P = 8 and 16 warps, generates the split of
# kpp_decomp and kpp_solve, checks it on the CPU against the serial generated code (same bits),
# and builds OUTDIR/split_benchP for a GPU machine (run there: OUTDIR/split_benchP [reps]).
set -e
out=${1:?usage: tools/split_proto/build.sh OUTDIR}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
inc="-DWRFGPU_MODE_NS=strict -I src/common -I src/radm2sorg/generated"
for p in 8 16; do
  python3 tools/split_proto/gen_split.py $p "$out/split$p.h"
  g++ -O2 -ffp-contract=off $inc -DSPLIT_HEADER="\"$out/split$p.h\"" tools/split_proto/split_check.cpp -o "$out/split_check$p"
  "$out/split_check$p"
  nvcc -O3 -arch=sm_90 --fmad=false -prec-div=true $inc -DSPLIT_HEADER="\"$out/split$p.h\"" \
    tools/split_proto/split_bench.cu -o "$out/split_bench$p"
done
