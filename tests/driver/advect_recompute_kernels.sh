#!/bin/sh
# The alternative PD kernels that recompute every face flux in each cell
# (WRFGPU_ADVECT_FACES=0, kept for comparison; docs/performance.md) give the CPU backend's
# bits on every advection capture and reference, as the default kernels do. Needs a GPU:
# exit 77 (reported as skipped) without one.
cd "$(dirname "$0")/../.." || exit 2
if bin/wrfgpu_replay --version 2>&1 | grep -q "GPU: none"; then
  echo "skipped: no GPU visible"
  exit 77
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
WRFGPU_ADVECT_FACES=0 bin/wrfgpu_replay test_data/*advect*.nc --backend both --mode strict --quiet > "$log" 2>&1
rc=$?
tail -n 1 "$log"
# strict: the GPU against the CPU is bitwise (threshold 0), against WRF within the usual rule
[ $rc -eq 0 ] || { grep -E "FAIL|error" "$log" | head; echo "FAIL: exit $rc"; exit 1; }
