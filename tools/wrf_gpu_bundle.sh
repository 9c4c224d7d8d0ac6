#!/usr/bin/env bash
# tools/wrf_gpu_bundle.sh - pack a built wrf.exe and one run directory so the run can be
# repeated on another machine (e.g. a GPU node) that has no NetCDF, gfortran or WRF tree.
#
#   tools/wrf_gpu_bundle.sh WRF_RUN_DIR OUTDIR [options]
#
#   WRF_RUN_DIR   a directory in which `./wrf.exe` runs: namelist.input, wrfinput_d0*, tables...
#   OUTDIR        created (must be empty or absent)
#   --exe PATH    the wrf.exe to carry (default WRF_RUN_DIR/wrf.exe, symlinks followed)
#   --include G   carry only run-directory files matching glob G (repeatable; namelist.input
#                 always). Default: every file except outputs, logs and executables.
#   --exclude G   do not carry files matching glob G (repeatable)
#   --ref FILE    a reference output (e.g. stock-WRF wrfout at the same time) to compare with
#   --backends L  backends run.sh runs by default, in order (default "gpu cpu")
#   --no-xz       keep wrf.exe and lib/ unpacked (default: payload.tar.xz, unpacked by run.sh)
#
# OUTDIR gets: input/ (the run files), payload.tar.xz (wrf.exe + lib/: every shared library
# wrf.exe loads except the C library family and the NVIDIA driver's libcuda), run.sh,
# compare_wrfout.py (numpy + h5py or netCDF4; wrfout must be NetCDF-4 for h5py), ref/ (--ref).
# Nothing of WRF's source is in this script; it only copies what the user built and ran.
set -euo pipefail

die() { echo "wrf_gpu_bundle.sh: $*" >&2; exit 1; }
usage() { sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

RUN_DIR="" ; OUT="" ; EXE="" ; REF="" ; XZ=1 ; BACKENDS="gpu cpu"
INCLUDES=() ; EXCLUDES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exe) EXE=$2; shift ;;
    --include) INCLUDES+=("$2"); shift ;;
    --exclude) EXCLUDES+=("$2"); shift ;;
    --ref) REF=$2; shift ;;
    --backends) BACKENDS=$2; shift ;;
    --no-xz) XZ=0 ;;
    -h|--help) usage ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) if [ -z "$RUN_DIR" ]; then RUN_DIR=$1; elif [ -z "$OUT" ]; then OUT=$1; else usage; fi ;;
  esac
  shift
done
[ -n "$RUN_DIR" ] && [ -n "$OUT" ] || usage
[ -d "$RUN_DIR" ] || die "no such directory: $RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
[ -n "$EXE" ] || EXE="$RUN_DIR/wrf.exe"
[ -e "$EXE" ] || die "no wrf.exe: $EXE"
EXE=$(readlink -f "$EXE")
[ -f "$RUN_DIR/namelist.input" ] || die "$RUN_DIR/namelist.input not found"
[ -z "$REF" ] || [ -f "$REF" ] || die "no such reference file: $REF"
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then die "$OUT exists and is not empty"; fi
mkdir -p "$OUT/input"
OUT=$(cd "$OUT" && pwd)

matches() {  # name glob...
  local n=$1 g; shift
  for g in "$@"; do
    # shellcheck disable=SC2053
    [[ $n == $g ]] && return 0
  done
  return 1
}

# ---- run-directory files ------------------------------------------------------------------
n_in=0
for f in "$RUN_DIR"/*; do
  b=$(basename "$f")
  [ -f "$f" ] || continue                       # regular files and links to them
  [ "$b" = namelist.input ] || {
    matches "$b" 'wrfout_*' 'wrfrst_*' 'rsl.*' '*.log' 'namelist.output' '*.exe' 'core*' '*.o' && continue
    [ "${#EXCLUDES[@]}" -gt 0 ] && matches "$b" "${EXCLUDES[@]}" && continue
    [ "${#INCLUDES[@]}" -gt 0 ] && ! matches "$b" "${INCLUDES[@]}" && continue
  }
  cp -L "$f" "$OUT/input/$b"
  n_in=$((n_in + 1))
done
echo "input: $n_in files from $RUN_DIR ($(du -sh "$OUT/input" | cut -f1))"

# ---- wrf.exe and its shared libraries -------------------------------------------------------
STAGE="$OUT/.stage"
mkdir -p "$STAGE/lib"
cp "$EXE" "$STAGE/wrf.exe"
if ldd "$EXE" | grep -q 'not found'; then
  ldd "$EXE" | grep 'not found' >&2
  die "wrf.exe needs libraries not found here (set LD_LIBRARY_PATH as for running it)"
fi
n_lib=0
while read -r name path; do
  case "$name" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libmvec.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*) continue ;;
    libcuda.so*|libnvidia-*) continue ;;   # the driver of the target machine
  esac
  [ -f "$path" ] || continue
  case "$name" in
    # MPI (dmpar builds): used only where the target machine lacks them (run.sh decides), so
    # that a machine's own Open MPI, which matches its mpirun, is preferred.
    libmpi*|libopen-pal*|libopen-rte*|libpmix*|libhwloc*|libevent*|libfabric*|libucp*|libucs*|libuct*|libucm*|libpsm*|libibverbs*|librdmacm*|libnl-*|libmunge*)
      mkdir -p "$STAGE/lib/mpi"; cp -L "$path" "$STAGE/lib/mpi/$name" ;;
    *) cp -L "$path" "$STAGE/lib/$name" ;;
  esac
  n_lib=$((n_lib + 1))
done < <(ldd "$EXE" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
echo "wrf.exe: $(du -h "$EXE" | cut -f1), $n_lib shared libraries ($(du -sh "$STAGE/lib" | cut -f1))"
{
  echo "wrf.exe: $EXE ($(date -u +%Y-%m-%dT%H:%MZ) on $(hostname))"
  echo "sha256: $(sha256sum "$EXE" | cut -d' ' -f1)"
  echo "glibc here: $(ldd --version | head -1)"
  echo "libraries:"; ls "$STAGE/lib" | sed 's/^/  /'
} > "$OUT/MANIFEST.txt"
if [ "$XZ" = 1 ]; then
  tar -C "$STAGE" -cf - wrf.exe lib | xz -T0 -6 > "$OUT/payload.tar.xz"
  rm -rf "$STAGE"
  echo "payload.tar.xz: $(du -h "$OUT/payload.tar.xz" | cut -f1)"
else
  mv "$STAGE/wrf.exe" "$STAGE/lib" "$OUT/"
  rmdir "$STAGE"
fi

if [ -n "$REF" ]; then
  mkdir -p "$OUT/ref"
  cp -L "$REF" "$OUT/ref/"
  echo "reference: ref/$(basename "$REF")"
fi

# ---- compare_wrfout.py ----------------------------------------------------------------------
cat > "$OUT/compare_wrfout.py" <<'PYEOF'
#!/usr/bin/env python3
"""compare_wrfout.py REF TEST [--frame N] [--vars A,B,..] [--json FILE]

Compares two WRF history files at one output frame (default: the last frame of each; their
Times must agree). For each 3-D field: the per-level mean variance (mean over levels of
|(mean_ref - mean_test)/mean_ref|, levels whose reference mean is 0 skipped), the largest
absolute difference and that difference relative to max|ref|. mvar_floor: the same mean
variance without the levels whose |reference mean| is below 1e-6 (--floor) of the largest
level mean (e.g. QSNOW levels holding 1e-20..1e-45 kg/kg, where relative means are noise). For RAINNC (2-D): the domain
totals and their relative difference. Reads NetCDF-4 through h5py (or netCDF4 if present).
Exit status 0 (a report, no pass/fail), 2 bad input."""
import json, sys
import numpy as np

DEFAULT = ["T", "QVAPOR", "QCLOUD", "QRAIN", "QICE", "QSNOW", "U", "V", "W", "RAINNC"]


class Reader:
    def __init__(self, path):
        self.path = path
        try:
            import h5py
            self.f = h5py.File(path, "r")
            self.kind = "h5py"
        except ImportError:
            import netCDF4
            self.f = netCDF4.Dataset(path)
            self.f.set_auto_mask(False)
            self.kind = "netCDF4"
        except OSError as e:
            sys.exit("compare_wrfout.py: %s: cannot read as NetCDF-4/HDF5 (%s)" % (path, e))

    def var(self, name):
        src = self.f if self.kind == "h5py" else self.f.variables
        if name not in src:
            sys.exit("compare_wrfout.py: %s: no variable %s" % (self.path, name))
        return src[name]

    def times(self):
        t = np.asarray(self.var("Times")[:])
        return ["".join(c.decode() if isinstance(c, bytes) else str(c) for c in row) for row in t]


def per_level_mean_variance(r, t, floor=0.0):
    """floor > 0: also skip levels with |mean_ref| < floor * max over levels of |mean_ref|."""
    if r.ndim == 2:
        r, t = r[None], t[None]
    mr = r.reshape(r.shape[0], -1).mean(axis=1)
    mt = t.reshape(t.shape[0], -1).mean(axis=1)
    top = float(np.max(np.abs(mr))) if mr.size else 0.0
    keep = (mr != 0.0) & (np.abs(mr) >= floor * top)
    vals = np.abs((mr[keep] - mt[keep]) / mr[keep])
    return (float(np.mean(vals)) if vals.size else 0.0), int(vals.size)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ref"); ap.add_argument("test")
    ap.add_argument("--frame", type=int, default=None)
    ap.add_argument("--vars", default=",".join(DEFAULT))
    ap.add_argument("--json", default=None)
    ap.add_argument("--floor", type=float, default=1e-6,
                    help="mvar_floor column: also skip levels with |mean_ref| < FLOOR * max level |mean_ref|")
    a = ap.parse_args(argv)
    R, T = Reader(a.ref), Reader(a.test)
    tr, tt = R.times(), T.times()
    fr = len(tr) - 1 if a.frame is None else a.frame
    ft = len(tt) - 1 if a.frame is None else a.frame
    if tr[fr] != tt[ft]:
        sys.exit("compare_wrfout.py: frames differ in time: %s vs %s" % (tr[fr], tt[ft]))
    print("reference %s\ntest      %s\ntime      %s\n" % (a.ref, a.test, tr[fr]))
    hdr = "%-8s %-12s %13s %13s %11s %13s %14s %14s %6s" % ("field", "shape", "perlevel_mvar",
          "mvar_floor", "max_abs", "max_abs/|ref|", "mean_ref", "mean_test", "nonfin")
    print(hdr); print("-" * len(hdr))
    rows = []
    for name in [v for v in a.vars.split(",") if v]:
        r = np.asarray(R.var(name)[fr], dtype=np.float64)
        t = np.asarray(T.var(name)[ft], dtype=np.float64)
        if r.shape != t.shape:
            sys.exit("compare_wrfout.py: %s: shapes differ %s vs %s" % (name, r.shape, t.shape))
        nonfin = int(np.count_nonzero(~np.isfinite(t)))
        d = np.abs(r - t)
        mx = float(np.nanmax(d)) if d.size else 0.0
        scale = float(np.max(np.abs(r))) or 1.0
        mv, nlev = per_level_mean_variance(r, t)
        mvf, nlevf = per_level_mean_variance(r, t, a.floor)
        row = dict(field=name, shape=list(r.shape), perlevel_mean_variance=mv, levels_used=nlev,
                   perlevel_mean_variance_floor=mvf, levels_used_floor=nlevf,
                   max_abs_diff=mx, max_abs_diff_rel=mx / scale, mean_ref=float(r.mean()),
                   mean_test=float(t.mean()), nonfinite=nonfin)
        if name == "RAINNC":
            row["total_ref"] = float(r.sum()); row["total_test"] = float(t.sum())
            row["total_rel_diff"] = (row["total_test"] - row["total_ref"]) / row["total_ref"] if row["total_ref"] else 0.0
        rows.append(row)
        print("%-8s %-12s %13.3e %13.3e %11.3e %13.3e %14.6e %14.6e %6d" % (name, "x".join(map(str, r.shape)),
              mv, mvf, mx, mx / scale, row["mean_ref"], row["mean_test"], nonfin))
    for row in rows:
        if "total_ref" in row:
            print("\nRAINNC domain total (mm summed over columns): ref %.6e  test %.6e  rel diff %.3e"
                  % (row["total_ref"], row["total_test"], row["total_rel_diff"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(ref=a.ref, test=a.test, time=tr[fr], fields=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PYEOF
chmod +x "$OUT/compare_wrfout.py"

# ---- run.sh -----------------------------------------------------------------------------
cat > "$OUT/run.sh" <<EOF
#!/usr/bin/env bash
# Runs this bundle's wrf.exe once per backend: ./run.sh [BACKEND...]   (default: $BACKENDS)
# BACKEND is a value of WRFGPU_BACKEND (gpu, cpu, auto). Each run goes to out_<BACKEND>/;
# the wall time of each is printed, then each output is compared with ref/ (if carried).
# NP=N (a dmpar wrf.exe): mpirun -np N, outputs in out_<BACKEND>_npN[_TAG]/ (TAG from the environment).
set -uo pipefail
HERE=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
DEFAULT_BACKENDS="$BACKENDS"
EOF
cat >> "$OUT/run.sh" <<'EOF'
cd "$HERE"
if [ ! -x "$HERE/wrf.exe" ]; then
  [ -f payload.tar.xz ] || { echo "run.sh: no wrf.exe and no payload.tar.xz" >&2; exit 1; }
  echo "unpacking payload.tar.xz ..."
  xz -dc payload.tar.xz | tar -xf - || exit 1
fi
export LD_LIBRARY_PATH="$HERE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# MPI libraries this machine lacks come from lib/mpi (linked into lib/); the machine's own
# Open MPI is used where it has one.
if [ -d "$HERE/lib/mpi" ]; then
  for m in $(ldd "$HERE/wrf.exe" | awk '$3 == "not" {print $1}'); do
    [ -f "$HERE/lib/mpi/$m" ] && ln -sf "mpi/$m" "$HERE/lib/$m" && echo "using the bundled $m"
  done
fi
# NP > 1: run with mpirun -np NP (a dmpar wrf.exe); TAG: a suffix for the output directories.
NP=${NP:-1}
TAG=${TAG:-}
ulimit -s unlimited 2>/dev/null || true
BACKENDS=("$@"); [ ${#BACKENDS[@]} -gt 0 ] || read -r -a BACKENDS <<< "$DEFAULT_BACKENDS"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} (threads of libwrfgpu's CPU backend), $(nproc --all) cores"
SUMMARY=()
for be in "${BACKENDS[@]}"; do
  d="$HERE/out_$be"
  [ "$NP" -gt 1 ] && d="${d}_np$NP"
  [ -n "$TAG" ] && d="${d}_$TAG"
  rm -rf "$d"; mkdir -p "$d"
  for f in "$HERE"/input/*; do ln -s "$f" "$d/"; done
  echo "== WRFGPU_BACKEND=$be: running wrf.exe in $d"
  t0=$(date +%s.%N)
  if [ "$NP" -gt 1 ]; then
    # Unbound ranks with a share of the cores each: the library's host side (packing into
    # page-locked staging, input checks) runs on the rank's OpenMP threads, and mpirun's
    # default binding for 1 or 2 ranks is one core each.
    omp=${OMP_NUM_THREADS:-$(( $(nproc --all) / NP > 0 ? $(nproc --all) / NP : 1 ))}
    xs=(-x WRFGPU_BACKEND -x LD_LIBRARY_PATH -x OMP_NUM_THREADS)
    for v in CUDA_VISIBLE_DEVICES WRFGPU_QUIET; do [ -n "${!v:-}" ] && xs+=(-x "$v"); done
    ( cd "$d" && WRFGPU_BACKEND=$be OMP_NUM_THREADS=$omp mpirun --allow-run-as-root --oversubscribe \
        --bind-to none "${xs[@]}" -np "$NP" "$HERE/wrf.exe" > wrf.log 2>&1 )
  else
    ( cd "$d" && WRFGPU_BACKEND=$be "$HERE/wrf.exe" > wrf.log 2>&1 )
  fi
  rc=$?
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  steps=$(grep -h 'Timing for main' "$d"/wrf.log "$d"/rsl.out.0000 2>/dev/null | awk '{s+=$(NF-2); n++} END{printf "%d steps, %.2f s", n, s}')
  grep -h 'wrfgpu' "$d"/wrf.log "$d"/rsl.out.0000 2>/dev/null | sort -u | sed 's/^/   /'
  tail -1 "$d/wrf.log" | sed 's/^/   last line: /'
  SUMMARY+=("$(printf '%-5s rc=%-3s wall %7s s  (WRF "Timing for main": %s)  outputs: %s' "$be" "$rc" "$wall" "$steps" "$d")")
done
echo; echo "== summary"; printf '%s\n' "${SUMMARY[@]}"
if [ -d "$HERE/ref" ]; then
  ref=$(ls "$HERE"/ref/wrfout_* 2>/dev/null | head -1)
  for be in "${BACKENDS[@]}"; do
    od="$HERE/out_$be"; [ "$NP" -gt 1 ] && od="${od}_np$NP"; [ -n "$TAG" ] && od="${od}_$TAG"
    out=$(ls "$od"/wrfout_* 2>/dev/null | head -1)
    [ -n "$ref" ] && [ -n "$out" ] || continue
    echo; echo "== $(basename "$od") vs ref ($(basename "$ref"))"
    python3 "$HERE/compare_wrfout.py" "$ref" "$out" --json "$od/compare.json"
  done
fi
EOF
chmod +x "$OUT/run.sh"
echo "bundle: $OUT ($(du -sh "$OUT" | cut -f1)); run it there with: $OUT/run.sh"
