#!/bin/sh
# WRFGPU_TIMING's table at exit, as WRF's ranks print it into rsl.error.*, read back by
# tools/wrf_node_bench.py: bin/test_advect_fortran (the Fortran bindings WRF calls) on the CPU
# backend prints one line per kernel with calls, kernel, H2D, D2H, call, first-call and
# first-call kernel+copy times; the parser must find all eight columns, and the figures must
# hold what they mean (the first call's parts within the totals, each call at least its own
# kernel on the CPU backend, where nothing overlaps).
cd "$(dirname "$0")/../.." || exit 2
t=bin/test_advect_fortran
[ -x $t ] || { echo "FAIL $t was not built (make check builds it)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
WRFGPU_BACKEND=cpu WRFGPU_TIMING=1 timeout 300 $t > "$d/rsl.error.0000" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL $t exited $rc:"; tail -5 "$d/rsl.error.0000"; exit 1; }
grep -q '^wrfgpu timing (.*): kernel  calls  kernel_ms  h2d_ms  d2h_ms  call_ms  first_ms  first_kc_ms$' "$d/rsl.error.0000" \
  || { echo "FAIL no WRFGPU_TIMING header with first_kc_ms:"; grep "wrfgpu timing" "$d/rsl.error.0000" | head -3; exit 1; }
python3 - "$d" <<'PY'
import os, sys
sys.path.insert(0, "tools")
import wrf_node_bench as nb
d = sys.argv[1]
lib = nb.library_times(d)
t = lib.get(os.path.join(d, "rsl.error.0000"), {})
bad = []
if sorted(t) != ["advect", "advect_pd"]:
    bad.append("kernels %s, expected advect and advect_pd" % sorted(t))
for k, v in sorted(t.items()):
    calls, kern, h2d, d2h, call, first, first_kc = v
    if first_kc is None:
        bad.append("%s: no first_kc_ms column" % k)
        continue
    if calls < 2: bad.append("%s: %d calls" % (k, calls))
    if not 0 < first <= call: bad.append("%s: first call %.1f ms not within call_ms %.1f" % (k, first, call))
    if not 0 < first_kc <= kern + h2d + d2h: bad.append("%s: first_kc_ms %.1f not within the kernels+copies %.1f" % (k, first_kc, kern + h2d + d2h))
    if first_kc > first: bad.append("%s: the first call's kernels %.1f ms longer than the call %.1f" % (k, first_kc, first))
    if h2d != 0 or d2h != 0: bad.append("%s: copies on the CPU backend (%.1f, %.1f ms)" % (k, h2d, d2h))
st = nb.steady_calls(lib)
for k, (n, c, kc, ratio, worst) in sorted(st.items()):
    if n != t[k][0] - 1 or ratio < 1.0 or ratio != worst:
        bad.append("%s: steady state %d calls, ratio %.3f (highest %.3f)" % (k, n, ratio, worst))
if sorted(st) != sorted(t): bad.append("steady-state table for %s only" % sorted(st))
if bad:
    print("FAIL " + "; ".join(bad)); sys.exit(1)
print("ok   WRFGPU_TIMING's table read by wrf_node_bench.py: " + ", ".join(
    "%s %d calls, first %.1f ms (kernels %.1f), later calls %.2fx their kernels" % (k, t[k][0], t[k][5], t[k][6], st[k][3])
    for k in sorted(t)))
PY
