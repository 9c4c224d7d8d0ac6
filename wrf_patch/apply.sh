#!/usr/bin/env bash
# wrf_patch/apply.sh - patch a WRF v4.7.x source tree for wrfgpu (RUN_ON_GPU), or undo it.
#
#   wrf_patch/apply.sh WRF_DIR [--wrfgpu DIR] [--capture] [--no-gpu] [--revert] [--check]
#
#   (default)      apply wrf_patch/gpu/*.patch and set configure.wrf up for RUN_ON_GPU
#   --capture      also apply the capture-mode patches (wrf_patch/capture) and set up
#                  -DWRFGPU_CAPTURE (the capture writer is built into WRF_DIR/wrfgpu_capture)
#   --no-gpu       with --capture: capture mode only (a stock WRF that writes captures)
#   --revert       undo whatever of the above is applied (patches and configure.wrf lines)
#   --check        say what is applied, change nothing
#   --wrfgpu DIR   the wrfgpu tree or install prefix holding include/*.mod and lib/libwrfgpu.a
#                  (default: the repository this script belongs to)
#
# Patches are first applied to a scratch copy of the files they touch; WRF_DIR is changed only
# if every patch applies there. A patch already applied is left alone (running twice changes
# nothing). configure.wrf (if ./configure has been run) gets -DRUN_ON_GPU in ARCH_LOCAL,
# $(WRFGPU_INCLUDE) in INCLUDE_MODULES and a marked block at its end with WRFGPU_INCLUDE and
# LIB_LOCAL; without configure.wrf the lines to add are printed. Re-running ./configure
# rewrites configure.wrf: run this script again afterwards.
# Exit status: 0 done (or nothing to do), 1 refused/failed (nothing changed), 2 usage.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WRFGPU=$(cd "$HERE/.." && pwd)
WRF_DIR="" ; REVERT=0 ; CAPTURE=0 ; GPU=1 ; CHECK=0

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "apply.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --revert) REVERT=1 ;;
    --capture) CAPTURE=1 ;;
    --no-gpu) GPU=0 ;;
    --check) CHECK=1 ;;
    --wrfgpu) [ $# -ge 2 ] || usage; WRFGPU=$(cd "$2" && pwd) || die "no such directory: $2"; shift ;;
    --wrfgpu=*) WRFGPU=$(cd "${1#--wrfgpu=}" && pwd) || die "no such directory: ${1#--wrfgpu=}" ;;
    -h|--help) usage ;;
    -*) echo "apply.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$WRF_DIR" ] || usage; WRF_DIR=$1 ;;
  esac
  shift
done
[ -n "$WRF_DIR" ] || usage
[ -d "$WRF_DIR" ] || die "no such directory: $WRF_DIR"
WRF_DIR=$(cd "$WRF_DIR" && pwd)
[ "$GPU" = 1 ] || [ "$CAPTURE" = 1 ] || [ "$REVERT" = 1 ] || die "--no-gpu needs --capture"
command -v patch >/dev/null || die "GNU patch is needed"

# ---- WRF version: 4.7.x only ----------------------------------------------------------------
ver=""
if [ -f "$WRF_DIR/inc/version_decl" ]; then
  ver=$(sed -n "s/.*release_version *= *'V\{0,1\}\([0-9][0-9.]*\)'.*/\1/p" "$WRF_DIR/inc/version_decl" | head -1)
fi
if [ -z "$ver" ] && [ -f "$WRF_DIR/README" ]; then
  ver=$(sed -n 's/^WRF Model Version \([0-9][0-9.]*\).*/\1/p' "$WRF_DIR/README" | head -1)
fi
[ -n "$ver" ] || die "$WRF_DIR does not look like a WRF source tree (no inc/version_decl or README version line)"
case "$ver" in
  4.7|4.7.*) ;;
  *) die "WRF $ver in $WRF_DIR: these patches are for WRF v4.7.x only; refusing to touch it" ;;
esac

# ---- patch sets -------------------------------------------------------------------------
PATCHES=()
[ "$GPU" = 1 ] && PATCHES+=("$HERE"/gpu/*.patch)
[ "$CAPTURE" = 1 ] && PATCHES+=("$HERE"/capture/*.patch)
if [ "$REVERT" = 1 ]; then   # revert: everything we know about, whatever the flags
  PATCHES=("$HERE"/gpu/*.patch "$HERE"/capture/*.patch)
fi
for p in "${PATCHES[@]}"; do [ -f "$p" ] || die "missing patch $p"; done

files_of() { sed -n 's/^+++ [^/]*\/\([^[:space:]]*\).*/\1/p' "$1"; }
PATCH_OPTS=(-p1 -s -f --no-backup-if-mismatch -r -)

# state of one patch in directory $2: applied | unapplied | conflict
state_of() {
  if patch -d "$2" "${PATCH_OPTS[@]}" -R --dry-run < "$1" >/dev/null 2>&1; then echo applied
  elif patch -d "$2" "${PATCH_OPTS[@]}" -N --dry-run < "$1" >/dev/null 2>&1; then echo unapplied
  else echo conflict; fi
}

# scratch copy of every file the patches touch
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
for p in "${PATCHES[@]}"; do
  for f in $(files_of "$p"); do
    [ -f "$WRF_DIR/$f" ] || die "$(basename "$p"): $f is not in $WRF_DIR"
    mkdir -p "$SCRATCH/$(dirname "$f")"
    cp -p "$WRF_DIR/$f" "$SCRATCH/$f"
  done
done

TODO=()
if [ "$REVERT" = 0 ]; then
  for p in "${PATCHES[@]}"; do
    s=$(state_of "$p" "$SCRATCH")
    case "$s" in
      applied) echo "already applied: $(basename "$p")" ;;
      unapplied)
        patch -d "$SCRATCH" "${PATCH_OPTS[@]}" -N < "$p" >/dev/null 2>&1 \
          || die "$(basename "$p") does not apply after the patches before it (nothing changed)"
        TODO+=("$p") ;;
      *) die "$(basename "$p") neither applies nor is applied in $WRF_DIR (a modified or other 4.7 release?); nothing changed. Try: cd $WRF_DIR && patch -p1 --dry-run < $p" ;;
    esac
  done
else
  for (( n=${#PATCHES[@]}-1; n>=0; n-- )); do
    p=${PATCHES[$n]}
    s=$(state_of "$p" "$SCRATCH")
    case "$s" in
      applied)
        patch -d "$SCRATCH" "${PATCH_OPTS[@]}" -R < "$p" >/dev/null 2>&1 \
          || die "cannot revert $(basename "$p") (nothing changed)"
        TODO+=("$p") ;;
      unapplied) ;;
      *) die "$(basename "$p") is partly applied or its files were edited since: revert by hand (nothing changed)" ;;
    esac
  done
fi

if [ "$CHECK" = 1 ]; then
  for p in "$HERE"/gpu/*.patch "$HERE"/capture/*.patch; do
    printf '%-40s %s\n' "$(basename "$p")" "$(state_of "$p" "$WRF_DIR")"
  done
  exit 0
fi

# ---- the real tree ------------------------------------------------------------------------
for p in "${TODO[@]}"; do
  if [ "$REVERT" = 0 ]; then
    patch -d "$WRF_DIR" "${PATCH_OPTS[@]}" -N < "$p" || die "applying $(basename "$p") failed after the dry run"
    echo "applied: $(basename "$p")"
  else
    patch -d "$WRF_DIR" "${PATCH_OPTS[@]}" -R < "$p" || die "reverting $(basename "$p") failed after the dry run"
    echo "reverted: $(basename "$p")"
  fi
done
[ "${#TODO[@]}" -gt 0 ] || echo "patches: nothing to do"

# ---- configure.wrf ------------------------------------------------------------------------
CONF="$WRF_DIR/configure.wrf"
BEGIN_MARK='# >>> wrfgpu: added by wrf_patch apply.sh >>>'
END_MARK='# <<< wrfgpu <<<'

# libraries the wrfgpu archive needs after it: CUDA runtime if it was built with CUDA
cuda_libs() {
  local cf="$WRFGPU/configure.wrfgpu" cuda=0 home=/usr/local/cuda
  if [ -f "$cf" ]; then
    cuda=$(sed -n 's/^CUDA *= *//p' "$cf" | head -1)
    home=$(sed -n 's/^CUDA_HOME *= *//p' "$cf" | head -1)
  elif [ -f "$WRFGPU/lib/libwrfgpu.a" ] && nm "$WRFGPU/lib/libwrfgpu.a" 2>/dev/null | grep ' U cuda[A-Z]' >/dev/null; then
    cuda=1
  fi
  [ "$cuda" = 1 ] && echo "-L${home:-/usr/local/cuda}/lib64 -lcudart"
}

conf_block() {
  echo "$BEGIN_MARK"
  if [ "$GPU" = 1 ]; then
    echo "WRFGPU_INCLUDE  =    -I$WRFGPU/include"
    local wlib="$WRFGPU/lib/libwrfgpu.a"   # the archive, not libwrfgpu.so: no run-time path needed
    [ -f "$wlib" ] || wlib="-L$WRFGPU/lib -Wl,-rpath,$WRFGPU/lib -lwrfgpu"
    echo "LIB_LOCAL       +=   $wlib $(cuda_libs) -L\$(NETCDFPATH)/lib -lnetcdf -lstdc++ -lgomp"
  else
    echo "WRFGPU_INCLUDE  =    -I\$(WRF_SRC_ROOT_DIR)/wrfgpu_capture"
  fi
  if [ "$CAPTURE" = 1 ]; then
    [ "$GPU" = 1 ] && echo "WRFGPU_INCLUDE  +=   -I\$(WRF_SRC_ROOT_DIR)/wrfgpu_capture"
    echo "LIB_LOCAL       +=   -L\$(WRF_SRC_ROOT_DIR)/wrfgpu_capture -lwrfgpu_capture -L\$(NETCDFPATH)/lib -lnetcdff -lnetcdf"
  fi
  echo "$END_MARK"
}

conf_strip() {   # remove everything this script ever added
  local capdef=()
  if sed -n "/^$BEGIN_MARK\$/,/^$END_MARK\$/p" "$1" | grep -q 'lwrfgpu_capture'; then
    capdef=(-e '/^ARCH_LOCAL *=/s/ -DWRFGPU_CAPTURE\b//g')
  fi
  sed -i -e "/^$BEGIN_MARK\$/,/^$END_MARK\$/d" \
         -e '/^[[:space:]]*\$(WRFGPU_INCLUDE)[[:space:]]*\\$/d' \
         -e '/^ARCH_LOCAL *=/s/ -DRUN_ON_GPU\b//g' "${capdef[@]}" "$1"
}

conf_add() {
  local defs=""
  [ "$GPU" = 1 ] && defs="$defs -DRUN_ON_GPU"
  [ "$CAPTURE" = 1 ] && defs="$defs -DWRFGPU_CAPTURE"
  sed -i -e "/^ARCH_LOCAL *=/s/\$/$defs/" \
         -e '/^INCLUDE_MODULES *=.*\\$/a\
                      $(WRFGPU_INCLUDE) \\' "$1"
  conf_block >> "$1"
}

if [ -f "$CONF" ]; then
  if [ "$REVERT" = 0 ] && grep -q 'WRFGPU_CAPTURE' "$CONF" && ! grep -q "^$BEGIN_MARK" "$CONF"; then
    echo "note: configure.wrf already has WRFGPU_CAPTURE lines from wrf_patch/capture/configure.wrf.sed; left as they are" >&2
  fi
  grep -q '^ARCH_LOCAL *=' "$CONF" || die "configure.wrf has no ARCH_LOCAL line"
  grep -q '^INCLUDE_MODULES *=.*\\$' "$CONF" || die "configure.wrf has no INCLUDE_MODULES line"
  tmp="$SCRATCH/configure.wrf"
  cp -p "$CONF" "$tmp"
  conf_strip "$tmp"
  [ "$REVERT" = 1 ] || conf_add "$tmp"
  if cmp -s "$tmp" "$CONF"; then
    echo "configure.wrf: nothing to do"
  else
    cp "$tmp" "$CONF"
    if [ "$REVERT" = 1 ]; then echo "configure.wrf: wrfgpu lines removed"
    else echo "configure.wrf: updated (ARCH_LOCAL, INCLUDE_MODULES, LIB_LOCAL); objects built before need ./compile again"; fi
  fi
elif [ "$REVERT" = 0 ]; then
  echo "configure.wrf not found: after ./configure run this script again, or edit configure.wrf:"
  [ "$GPU" = 1 ] && echo "  ARCH_LOCAL: append -DRUN_ON_GPU"
  [ "$CAPTURE" = 1 ] && echo "  ARCH_LOCAL: append -DWRFGPU_CAPTURE"
  echo "  INCLUDE_MODULES: add the line    \$(WRFGPU_INCLUDE) \\    after its first line"
  echo "  at the end:"
  conf_block | sed 's/^/    /'
fi

if [ "$REVERT" = 0 ] && [ "$CAPTURE" = 1 ]; then
  echo "capture writer: make -f $HERE/capture/Makefile.capture WRF_DIR=$WRF_DIR NETCDF=\${NETCDF:-/usr} (FC/PROMOTION as in configure.wrf)"
fi
if [ "$REVERT" = 0 ] && [ "$GPU" = 1 ]; then
  [ -f "$WRFGPU/lib/libwrfgpu.a" ] || echo "warning: $WRFGPU/lib/libwrfgpu.a not found (build wrfgpu: ./configure && make lib)" >&2
  [ -f "$WRFGPU/include/module_wrfgpu_wsm5.mod" ] || echo "warning: $WRFGPU/include/module_wrfgpu_wsm5.mod not found" >&2
  echo "next: cd $WRF_DIR && ./compile em_real (or your case); run with WRFGPU_BACKEND=gpu|cpu|auto"
fi
exit 0
