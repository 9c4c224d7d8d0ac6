#!/usr/bin/env bash
# tools/wrf_gpu_bundle.sh - pack one or more built wrf.exe and one run directory so the run can
# be repeated on another machine (e.g. a GPU node) that has no NetCDF, gfortran or WRF tree.
#
#   tools/wrf_gpu_bundle.sh WRF_RUN_DIR OUTDIR [options]
#
#   WRF_RUN_DIR   a directory in which `./wrf.exe` runs: namelist.input, wrfinput_d0*, tables...
#   OUTDIR        created (must be empty or absent)
#   --exe PATH    the wrf.exe to carry (default WRF_RUN_DIR/wrf.exe, symlinks followed)
#   --exe NAME=PATH  carry PATH as NAME.exe (repeatable: several executables, e.g. stock=... and
#                 gpu=..., share one lib/; run.sh --exe NAME picks one). NAME: letters, digits,
#                 _ . - ; a PATH without NAME= is named wrf (wrf.exe).
#   --include G   carry only run-directory files matching glob G (repeatable; namelist.input
#                 always). Default: every file except outputs, logs and executables.
#   --exclude G   do not carry files matching glob G (repeatable)
#   --ref FILE    a reference output (e.g. stock-WRF wrfout at the same time) to compare with
#   --backends L  backends run.sh runs by default, in order (default "gpu cpu")
#   --no-strip    keep the symbols of the copied executables and libraries (default: the copies,
#                 never the originals, go through `strip --strip-unneeded`; a stripped wrf.exe
#                 runs the same, only a crash's backtrace loses function names and line numbers)
#   --no-icu-stub keep the real libicudata (default: replaced by a stub, see below)
#   --xz-dict MIB the xz dictionary in MiB (default: the payload's size rounded up to a power of
#                 two, 8..256; unpacking needs that much memory, packing about 6 times it)
#   --no-xz       keep the executables and lib/ unpacked (default: payload.tar.xz, which run.sh
#                 unpacks)
#
# OUTDIR gets: input/ (the run files), payload.tar.xz (NAME.exe for each executable + one lib/:
# every shared library they load except the C library family and the NVIDIA driver's libcuda,
# MPI libraries under lib/mpi/; a library that two executables need under one name but in
# different versions goes to lib/for-NAME/), run.sh, compare_wrfout.py (numpy + h5py or netCDF4;
# wrfout must be NetCDF-4 for h5py), ref/ (--ref), MANIFEST.txt. The payload is a tar compressed
# with `xz -9e`, the x86 filter and a dictionary as large as the payload.
#
# libicudata (ICU's ~30 MB of conversion and locale data): some NetCDF builds (Debian 12's) link
# libxml2, which links ICU's libicuuc, which links libicudata. wrf.exe never calls ICU:
# reading and writing NetCDF/HDF5 files does not go through libxml2's ICU encoding conversion.
# libicudata holds only data behind one exported symbol (icudt<N>_dat); the loader needs the
# library and the symbol to exist, nothing reads it unless an ICU converter is opened. So the
# bundle carries a stub of the same name that exports that symbol as 64 zero bytes (compiled
# here with cc). Were ICU ever asked for its data, it would find no valid header (a zero magic
# number) and return an error code, not read past the stub. The stub is used only if `ldd -r`
# of every executable with the bundle's lib/ resolves every library and symbol; else (or
# without cc or nm) the real library is carried.
# Nothing of WRF's source is in this script; it only copies what the user built and ran.
set -euo pipefail

die() { echo "wrf_gpu_bundle.sh: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "${BASH_SOURCE[0]}"; exit 2; }

RUN_DIR="" ; OUT="" ; REF="" ; XZ=1 ; BACKENDS="gpu cpu" ; STRIP=1 ; ICU_STUB=1 ; XZ_DICT=""
EXE_SPECS=() ; INCLUDES=() ; EXCLUDES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exe) EXE_SPECS+=("$2"); shift ;;
    --include) INCLUDES+=("$2"); shift ;;
    --exclude) EXCLUDES+=("$2"); shift ;;
    --ref) REF=$2; shift ;;
    --backends) BACKENDS=$2; shift ;;
    --no-strip) STRIP=0 ;;
    --no-icu-stub) ICU_STUB=0 ;;
    --xz-dict) XZ_DICT=$2; shift ;;
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
[ -z "$XZ_DICT" ] || [[ $XZ_DICT =~ ^[0-9]+$ && $XZ_DICT -ge 1 && $XZ_DICT -le 1536 ]] \
  || die "--xz-dict: a number of MiB, 1..1536: $XZ_DICT"

# ---- the executables: NAMES[i] is carried as NAMES[i].exe, from EXES[i] -----------------------
NAMES=() ; EXES=()
[ "${#EXE_SPECS[@]}" -gt 0 ] || EXE_SPECS=("$RUN_DIR/wrf.exe")
for s in "${EXE_SPECS[@]}"; do
  if [[ $s =~ ^([A-Za-z0-9_][A-Za-z0-9_.-]*)=(.+)$ ]]; then
    n=${BASH_REMATCH[1]}; p=${BASH_REMATCH[2]}
  else
    n=wrf; p=$s
  fi
  for m in "${NAMES[@]}"; do
    [ "$m" != "$n" ] || die "two executables named $n (name them: --exe NAME=PATH)"
  done
  [ -e "$p" ] || die "no wrf.exe: $p"
  p=$(readlink -f "$p")
  [ -f "$p" ] || die "not a file: $p"
  NAMES+=("$n"); EXES+=("$p")
done
[ -f "$RUN_DIR/namelist.input" ] || die "$RUN_DIR/namelist.input not found"
[ -z "$REF" ] || [ -f "$REF" ] || die "no such reference file: $REF"
for i in "${!EXES[@]}"; do
  if ldd "${EXES[$i]}" | grep -q 'not found'; then
    ldd "${EXES[$i]}" | grep 'not found' >&2
    die "${EXES[$i]} needs libraries not found here (set LD_LIBRARY_PATH as for running it)"
  fi
done
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

# ---- the executables and their shared libraries -----------------------------------------------
STAGE="$OUT/.stage"
mkdir -p "$STAGE/lib"
declare -A LIB_FROM=()     # lib/NAME or lib/mpi/NAME -> the file it was copied from
copy_lib() {  # exe-name soname path: into lib/ (lib/mpi/), or lib/for-EXE/ if another differs
  local n=$1 so=$2 src sub="" dst
  src=$(readlink -f "$3")
  case "$so" in
    # MPI (dmpar builds): used only where the target machine lacks them (run.sh decides), so
    # that a machine's own Open MPI, which matches its mpirun, is preferred.
    libmpi*|libopen-pal*|libopen-rte*|libpmix*|libhwloc*|libevent*|libfabric*|libucp*|libucs*|libuct*|libucm*|libpsm*|libibverbs*|librdmacm*|libnl-*|libmunge*)
      sub=mpi/ ;;
  esac
  if [ -z "${LIB_FROM[$sub$so]:-}" ]; then
    LIB_FROM[$sub$so]=$src; dst="$STAGE/lib/$sub"
  elif [ "${LIB_FROM[$sub$so]}" = "$src" ] || cmp -s "${LIB_FROM[$sub$so]}" "$src"; then
    return 1
  else
    echo "  $so: $n.exe loads $src, another executable ${LIB_FROM[$sub$so]}: $n's copy in lib/${sub}for-$n/"
    dst="$STAGE/lib/${sub}for-$n/"
  fi
  mkdir -p "$dst"
  cp -L "$src" "$dst$so"
  chmod u+w "$dst$so"
}
for i in "${!EXES[@]}"; do
  n=${NAMES[$i]}; e=${EXES[$i]}
  cp "$e" "$STAGE/$n.exe"
  chmod u+w "$STAGE/$n.exe"
  n_lib=0; n_new=0
  while read -r so path; do
    case "$so" in
      linux-vdso*|ld-linux*|libc.so*|libm.so*|libmvec.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*) continue ;;
      libcuda.so*|libnvidia-*) continue ;;   # the driver of the target machine
    esac
    [ -f "$path" ] || continue
    n_lib=$((n_lib + 1))
    if copy_lib "$n" "$so" "$path"; then n_new=$((n_new + 1)); fi
  done < <(ldd "$e" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
  echo "$n.exe: $e ($(du -h "$e" | cut -f1)), $n_lib shared libraries ($n_new of them new to lib/)"
done

# ---- strip the copies ---------------------------------------------------------------------
before=$(du -sb "$STAGE" | cut -f1)
if [ "$STRIP" = 1 ]; then
  command -v strip >/dev/null || die "no strip (binutils) here; install it or pass --no-strip"
  while IFS= read -r -d '' f; do
    strip --strip-unneeded "$f" 2>/dev/null || echo "  could not strip $(basename "$f"): carried as it is"
  done < <(find "$STAGE" -type f -print0)
  echo "stripped: $((before / 1048576)) MiB -> $(( $(du -sb "$STAGE" | cut -f1) / 1048576 )) MiB"
fi

# ---- libicudata -> a stub (see the header) ----------------------------------------------------
libpath_of() {  # exe-name: the LD_LIBRARY_PATH run.sh gives it, the bundled MPI last
  local n=$1 p="$STAGE/lib"
  [ -d "$STAGE/lib/for-$n" ] && p="$STAGE/lib/for-$n:$p"
  [ -d "$STAGE/lib/mpi/for-$n" ] && p="$p:$STAGE/lib/mpi/for-$n"
  [ -d "$STAGE/lib/mpi" ] && p="$p:$STAGE/lib/mpi"
  echo "$p"
}
ICU_NOTE=""
if [ "$ICU_STUB" = 1 ]; then
  stubbed=()
  for f in "$STAGE"/lib/libicudata.so.* "$STAGE"/lib/for-*/libicudata.so.*; do
    [ -f "$f" ] || continue
    if ! command -v cc >/dev/null || ! command -v nm >/dev/null; then
      ICU_NOTE="$(basename "$f"): the real library (no cc or nm here for the stub)"; break
    fi
    sym=$(nm -D --defined-only "$f" | awk '$3 ~ /^icudt[0-9]+[a-z]?_dat$/ {print $3; exit}')
    [ -n "$sym" ] || { ICU_NOTE="$(basename "$f"): the real library (no icudt*_dat symbol in it)"; continue; }
    printf '/* %s stub: see tools/wrf_gpu_bundle.sh */\n__attribute__((aligned(16))) const unsigned char %s[64] = {0};\n' \
      "$(basename "$f")" "$sym" > "$STAGE/icustub.c"
    mv "$f" "$f.real"
    if cc -shared -fPIC -nostdlib -s -Wl,-soname,"$(basename "$f")" -o "$f" "$STAGE/icustub.c"; then
      stubbed+=("$f")
    else
      mv "$f.real" "$f"; ICU_NOTE="$(basename "$f"): the real library (cc could not build the stub)"
    fi
    rm -f "$STAGE/icustub.c"
  done
  if [ "${#stubbed[@]}" -gt 0 ]; then
    ok=1
    for i in "${!NAMES[@]}"; do
      r=$(LD_LIBRARY_PATH="$(libpath_of "${NAMES[$i]}")" ldd -r "$STAGE/${NAMES[$i]}.exe" 2>&1) || ok=0
      if grep -q 'not found\|undefined symbol\|error' <<< "$r"; then
        ok=0; grep 'not found\|undefined symbol\|error' <<< "$r" | head -5 >&2
      fi
    done
    for f in "${stubbed[@]}"; do
      if [ "$ok" = 1 ]; then
        ICU_NOTE="$(basename "$f"): a stub exporting $(nm -D --defined-only "$f" | awk '$3 ~ /^icudt/ {print $3}') (real: $(( $(stat -c %s "$f.real") / 1048576 )) MiB; see tools/wrf_gpu_bundle.sh)"
        rm -f "$f.real"
      else
        mv "$f.real" "$f"
        ICU_NOTE="$(basename "$f"): the real library (with the stub, ldd -r did not resolve everything)"
      fi
    done
  fi
  [ -z "$ICU_NOTE" ] || echo "$ICU_NOTE"
fi

{
  for i in "${!NAMES[@]}"; do
    echo "${NAMES[$i]}.exe: ${EXES[$i]} ($(date -u +%Y-%m-%dT%H:%MZ) on $(hostname))"
    echo "  sha256 of the original: $(sha256sum "${EXES[$i]}" | cut -d' ' -f1)"
  done
  echo "stripped copies: $([ "$STRIP" = 1 ] && echo yes || echo no)"
  [ -z "$ICU_NOTE" ] || echo "$ICU_NOTE"
  echo "glibc here: $(ldd --version | head -1)"
  echo "libraries:"; (cd "$STAGE" && find lib -type f | sort | sed 's/^/  /')
} > "$OUT/MANIFEST.txt"

# ---- payload.tar.xz -------------------------------------------------------------------------
exe_files=(); for n in "${NAMES[@]}"; do exe_files+=("$n.exe"); done
if [ "$XZ" = 1 ]; then
  size=$(du -sb "$STAGE" | cut -f1)
  if [ -z "$XZ_DICT" ]; then   # a dictionary the payload's size: as good as any larger one
    XZ_DICT=8
    while [ $((XZ_DICT * 1048576)) -lt "$size" ] && [ "$XZ_DICT" -lt 256 ]; do XZ_DICT=$((XZ_DICT * 2)); done
  fi
  sort_opt=(); tar --sort=name -cf /dev/null -C "$STAGE" lib 2>/dev/null && sort_opt=(--sort=name)
  echo "compressing $((size / 1048576)) MiB: xz -9e, x86 filter, ${XZ_DICT} MiB dictionary ..."
  tar -C "$STAGE" "${sort_opt[@]}" -cf - "${exe_files[@]}" lib \
    | xz -T1 --x86 --lzma2=preset=9e,dict="${XZ_DICT}MiB" > "$OUT/payload.tar.xz"
  rm -rf "$STAGE"
  echo "payload.tar.xz: $(du -h "$OUT/payload.tar.xz" | cut -f1) (unpacked: $((size / 1048576)) MiB)"
else
  mv "$STAGE/lib" "$OUT/"
  for f in "${exe_files[@]}"; do mv "$STAGE/$f" "$OUT/"; done
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
# Runs this bundle's executables once per backend:
#   ./run.sh [--exe NAME]... [BACKEND...]
# Executables: ${NAMES[*]} (NAME.exe; --exe NAME, repeatable, or EXE=NAME[,NAME]: only those;
# default: each in turn). BACKEND is a value of WRFGPU_BACKEND (gpu, cpu, auto; default:
# $BACKENDS). Each run goes to out_[NAME_]BACKEND/ (NAME_ where the bundle has an executable
# not named wrf); the wall time of each is printed, then each output is compared with ref/
# (if carried). NP=N (a dmpar wrf.exe): mpirun -np N, outputs in out_..._npN[_TAG]/ (TAG from
# the environment). ./run.sh --list prints the executables' names.
set -uo pipefail
HERE=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
DEFAULT_BACKENDS="$BACKENDS"
ALL_EXES="${NAMES[*]}"
EOF
cat >> "$OUT/run.sh" <<'EOF'
cd "$HERE" || exit 1
SEL=(); BACKENDS=()
[ -n "${EXE:-}" ] && read -r -a SEL <<< "${EXE//,/ }"
while [ $# -gt 0 ]; do
  case "$1" in
    --exe) [ $# -ge 2 ] || { echo "run.sh: --exe needs a name: $ALL_EXES" >&2; exit 2; }
           SEL+=("$2"); shift ;;
    --exe=*) SEL+=("${1#--exe=}") ;;
    --list) echo "$ALL_EXES"; exit 0 ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1 (--exe NAME, --list)" >&2; exit 2 ;;
    *) BACKENDS+=("$1") ;;
  esac
  shift
done
[ ${#SEL[@]} -gt 0 ] || read -r -a SEL <<< "$ALL_EXES"
for n in "${SEL[@]}"; do
  case " $ALL_EXES " in *" $n "*) ;; *) echo "run.sh: no executable named $n here: $ALL_EXES" >&2; exit 2 ;; esac
done
[ ${#BACKENDS[@]} -gt 0 ] || read -r -a BACKENDS <<< "$DEFAULT_BACKENDS"
for n in $ALL_EXES; do
  [ -x "$HERE/$n.exe" ] && continue
  [ -f payload.tar.xz ] || { echo "run.sh: no $n.exe and no payload.tar.xz" >&2; exit 1; }
  echo "unpacking payload.tar.xz ..."
  xz -dc payload.tar.xz | tar -xf - || exit 1
  break
done
LD0=${LD_LIBRARY_PATH:-}
libpath() {  # NAME: its LD_LIBRARY_PATH (lib/for-NAME/ first: a version only NAME loads)
  local p="$HERE/lib"
  [ -d "$HERE/lib/for-$1" ] && p="$HERE/lib/for-$1:$p"
  echo "$p${LD0:+:$LD0}"
}
# MPI libraries this machine lacks come from lib/mpi (linked into lib/); the machine's own
# Open MPI is used where it has one. Repeated: a library linked in may need others.
if [ -d "$HERE/lib/mpi" ]; then
  for n in "${SEL[@]}"; do
    for _ in 1 2 3 4 5 6; do
      linked=0
      for m in $(LD_LIBRARY_PATH=$(libpath "$n") ldd "$HERE/$n.exe" | awk '$3 == "not" {print $1}'); do
        if [ -f "$HERE/lib/mpi/for-$n/$m" ]; then
          mkdir -p "$HERE/lib/for-$n"; ln -sf "../mpi/for-$n/$m" "$HERE/lib/for-$n/$m"
        elif [ -f "$HERE/lib/mpi/$m" ]; then
          ln -sf "mpi/$m" "$HERE/lib/$m"
        else
          continue
        fi
        echo "using the bundled $m"; linked=1
      done
      [ "$linked" = 1 ] || break
    done
  done
fi
# NP > 1: run with mpirun -np NP (a dmpar wrf.exe); TAG: a suffix for the output directories.
NP=${NP:-1}
TAG=${TAG:-}
ulimit -s unlimited 2>/dev/null || true
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} (threads of libwrfgpu's CPU backend), $(nproc --all) cores"
SUMMARY=(); RUNS=()
for n in "${SEL[@]}"; do
  for be in "${BACKENDS[@]}"; do
    d="$HERE/out_$be"
    [ "$ALL_EXES" = wrf ] || d="$HERE/out_${n}_$be"
    [ "$NP" -gt 1 ] && d="${d}_np$NP"
    [ -n "$TAG" ] && d="${d}_$TAG"
    rm -rf "$d"; mkdir -p "$d"
    for f in "$HERE"/input/*; do ln -s "$f" "$d/"; done
    echo "== $n.exe, WRFGPU_BACKEND=$be: running in $d"
    lp=$(libpath "$n")
    t0=$(date +%s.%N)
    if [ "$NP" -gt 1 ]; then
      # Unbound ranks with a share of the cores each: the library's host side (packing into
      # page-locked staging, input checks) runs on the rank's OpenMP threads, and mpirun's
      # default binding for 1 or 2 ranks is one core each.
      omp=${OMP_NUM_THREADS:-$(( $(nproc --all) / NP > 0 ? $(nproc --all) / NP : 1 ))}
      xs=(-x WRFGPU_BACKEND -x LD_LIBRARY_PATH -x OMP_NUM_THREADS)
      for v in CUDA_VISIBLE_DEVICES WRFGPU_QUIET; do [ -n "${!v:-}" ] && xs+=(-x "$v"); done
      ( cd "$d" && LD_LIBRARY_PATH=$lp WRFGPU_BACKEND=$be OMP_NUM_THREADS=$omp mpirun --allow-run-as-root \
          --oversubscribe --bind-to none "${xs[@]}" -np "$NP" "$HERE/$n.exe" > wrf.log 2>&1 )
    else
      ( cd "$d" && LD_LIBRARY_PATH=$lp WRFGPU_BACKEND=$be "$HERE/$n.exe" > wrf.log 2>&1 )
    fi
    rc=$?
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    steps=$(grep -h 'Timing for main' "$d"/wrf.log "$d"/rsl.out.0000 2>/dev/null | awk '{s+=$(NF-2); n++} END{printf "%d steps, %.2f s", n, s}')
    grep -h 'wrfgpu' "$d"/wrf.log "$d"/rsl.out.0000 2>/dev/null | sort -u | sed 's/^/   /'
    tail -1 "$d/wrf.log" | sed 's/^/   last line: /'
    SUMMARY+=("$(printf '%-12s %-5s rc=%-3s wall %7s s  (WRF "Timing for main": %s)  outputs: %s' "$n.exe" "$be" "$rc" "$wall" "$steps" "$d")")
    RUNS+=("$d")
  done
done
echo; echo "== summary"; printf '%s\n' "${SUMMARY[@]}"
if [ -d "$HERE/ref" ]; then
  ref=$(ls "$HERE"/ref/wrfout_* 2>/dev/null | head -1)
  for od in "${RUNS[@]}"; do
    out=$(ls "$od"/wrfout_* 2>/dev/null | head -1)
    [ -n "$ref" ] && [ -n "$out" ] || continue
    echo; echo "== $(basename "$od") vs ref ($(basename "$ref"))"
    python3 "$HERE/compare_wrfout.py" "$ref" "$out" --json "$od/compare.json"
  done
fi
EOF
chmod +x "$OUT/run.sh"
echo "bundle: $OUT ($(du -sh "$OUT" | cut -f1)); run it there with: $OUT/run.sh"
