#!/usr/bin/env bash
# wrf_patch/apply.sh - patch a WRF v4.7.x source tree for wrfgpu (RUN_ON_GPU), or undo it.
#
#   wrf_patch/apply.sh WRF_DIR [--wrfgpu DIR] [--cmake] [--capture --no-gpu] [--revert] [--check]
#
#   (default)          apply wrf_patch/gpu/*.patch and set configure.wrf up for RUN_ON_GPU
#   --cmake            WRF's CMake build (configure_new/compile_new): the same patches, and instead
#                      of configure.wrf, cmake/wrfgpu.cmake (from wrf_patch/cmake) and one marked
#                      line include( wrfgpu ) in WRF's CMakeLists.txt: RUN_ON_GPU and libwrfgpu
#                      (find_package(wrfgpu), else the WRFGPU_ROOT cache variable, default the
#                      --wrfgpu tree). Chosen without --cmake when WRF_DIR has no configure.wrf
#                      and a configure_new build directory (WRF_DIR/*/CMakeCache.txt)
#   --capture --no-gpu apply the capture-mode patches (wrf_patch/capture) instead and set up
#                      -DWRFGPU_CAPTURE (the capture writer is built into WRF_DIR/wrfgpu_capture).
#                      Captures record WRF's own kernels, so they come from a CPU build: --capture
#                      is refused without --no-gpu, and either set is refused on a tree that has
#                      the other applied (--revert first)
#   --revert           undo whatever of the above is applied (patches, configure.wrf lines, and
#                      the CMake line and file), in either mode
#   --check            say what is applied, change nothing (both builds' settings)
#   --wrfgpu DIR       the wrfgpu tree (include/*.mod, lib/libwrfgpu.a) or install prefix
#                      (make install: lib/wrfgpu/mod/*.mod, lib/libwrfgpu.a)
#                      (default: the repository this script belongs to)
#
# The GPU patches are refused when configure.wrf defines -DXEON_OPTIMIZED_WSM5 (WSM5 would run
# twice). All patches are first applied to a scratch copy of the files they touch; WRF_DIR is
# changed only if every patch applies there, and then by renaming complete new files into place
# (restored from a backup if that fails half-way). A patch already applied is left alone
# (running twice changes nothing). Each applied patch is recorded as it was applied, in
# WRF_DIR/.wrfgpu/applied/: when a later wrfgpu brings a changed patch, running this script
# again reverts the recorded version and applies the new one (--check says "an earlier
# version"); --revert reverts what is recorded and removes the records. configure.wrf (if ./configure has been run) gets
# -DRUN_ON_GPU in ARCH_LOCAL, $(WRFGPU_INCLUDE) in INCLUDE_MODULES and a marked block at its end
# with WRFGPU_INCLUDE and LIB_LOCAL; without configure.wrf the lines to add are printed.
# Re-running ./configure rewrites configure.wrf: run this script again afterwards (configure_new
# leaves CMakeLists.txt alone: nothing to redo in CMake mode).
# Exit status: 0 done (or nothing to do), 1 refused/failed (nothing changed), 2 usage.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WRFGPU=$(cd "$HERE/.." && pwd)
WRF_DIR="" ; REVERT=0 ; CAPTURE=0 ; GPU=1 ; CHECK=0 ; CMAKE=0

# the comment block at the top of this file, up to the first line that is not a comment
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"; exit 2; }
die() { echo "apply.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --revert) REVERT=1 ;;
    --capture) CAPTURE=1 ;;
    --no-gpu) GPU=0 ;;
    --check) CHECK=1 ;;
    --cmake) CMAKE=1 ;;
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
[ "$GPU" = 1 ] || [ "$CAPTURE" = 1 ] || [ "$REVERT" = 1 ] || [ "$CHECK" = 1 ] || die "--no-gpu needs --capture"
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

GPU_PATCHES=("$HERE"/gpu/*.patch)
CAP_PATCHES=("$HERE"/capture/*.patch)
for p in "${GPU_PATCHES[@]}" "${CAP_PATCHES[@]}"; do [ -f "$p" ] || die "missing patch $p"; done

files_of() { sed -n 's/^+++ [^/]*\/\([^[:space:]]*\).*/\1/p' "$1"; }
PATCH_OPTS=(-p1 -s -f --no-backup-if-mismatch -r -)

# state of one patch in directory $2: applied | unapplied | conflict (| no file, for --check)
state_of() {
  if patch -d "$2" "${PATCH_OPTS[@]}" -R --dry-run < "$1" >/dev/null 2>&1; then echo applied
  elif patch -d "$2" "${PATCH_OPTS[@]}" -N --dry-run < "$1" >/dev/null 2>&1; then echo unapplied
  else echo conflict; fi
}
any_applied() {   # any_applied DIR PATCH...: is one of the patches applied in DIR?
  local d=$1 p; shift
  for p in "$@"; do [ "$(state_of "$p" "$d")" = applied ] && return 0; done
  return 1
}

# The patches as this script applied them (a later wrfgpu may bring changed ones): one copy
# each in REC_DIR, written and removed with the WRF files, all or nothing.
REC_DIR=.wrfgpu/applied
recorded() { echo "$WRF_DIR/$REC_DIR/$(basename "$1")"; }   # recorded PATCH: its record's path
# earlier PATCH DIR: is an earlier version of PATCH (its record, another text) applied in DIR?
earlier() {
  local r; r=$(recorded "$1")
  [ -f "$r" ] && ! cmp -s "$r" "$1" && [ "$(state_of "$r" "$2")" = applied ]
}

CONF="$WRF_DIR/configure.wrf"
conf_defines() {   # conf_defines FILE NAME: does FILE define -DNAME outside comments?
  grep -Eq "^[^#]*-D$2([^A-Za-z0-9_]|\$)" "$1"
}
BEGIN_MARK='# >>> wrfgpu: added by wrf_patch apply.sh >>>'
END_MARK='# <<< wrfgpu <<<'

# ---- WRF's CMake build (configure_new / compile_new) ----------------------------------------
CMLISTS="$WRF_DIR/CMakeLists.txt"
CMAKE_MOD=cmake/wrfgpu.cmake                  # in WRF_DIR, made from wrf_patch/cmake/wrfgpu.cmake
CMAKE_MOD_SRC="$HERE/cmake/wrfgpu.cmake"
CMAKE_MOD_MARK="# wrfgpu.cmake: added to WRF's cmake/ by wrfgpu's wrf_patch/apply.sh"
CMAKE_ANCHOR='# Accumulate option and definitions'   # the include goes just before this line
CMAKE_LINE='include( wrfgpu )   # cmake/wrfgpu.cmake: RUN_ON_GPU and libwrfgpu (cache variables USE_WRFGPU, WRFGPU_ROOT)'
cmake_builds() {   # configure_new build directories of WRF_DIR: WRF_DIR/*/CMakeCache.txt of this source tree
  local c h
  for c in "$WRF_DIR"/*/CMakeCache.txt; do
    [ -f "$c" ] || continue
    h=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$c" | head -1)
    [ -n "$h" ] && [ "$h" -ef "$WRF_DIR" ] && echo "${c%/CMakeCache.txt}"
  done
  return 0
}
cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt" | head -1; }   # cache_value BUILD_DIR NAME
stanza_defines() {   # stanza_defines BUILD_DIR NAME: does the toolchain file configure_new wrote define NAME?
  [ -f "$1/wrf_config.cmake" ] && grep -Eq "^[^#]*WRF_ARCH_LOCAL.*([^A-Za-z0-9_])$2([^A-Za-z0-9_]|\$)" "$1/wrf_config.cmake"
}
cmake_has_include() { [ -f "$CMLISTS" ] && sed -n "/^$BEGIN_MARK\$/,/^$END_MARK\$/p" "$CMLISTS" | grep -q '^include( wrfgpu )'; }
cmake_mod_ours() { head -1 "$WRF_DIR/$CMAKE_MOD" 2>/dev/null | grep -qF "$CMAKE_MOD_MARK"; }
BUILDS=()
while IFS= read -r b; do [ -n "$b" ] && BUILDS+=("$b"); done < <(cmake_builds)
rel() { echo "${1#"$WRF_DIR"/}"; }

# ---- --check: report, change nothing (before any refusal, so partly patched trees are shown)
if [ "$CHECK" = 1 ]; then
  for p in "${GPU_PATCHES[@]}" "${CAP_PATCHES[@]}"; do
    s=""
    for f in $(files_of "$p"); do [ -f "$WRF_DIR/$f" ] || s="missing $f"; done
    [ -n "$s" ] || s=$(state_of "$p" "$WRF_DIR")
    if [ "$s" = conflict ] && earlier "$p" "$WRF_DIR"; then
      s="an earlier version applied (running apply.sh again updates it)"
    fi
    [ "$s" = conflict ] && s="conflict (partly applied, edited, or another release)"
    printf '%-40s %s\n' "$(basename "$p")" "$s"
  done
  if [ -f "$CONF" ]; then
    d=""
    for n in RUN_ON_GPU WRFGPU_CAPTURE XEON_OPTIMIZED_WSM5; do conf_defines "$CONF" "$n" && d="$d -D$n"; done
    printf '%-40s %s\n' configure.wrf "defines:${d:- none of RUN_ON_GPU, WRFGPU_CAPTURE, XEON_OPTIMIZED_WSM5}"
    if conf_defines "$CONF" XEON_OPTIMIZED_WSM5 && { conf_defines "$CONF" RUN_ON_GPU || any_applied "$WRF_DIR" "${GPU_PATCHES[@]}"; }; then
      echo "warning: -DXEON_OPTIMIZED_WSM5 cannot be combined with RUN_ON_GPU (WSM5 would run twice; the patched module_microphysics_driver.F stops the build with #error)" >&2
    fi
  else
    printf '%-40s %s\n' configure.wrf "not found"
  fi
  # WRF's CMake build
  if [ -f "$CMLISTS" ]; then
    if cmake_has_include; then s="include( wrfgpu ) (CMake mode)"; else s="no include( wrfgpu )"; fi
    printf '%-40s %s\n' CMakeLists.txt "$s"
  fi
  if [ -f "$WRF_DIR/$CMAKE_MOD" ]; then
    if cmake_mod_ours; then
      s="from apply.sh; libwrfgpu unless WRFGPU_ROOT is set: $(sed -n 's/^set( WRFGPU_APPLY_ROOT "\(.*\)" )$/\1/p' "$WRF_DIR/$CMAKE_MOD")"
    else s="present, not written by apply.sh"; fi
    printf '%-40s %s\n' "$CMAKE_MOD" "$s"
  fi
  for b in ${BUILDS[@]+"${BUILDS[@]}"}; do
    s="configure_new build: WRF_CASE=$(cache_value "$b" WRF_CASE) USE_MPI=$(cache_value "$b" USE_MPI) USE_OPENMP=$(cache_value "$b" USE_OPENMP)"
    if grep -q '^USE_WRFGPU:' "$b/CMakeCache.txt"; then
      r=$(cache_value "$b" WRFGPU_ROOT)
      [ -n "$r" ] || r="(empty: the cmake/wrfgpu.cmake default)"
      s="$s; USE_WRFGPU=$(cache_value "$b" USE_WRFGPU) WRFGPU_ROOT=$r"
    else
      s="$s; configured without wrfgpu$(cmake_has_include && echo ' (compile_new configures again)' || true)"
    fi
    printf '%-40s %s\n' "$(rel "$b")/CMakeCache.txt" "$s"
    if stanza_defines "$b" XEON_OPTIMIZED_WSM5 && { cmake_has_include || any_applied "$WRF_DIR" "${GPU_PATCHES[@]}"; }; then
      echo "warning: $(rel "$b")/wrf_config.cmake defines XEON_OPTIMIZED_WSM5, which cannot be combined with RUN_ON_GPU (WSM5 would run twice; cmake/wrfgpu.cmake stops the configuration)" >&2
    fi
  done
  m=""
  if [ -f "$CONF" ] && conf_defines "$CONF" RUN_ON_GPU; then m="classic (configure.wrf has -DRUN_ON_GPU)"; fi
  if cmake_has_include; then m="${m:+$m and }CMake (include( wrfgpu ) in CMakeLists.txt)"; fi
  printf '%-40s %s\n' "wrfgpu build set up" "${m:-none}"
  if any_applied "$WRF_DIR" "${GPU_PATCHES[@]}" && any_applied "$WRF_DIR" "${CAP_PATCHES[@]}"; then
    echo "warning: GPU and capture patches are both applied; a -DRUN_ON_GPU build with -DWRFGPU_CAPTURE stops with #error (captures come from a CPU build)" >&2
  fi
  exit 0
fi

# ---- which build: classic (configure.wrf) or CMake (configure_new) --------------------------------
if [ "$CMAKE" = 0 ] && [ "$REVERT" = 0 ] && [ ! -f "$CONF" ] && [ "${#BUILDS[@]}" -gt 0 ]; then
  CMAKE=1
  echo "no configure.wrf and a configure_new build directory ($(rel "${BUILDS[0]}")): WRF's CMake build (as with --cmake)"
fi
if [ "$CMAKE" = 1 ] && [ "$REVERT" = 0 ]; then
  [ "$CAPTURE" = 0 ] || die "capture mode (--capture --no-gpu) is for WRF's classic build (./configure, configure.wrf) only. Nothing changed."
  [ -f "$CMLISTS" ] || die "$WRF_DIR has no CMakeLists.txt: WRF's CMake build needs WRF 4.7's own CMakeLists.txt. Nothing changed."
  case "$WRFGPU" in *[\"\\\$\;]*) die "the wrfgpu path $WRFGPU has a character CMake would misread (quote, backslash, dollar, semicolon). Nothing changed." ;; esac
fi

# ---- refusals: checked before anything is touched ----------------------------------------
if [ "$REVERT" = 0 ]; then
  if [ "$GPU" = 1 ] && [ "$CAPTURE" = 1 ]; then
    die "--capture is refused with the GPU patches: capture mode records WRF's own kernels, and in a RUN_ON_GPU build the WSM5, advection and RADM2SORG outputs it would record are libwrfgpu's. Captures come from a CPU build: $0 $WRF_DIR --capture --no-gpu (on a tree without the GPU patches; --revert first). Nothing changed."
  fi
  if [ "$GPU" = 1 ] && any_applied "$WRF_DIR" "${CAP_PATCHES[@]}"; then
    die "$WRF_DIR has capture-mode patches applied; captures come from a CPU build, so the GPU patches are not added on top: run $0 $WRF_DIR --revert first (or use another WRF tree). Nothing changed."
  fi
  if [ "$CAPTURE" = 1 ] && any_applied "$WRF_DIR" "${GPU_PATCHES[@]}"; then
    die "$WRF_DIR has the GPU patches applied; captures come from a CPU build (WRF's own kernels): run $0 $WRF_DIR --revert first, then --capture --no-gpu (or use another WRF tree). Nothing changed."
  fi
  if [ "$GPU" = 1 ] && [ "$CMAKE" = 0 ] && [ -f "$CONF" ] && conf_defines "$CONF" XEON_OPTIMIZED_WSM5; then
    die "configure.wrf defines -DXEON_OPTIMIZED_WSM5 (./configure's 'Xeon (SNB with AVX mods)' option): with RUN_ON_GPU, WRF's XEON block would call wsm5 and wsm5_gpu would run WSM5 again (the patched module_microphysics_driver.F stops such a build with #error). Pick another ./configure option, or remove -DXEON_OPTIMIZED_WSM5 from ARCH_LOCAL in configure.wrf, then run this again. Nothing changed."
  fi
  if [ "$GPU" = 1 ] && [ "$CMAKE" = 1 ]; then
    for b in ${BUILDS[@]+"${BUILDS[@]}"}; do
      if stanza_defines "$b" XEON_OPTIMIZED_WSM5; then
        die "$(rel "$b")/wrf_config.cmake defines XEON_OPTIMIZED_WSM5 (configure_new's 'Xeon (SNB with AVX mods)' stanza): with RUN_ON_GPU, WRF's XEON block would call wsm5 and wsm5_gpu would run WSM5 again. Configure again with another stanza (./configure_new -p ...), then run this again. Nothing changed."
      fi
    done
  fi
fi

# ---- patch sets -------------------------------------------------------------------------
PATCHES=()
[ "$GPU" = 1 ] && PATCHES+=("${GPU_PATCHES[@]}")
[ "$CAPTURE" = 1 ] && PATCHES+=("${CAP_PATCHES[@]}")
if [ "$REVERT" = 1 ]; then   # revert: everything we know about, whatever the flags
  PATCHES=("${GPU_PATCHES[@]}" "${CAP_PATCHES[@]}")
fi

# scratch copy of every file the patches touch (FILES: each once, in order)
SCRATCH=$(mktemp -d)
KEEP_SCRATCH=0 ; STAGED=0
trap '[ "$STAGED" = 0 ] || cleanup_tmp; [ "$KEEP_SCRATCH" = 1 ] || rm -rf "$SCRATCH"' EXIT
trap 'exit 1' INT TERM HUP
FILES=()
for p in "${PATCHES[@]}"; do
  for f in $(files_of "$p"); do
    [ -f "$WRF_DIR/$f" ] || die "$(basename "$p"): $f is not in $WRF_DIR"
    [ -f "$SCRATCH/tree/$f" ] && continue
    mkdir -p "$SCRATCH/tree/$(dirname "$f")"
    cp -p "$WRF_DIR/$f" "$SCRATCH/tree/$f"
    FILES+=("$f")
  done
done

TODO=() ; UPDATED=()
record() {   # record PATCH: its copy in the scratch tree's records (written with the WRF files)
  local f; f="$REC_DIR/$(basename "$1")"
  mkdir -p "$SCRATCH/tree/$REC_DIR" && cp "$1" "$SCRATCH/tree/$f" || die "cannot write the scratch record $f (nothing changed)"
  FILES+=("$f")
}
if [ "$REVERT" = 0 ]; then
  for p in "${PATCHES[@]}"; do
    s=$(state_of "$p" "$SCRATCH/tree")
    if [ "$s" = conflict ] && earlier "$p" "$SCRATCH/tree"; then
      # the version an earlier wrfgpu applied: revert it, then apply this one
      patch -d "$SCRATCH/tree" "${PATCH_OPTS[@]}" -R < "$(recorded "$p")" >/dev/null 2>&1 \
        || die "cannot revert the earlier version of $(basename "$p") recorded in $REC_DIR (nothing changed)"
      s=$(state_of "$p" "$SCRATCH/tree")
      [ "$s" = unapplied ] || die "$(basename "$p"): with the earlier version reverted, this version does not apply in $WRF_DIR (nothing changed). Try: $0 $WRF_DIR --revert, then $0 $WRF_DIR"
      UPDATED+=("$p")
    fi
    case "$s" in
      applied) echo "already applied: $(basename "$p")" ;;
      unapplied)
        patch -d "$SCRATCH/tree" "${PATCH_OPTS[@]}" -N < "$p" >/dev/null 2>&1 \
          || die "$(basename "$p") does not apply after the patches before it (nothing changed)"
        TODO+=("$p") ;;
      *) die "$(basename "$p") neither applies nor is applied in $WRF_DIR, and $REC_DIR records no earlier version of it that is (a modified or other 4.7 release, or patched by a wrfgpu that kept no records: restore WRF's original files, then run this again); nothing changed. Try: cd $WRF_DIR && patch -p1 --dry-run < $p" ;;
    esac
    record "$p"
  done
else
  for (( n=${#PATCHES[@]}-1; n>=0; n-- )); do
    p=${PATCHES[$n]}
    s=$(state_of "$p" "$SCRATCH/tree")
    r=$p
    if [ "$s" = conflict ] && earlier "$p" "$SCRATCH/tree"; then s=applied; r=$(recorded "$p"); fi
    case "$s" in
      applied)
        patch -d "$SCRATCH/tree" "${PATCH_OPTS[@]}" -R < "$r" >/dev/null 2>&1 \
          || die "cannot revert $(basename "$p") (nothing changed)"
        TODO+=("$p") ;;
      unapplied) ;;
      *) die "$(basename "$p") is partly applied or its files were edited since: revert by hand (nothing changed)" ;;
    esac
  done
  # the records go (a file in FILES without a scratch copy is removed)
  for r in "$WRF_DIR/$REC_DIR"/*.patch; do [ -f "$r" ] && FILES+=("$REC_DIR/$(basename "$r")"); done
fi

# ---- configure.wrf: the new version, in the scratch tree too -------------------------------

# libraries the wrfgpu archive needs after it: CUDA runtime if it was built with CUDA
cuda_libs() {
  local cf="$WRFGPU/configure.wrfgpu" cuda=0 home=/usr/local/cuda
  if [ -f "$cf" ]; then
    cuda=$(sed -n 's/^CUDA *= *//p' "$cf" | head -1)
    home=$(sed -n 's/^CUDA_HOME *= *//p' "$cf" | head -1)
  elif [ -f "$WRFGPU/lib/libwrfgpu.a" ] && nm "$WRFGPU/lib/libwrfgpu.a" 2>/dev/null | grep ' U cuda[A-Z]' >/dev/null; then
    cuda=1
  fi
  # with a run path, so that wrf.exe finds libcudart wherever the CUDA toolkit lives
  [ "$cuda" = 1 ] && echo "-L${home:-/usr/local/cuda}/lib64 -Wl,-rpath,${home:-/usr/local/cuda}/lib64 -lcudart"
}

# the folder of wrfgpu's Fortran .mod files: lib/wrfgpu/mod in an install prefix, include/ in a tree
mod_dir() { if [ -d "$WRFGPU/lib/wrfgpu/mod" ]; then echo "$WRFGPU/lib/wrfgpu/mod"; else echo "$WRFGPU/include"; fi; }

conf_block() {
  echo "$BEGIN_MARK"
  if [ "$GPU" = 1 ]; then
    echo "WRFGPU_INCLUDE  =    -I$(mod_dir)"
    local wlib="$WRFGPU/lib/libwrfgpu.a"   # the archive, not libwrfgpu.so: no run-time path needed
    [ -f "$wlib" ] || wlib="-L$WRFGPU/lib -Wl,-rpath,$WRFGPU/lib -lwrfgpu"
    echo "LIB_LOCAL       +=   $wlib $(cuda_libs) -L\$(NETCDFPATH)/lib -lnetcdf -lstdc++ -lgomp"
  else
    echo "WRFGPU_INCLUDE  =    -I\$(WRF_SRC_ROOT_DIR)/wrfgpu_capture"
  fi
  if [ "$CAPTURE" = 1 ]; then
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

CONF_DO=0   # configure.wrf is edited in classic mode and cleaned by --revert; CMake mode leaves it
if [ -f "$CONF" ] && { [ "$CMAKE" = 0 ] || [ "$REVERT" = 1 ]; }; then CONF_DO=1; fi
if [ "$CONF_DO" = 1 ]; then
  if [ "$REVERT" = 0 ] && [ "$GPU" = 0 ] && grep -q 'WRFGPU_CAPTURE' "$CONF" && ! grep -q "^$BEGIN_MARK" "$CONF"; then
    echo "note: configure.wrf already has WRFGPU_CAPTURE lines from wrf_patch/capture/configure.wrf.sed; left as they are" >&2
  fi
  grep -q '^ARCH_LOCAL *=' "$CONF" || die "configure.wrf has no ARCH_LOCAL line (nothing changed)"
  grep -q '^INCLUDE_MODULES *=.*\\$' "$CONF" || die "configure.wrf has no INCLUDE_MODULES line (nothing changed)"
  tmp="$SCRATCH/tree/configure.wrf"
  cp -p "$CONF" "$tmp"
  conf_strip "$tmp"
  [ "$REVERT" = 1 ] || conf_add "$tmp"
  if [ "$REVERT" = 0 ] && [ "$GPU" = 1 ] && conf_defines "$tmp" WRFGPU_CAPTURE; then
    die "configure.wrf defines -DWRFGPU_CAPTURE (e.g. from wrf_patch/capture/configure.wrf.sed): captures come from a CPU build, never with RUN_ON_GPU; remove those lines (ARCH_LOCAL -DWRFGPU_CAPTURE, the wrfgpu_capture lines in INCLUDE_MODULES and LIB_LOCAL) or run ./configure again. Nothing changed."
  fi
  if cmp -s "$tmp" "$CONF"; then CONF_CHANGED=0; else CONF_CHANGED=1; FILES+=(configure.wrf); fi
fi

# ---- CMake mode: include( wrfgpu ) in CMakeLists.txt and cmake/wrfgpu.cmake, in the scratch tree
# (--revert removes both in either mode; a cmake/wrfgpu.cmake apply.sh did not write is left alone)
CM_LISTS_CHANGED=0 ; CM_MOD_CHANGED=0
if [ "$CMAKE" = 1 ] || [ "$REVERT" = 1 ]; then
  if [ -f "$CMLISTS" ]; then
    tmp="$SCRATCH/tree/CMakeLists.txt"
    cp -p "$CMLISTS" "$tmp"
    sed -i -e "/^$BEGIN_MARK\$/,/^$END_MARK\$/d" "$tmp"
    if [ "$REVERT" = 0 ]; then
      [ "$(grep -cxF "$CMAKE_ANCHOR" "$tmp")" = 1 ] \
        || die "CMakeLists.txt has not exactly one line '$CMAKE_ANCHOR' (WRF 4.7's CMake build has one; edited, or another release?); nothing changed"
      awk -v a="$CMAKE_ANCHOR" -v b="$BEGIN_MARK" -v l="$CMAKE_LINE" -v e="$END_MARK" \
        '$0 == a { print b; print l; print e } { print }' "$tmp" > "$tmp.new" && cat "$tmp.new" > "$tmp" && rm -f "$tmp.new" \
        || die "cannot write the scratch copy of CMakeLists.txt (nothing changed)"
    fi
    if ! cmp -s "$tmp" "$CMLISTS"; then CM_LISTS_CHANGED=1; FILES+=(CMakeLists.txt); fi
  fi
  if [ -f "$WRF_DIR/$CMAKE_MOD" ] && ! cmake_mod_ours; then
    [ "$REVERT" = 1 ] || die "$WRF_DIR/$CMAKE_MOD exists and was not written by apply.sh; nothing changed"
    echo "note: $CMAKE_MOD was not written by apply.sh; left as it is" >&2
  elif [ "$REVERT" = 0 ]; then
    [ -f "$CMAKE_MOD_SRC" ] || die "missing $CMAKE_MOD_SRC"
    mkdir -p "$SCRATCH/tree/$(dirname "$CMAKE_MOD")"
    esc=$(printf '%s' "$WRFGPU" | sed -e 's/[|&\\]/\\&/g')
    sed -e "s|@WRFGPU_APPLY_ROOT@|$esc|" "$CMAKE_MOD_SRC" > "$SCRATCH/tree/$CMAKE_MOD" \
      || die "cannot write the scratch copy of $CMAKE_MOD (nothing changed)"
    if ! cmp -s "$SCRATCH/tree/$CMAKE_MOD" "$WRF_DIR/$CMAKE_MOD"; then CM_MOD_CHANGED=1; FILES+=("$CMAKE_MOD"); fi
  elif [ -f "$WRF_DIR/$CMAKE_MOD" ]; then
    CM_MOD_CHANGED=1; FILES+=("$CMAKE_MOD")   # no scratch copy: the file goes
  fi
fi

# ---- the real tree: all or nothing ------------------------------------------------------------
# 1. back up every file that changes; 2. write each new file next to its target (a temporary
# name in the same folder); 3. rename them into place (a file with no scratch copy, i.e.
# cmake/wrfgpu.cmake on --revert, is removed; one with no original is created). A failure in 1
# or 2 leaves WRF_DIR as it was (the temporary files are removed); a failure in 3 puts the
# backups back (and removes the files it created).
CHANGED=()
for f in ${FILES[@]+"${FILES[@]}"}; do
  if [ -f "$SCRATCH/tree/$f" ]; then
    cmp -s "$SCRATCH/tree/$f" "$WRF_DIR/$f" || CHANGED+=("$f")
  elif [ -e "$WRF_DIR/$f" ]; then
    CHANGED+=("$f")
  fi
done
TMPNAME=".wrfgpu-apply.$$"
MADE_DIRS=()   # folders this run created for new files (the records'), removed again on failure
rm_made_dirs() { local d; for d in ${MADE_DIRS[@]+"${MADE_DIRS[@]}"}; do rmdir "$d" 2>/dev/null; done; return 0; }
cleanup_tmp() { local f; for f in ${CHANGED[@]+"${CHANGED[@]}"}; do rm -f "$WRF_DIR/$f$TMPNAME"; done; rm_made_dirs; }
restore() {   # restore FILE...: the backups of these files back into WRF_DIR
  local f bad=0
  for f in "$@"; do
    if [ -f "$SCRATCH/backup/$f" ]; then
      cp -p "$SCRATCH/backup/$f" "$WRF_DIR/$f" 2>/dev/null || { bad=1; echo "apply.sh: could not restore $WRF_DIR/$f" >&2; }
    else   # created by this run
      rm -f "$WRF_DIR/$f" 2>/dev/null || { bad=1; echo "apply.sh: could not remove $WRF_DIR/$f" >&2; }
    fi
  done
  [ "$bad" = 0 ] && return 0
  KEEP_SCRATCH=1
  return 1
}
for f in ${CHANGED[@]+"${CHANGED[@]}"}; do
  [ -e "$WRF_DIR/$f" ] || continue
  mkdir -p "$SCRATCH/backup/$(dirname "$f")"
  cp -p "$WRF_DIR/$f" "$SCRATCH/backup/$f" || die "cannot back up $f (nothing changed)"
done
STAGED=1   # from here until the renames, an exit removes the temporary files
for f in ${CHANGED[@]+"${CHANGED[@]}"}; do
  [ -f "$SCRATCH/tree/$f" ] || continue
  d=$(dirname "$WRF_DIR/$f")
  for x in "$(dirname "$d")" "$d"; do   # outer first; listed inner first, as rm_made_dirs removes
    [ -d "$x" ] || { mkdir "$x" && MADE_DIRS=("$x" ${MADE_DIRS[@]+"${MADE_DIRS[@]}"}); }
  done
  if ! { cp -p "$SCRATCH/tree/$f" "$WRF_DIR/$f$TMPNAME" && touch "$WRF_DIR/$f$TMPNAME"; }; then
    die "cannot write $WRF_DIR/$f$TMPNAME (disk full? permissions?); nothing changed"
  fi
done
trap '' INT TERM HUP   # the renames are not interrupted half-way
DONE=()
for f in ${CHANGED[@]+"${CHANGED[@]}"}; do
  if [ -f "$SCRATCH/tree/$f" ]; then
    mv -f "$WRF_DIR/$f$TMPNAME" "$WRF_DIR/$f" && ok=1 || ok=0
  else
    rm -f "$WRF_DIR/$f" && ok=1 || ok=0
  fi
  if [ "$ok" = 0 ]; then
    restore ${DONE[@]+"${DONE[@]}"} \
      || die "cannot move the new $f into place, and restoring the files changed before it failed: the original files are in $SCRATCH/backup (copy them back by hand)"
    die "cannot move the new $f into place; the files changed before it were restored from the backup (nothing changed)"
  fi
  DONE+=("$f")
done
STAGED=0
trap - INT TERM HUP

for p in ${TODO[@]+"${TODO[@]}"}; do
  if [ "$REVERT" = 1 ]; then echo "reverted: $(basename "$p")"
  elif [[ " ${UPDATED[*]-} " == *" $p "* ]]; then echo "updated: $(basename "$p") (the earlier version reverted, this one applied)"
  else echo "applied: $(basename "$p")"; fi
done
# --revert: the records' folders go too once empty
if [ "$REVERT" = 1 ]; then rmdir "$WRF_DIR/$REC_DIR" "$WRF_DIR/$(dirname "$REC_DIR")" 2>/dev/null || true; fi
[ "${#TODO[@]}" -gt 0 ] || echo "patches: nothing to do"

if [ "$CONF_DO" = 1 ]; then
  if [ "$CONF_CHANGED" = 0 ]; then
    echo "configure.wrf: nothing to do"
  elif [ "$REVERT" = 1 ]; then echo "configure.wrf: wrfgpu lines removed"
  else echo "configure.wrf: updated (ARCH_LOCAL, INCLUDE_MODULES, LIB_LOCAL); objects built before need ./compile again"; fi
elif [ "$REVERT" = 0 ] && [ "$CMAKE" = 1 ]; then
  [ -f "$CONF" ] && echo "configure.wrf: left as it is (CMake mode; the classic build is set up without --cmake)"
elif [ "$REVERT" = 0 ]; then
  echo "configure.wrf not found: after ./configure run this script again, or edit configure.wrf:"
  [ "$GPU" = 1 ] && echo "  ARCH_LOCAL: append -DRUN_ON_GPU (and do not use ./configure's 'Xeon (SNB with AVX mods)' option: its -DXEON_OPTIMIZED_WSM5 cannot be combined with RUN_ON_GPU)"
  [ "$CAPTURE" = 1 ] && echo "  ARCH_LOCAL: append -DWRFGPU_CAPTURE (never with -DRUN_ON_GPU)"
  echo "  INCLUDE_MODULES: add the line    \$(WRFGPU_INCLUDE) \\    after its first line"
  echo "  at the end:"
  conf_block | sed 's/^/    /'
  [ "$GPU" = 1 ] && echo "(WRF's CMake build, ./configure_new and ./compile_new: $0 $WRF_DIR --cmake)"
fi
if [ "$REVERT" = 1 ]; then
  [ "$CM_LISTS_CHANGED" = 0 ] || echo "CMakeLists.txt: include( wrfgpu ) removed"
  [ "$CM_MOD_CHANGED" = 0 ] || echo "$CMAKE_MOD: removed"
elif [ "$CMAKE" = 1 ]; then
  if [ "$CM_LISTS_CHANGED" = 0 ] && [ "$CM_MOD_CHANGED" = 0 ]; then
    echo "CMakeLists.txt, $CMAKE_MOD: nothing to do"
  else
    [ "$CM_LISTS_CHANGED" = 0 ] || echo "CMakeLists.txt: include( wrfgpu ) added before '$CMAKE_ANCHOR'"
    [ "$CM_MOD_CHANGED" = 0 ] || echo "$CMAKE_MOD: written (RUN_ON_GPU; libwrfgpu from $WRFGPU unless the cache variable WRFGPU_ROOT names another)"
  fi
fi

if [ "$REVERT" = 0 ] && [ "$CAPTURE" = 1 ]; then
  echo "capture writer: make -f $HERE/capture/Makefile.capture WRF_DIR=$WRF_DIR NETCDF=\${NETCDF:-/usr} (FC/PROMOTION as in configure.wrf)"
fi
if [ "$REVERT" = 0 ] && [ "$GPU" = 1 ]; then
  [ -f "$WRFGPU/lib/libwrfgpu.a" ] || echo "warning: $WRFGPU/lib/libwrfgpu.a not found (build wrfgpu: ./configure && make lib)" >&2
  [ -f "$(mod_dir)/module_wrfgpu_wsm5.mod" ] || echo "warning: $(mod_dir)/module_wrfgpu_wsm5.mod not found" >&2
  if [ "$CMAKE" = 0 ]; then
    echo "next: cd $WRF_DIR && ./compile em_real (or your case); run with WRFGPU_BACKEND=gpu|cpu|auto"
  elif [ "${#BUILDS[@]}" -gt 0 ]; then
    w=""; [ "$CM_LISTS_CHANGED" = 0 ] || w=" (CMake configures again by itself; with RUN_ON_GPU among the definitions every object is compiled again)"
    echo "next: cd $WRF_DIR && ./compile_new $(rel "${BUILDS[0]}") -j 4$w; run with WRFGPU_BACKEND=gpu|cpu|auto"
  else
    echo "next: cd $WRF_DIR && ./configure_new -p GNU -x -- -DWRF_CORE=ARW -DWRF_NESTING=BASIC -DWRF_CASE=EM_REAL -DUSE_MPI=ON (your case; -DWRFGPU_ROOT=DIR for another libwrfgpu), then ./compile_new -j 4; run with WRFGPU_BACKEND=gpu|cpu|auto"
  fi
fi
exit 0
