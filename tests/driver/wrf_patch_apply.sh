#!/bin/sh
# wrf_patch_apply.sh - wrf_patch/apply.sh on a clean WRF v4.7.x tree, in CMake mode and in
# classic mode: each applied twice (the second run changes nothing), --check, --revert (twice)
# back to the original files (diff -r); CMake mode chosen by itself on a tree with a
# configure_new build directory and no configure.wrf; both modes on one tree; the refusals
# (XEON_OPTIMIZED_WSM5 stanza, a cmake/wrfgpu.cmake apply.sh did not write, --cmake with
# --capture, a CMakeLists.txt without the line the include goes before) leave the tree as it was.
# With a built tree (configure.wrf and WRF's .mod files), the patched files are preprocessed as
# WRF's classic build does, with -DRUN_ON_GPU, and compiled with -fsyntax-only.
#
# WRF's code is not part of this repository: the test needs a stock WRF v4.7.x source tree named
# by WRFGPU_TEST_WRF_DIR (a clone of github.com/wrf-model/WRF at v4.7.1 will do; with configure.wrf,
# i.e. after ./configure, classic mode is tested with it, else without it) and SKIPS (77) without
# one. It copies only the files apply.sh reads or touches into a temporary tree: inc/version_decl,
# README, CMakeLists.txt, configure.wrf, and the WRF files the patches change.
cd "$(dirname "$0")/../.." || exit 2
repo=$(pwd)
W=${WRFGPU_TEST_WRF_DIR:-}
if [ -z "$W" ]; then
  echo "wrf_patch_apply.sh: SKIPPED: no WRF tree (set WRFGPU_TEST_WRF_DIR to a stock WRF v4.7.x source tree; WRF's code is not in this repository)"
  exit 77
fi
[ -f "$W/CMakeLists.txt" ] && [ -d "$W/phys" ] || { echo "wrf_patch_apply.sh: FAIL: WRFGPU_TEST_WRF_DIR=$W is not a WRF source tree"; exit 1; }
A=$repo/wrf_patch/apply.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }

# ---- the pristine copy P: only the files apply.sh reads or touches ------------------------
P=$tmp/pristine
files="inc/version_decl README CMakeLists.txt configure.wrf"
for p in wrf_patch/gpu/*.patch wrf_patch/capture/*.patch; do
  files="$files $(sed -n 's/^+++ [^/]*\/\([^[:space:]]*\).*/\1/p' "$p")"
done
for f in $files; do
  [ -f "$W/$f" ] || continue
  mkdir -p "$P/$(dirname "$f")" && cp -p "$W/$f" "$P/$f"
done
mkdir -p "$P/cmake"                  # WRF's cmake/ folder, where cmake/wrfgpu.cmake goes
HAVE_CONF=0; [ -f "$P/configure.wrf" ] && HAVE_CONF=1
out=$("$A" "$P" --check 2>&1)
if echo "$out" | grep -q ' applied$' || grep -q '^# >>> wrfgpu' "$P/CMakeLists.txt" || \
   { [ "$HAVE_CONF" = 1 ] && grep -q 'RUN_ON_GPU\|WRFGPU_CAPTURE' "$P/configure.wrf"; }; then
  echo "wrf_patch_apply.sh: FAIL: $W is not a stock tree (wrfgpu patches or lines present):"; echo "$out"; exit 1
fi
echo "WRF tree: $W ($(echo $files | tr ' ' '\n' | sort -u | wc -l) names, $(find "$P" -type f | wc -l) files copied; configure.wrf: $([ "$HAVE_CONF" = 1 ] && echo yes || echo no))"

T=$tmp/wrf
fresh() { rm -rf "$T" && cp -a "$P" "$T"; }              # the test tree, as the pristine copy
same() {   # same REF WHAT: is the test tree REF (WRF's files; build directories aside)?
  if diff -r -x _build "$1" "$T" > "$tmp/diff" 2>&1; then ok "$2"; else bad "$2:"; head -20 "$tmp/diff"; fi
}
run() { out=$("$A" "$T" "$@" 2>&1); st=$?; }          # run OPTIONS: apply.sh on the test tree
has() {   # has TEXT WHAT: does the last output have TEXT?
  case "$out" in *"$1"*) ok "$2" ;; *) bad "$2: no '$1' in:"; echo "$out" | sed 's/^/      /' ;; esac
}
status() { [ "$st" = "$1" ] && ok "$2 (exit $st)" || { bad "$2: exit $st, expected $1:"; echo "$out" | sed 's/^/      /'; }; }
count() { echo "$out" | grep -c "$1"; }
snap() { rm -rf "$tmp/snap" && cp -a "$T" "$tmp/snap"; }

# ---- A. CMake mode (--cmake), twice, --check, --revert twice ------------------------------------
echo "-- CMake mode"
fresh
run --cmake; status 0 "--cmake applies"
[ "$(count '^applied: 000[1-5]-')" = 5 ] && ok "--cmake: the 5 GPU patches applied" || bad "--cmake: patches: $out"
has "CMakeLists.txt: include( wrfgpu ) added before '# Accumulate option and definitions'" "--cmake: the include line added"
added=$(diff "$P/CMakeLists.txt" "$T/CMakeLists.txt" | grep -c '^>')
removed=$(diff "$P/CMakeLists.txt" "$T/CMakeLists.txt" | grep -c '^<')
[ "$added" = 3 ] && [ "$removed" = 0 ] && ok "CMakeLists.txt: one marked block of 3 lines added, nothing else" \
  || bad "CMakeLists.txt: $added lines added, $removed removed"
grep -B1 -x '# Accumulate option and definitions' "$T/CMakeLists.txt" | grep -qx '# <<< wrfgpu <<<' \
  && ok "CMakeLists.txt: the block ends just before '# Accumulate option and definitions'" || bad "CMakeLists.txt: block not where expected"
if [ -f "$T/cmake/wrfgpu.cmake" ] && grep -qx "set( WRFGPU_APPLY_ROOT \"$repo\" )" "$T/cmake/wrfgpu.cmake" \
   && [ "$(sed "s|$repo|@WRFGPU_APPLY_ROOT@|" "$T/cmake/wrfgpu.cmake" | cmp - "$repo/wrf_patch/cmake/wrfgpu.cmake" && echo same)" = same ]; then
  ok "cmake/wrfgpu.cmake: wrf_patch/cmake/wrfgpu.cmake with this repository as the default root"
else
  bad "cmake/wrfgpu.cmake missing or not as expected"
fi
[ "$HAVE_CONF" = 0 ] || { cmp -s "$P/configure.wrf" "$T/configure.wrf" && ok "--cmake leaves configure.wrf alone" || bad "--cmake changed configure.wrf"; }
snap
run --cmake; status 0 "--cmake again"
[ "$(count '^already applied: 000[1-5]-')" = 5 ] && ok "--cmake again: the 5 patches already applied" || bad "--cmake again: $out"
has "CMakeLists.txt, cmake/wrfgpu.cmake: nothing to do" "--cmake again: CMake files: nothing to do"
same "$tmp/snap" "--cmake again changes nothing"
run --check; status 0 "--check"
for p in 0001-wsm5-gpu 0002-advect-pd-gpu 0003-radm2sorg-gpu 0004-wrf-top-serial 0005-persistent-solve-em-arrays; do
  echo "$out" | grep -Eq "^$p.patch +applied$" || bad "--check: $p not reported applied"
done
has "CMakeLists.txt                           include( wrfgpu ) (CMake mode)" "--check: CMakeLists.txt has include( wrfgpu )"
has "cmake/wrfgpu.cmake                       from apply.sh; libwrfgpu unless WRFGPU_ROOT is set: $repo" "--check: cmake/wrfgpu.cmake from apply.sh"
has "wrfgpu build set up                      CMake (include( wrfgpu ) in CMakeLists.txt)" "--check: CMake mode"
run --revert; status 0 "--revert"
[ "$(count '^reverted: 000[1-5]-')" = 5 ] && ok "--revert: the 5 patches reverted" || bad "--revert: $out"
has "CMakeLists.txt: include( wrfgpu ) removed" "--revert: include removed"
has "cmake/wrfgpu.cmake: removed" "--revert: cmake/wrfgpu.cmake removed"
same "$P" "--revert: the tree is the original again (diff -r)"
run --revert; status 0 "--revert again"
has "patches: nothing to do" "--revert again: nothing to do"
same "$P" "--revert again: still the original"
run --check
has "wrfgpu build set up                      none" "--check after --revert: none"

# ---- B. classic mode (configure.wrf), twice, --check, --revert -------------------------------
echo "-- classic mode"
fresh
run; status 0 "classic apply"
[ "$(count '^applied: 000[1-5]-')" = 5 ] && ok "classic: the 5 GPU patches applied" || bad "classic: $out"
cmp -s "$P/CMakeLists.txt" "$T/CMakeLists.txt" && [ ! -e "$T/cmake/wrfgpu.cmake" ] \
  && ok "classic: CMakeLists.txt untouched, no cmake/wrfgpu.cmake" || bad "classic mode touched the CMake files"
if [ "$HAVE_CONF" = 1 ]; then
  has "configure.wrf: updated (ARCH_LOCAL, INCLUDE_MODULES, LIB_LOCAL)" "classic: configure.wrf updated"
  grep -q '^ARCH_LOCAL.*-DRUN_ON_GPU$' "$T/configure.wrf" && ok "classic: ARCH_LOCAL ends with -DRUN_ON_GPU" || bad "classic: no -DRUN_ON_GPU"
else
  has "configure.wrf not found: after ./configure run this script again" "classic without configure.wrf: the lines to add printed"
  has "--cmake)" "classic without configure.wrf: says how to set up the CMake build"
fi
snap
run; status 0 "classic apply again"
[ "$(count '^already applied: 000[1-5]-')" = 5 ] && ok "classic again: already applied" || bad "classic again: $out"
[ "$HAVE_CONF" = 0 ] || has "configure.wrf: nothing to do" "classic again: configure.wrf nothing to do"
same "$tmp/snap" "classic again changes nothing"
run --check; status 0 "--check (classic)"
if [ "$HAVE_CONF" = 1 ]; then
  has "configure.wrf                            defines: -DRUN_ON_GPU" "--check: configure.wrf defines -DRUN_ON_GPU"
  has "wrfgpu build set up                      classic (configure.wrf has -DRUN_ON_GPU)" "--check: classic mode"
fi
has "CMakeLists.txt                           no include( wrfgpu )" "--check: no include in CMakeLists.txt"
run --revert; status 0 "--revert (classic)"
same "$P" "--revert (classic): the original again"
run --revert; same "$P" "--revert again (classic): still the original"

# ---- B2. the patched files compile: preprocessed as WRF's classic build does (configure.wrf's
#      CPP and CPPFLAGS, -DRUN_ON_GPU) and checked by WRF's Fortran compiler with -fsyntax-only
#      against the modules of the built tree WRFGPU_TEST_WRF_DIR and this repository's include/
#      (make lib). Needs a built tree (frame/module_domain.mod): else said and left out.
#      chem/chem_driver.F needs a WRF-Chem build's modules (chem/*.mod).
echo "-- patched files compile (syntax only)"
if [ "$HAVE_CONF" = 1 ] && [ -f "$W/frame/module_domain.mod" ] && [ -f "$repo/include/module_wrfgpu_wsm5.mod" ]; then
  fresh
  run; status 0 "classic apply (for the compile)"
  flags=$(cd "$W" && printf 'include configure.wrf\nprint:\n\t@echo $(CPP) $(CPPFLAGS)\n\t@echo $(FC) $(FCBASEOPTS_NO_G)\n' | make -s -f - print 2>/dev/null)
  cpp_cmd=$(echo "$flags" | sed -n 1p); fc_cmd=$(echo "$flags" | sed -n 2p | sed 's/^time //')   # FC: mpif90 under dmpar
  # the core definitions WRF's compile script exports (em core)
  cpp_cmd="$cpp_cmd -DEM_CORE=1 -DNMM_CORE=0 -DDA_CORE=0 -DWRFPLUS=0 -DNMM_NEST=0 -DRUN_ON_GPU -I$W/inc"
  mods="-I$W/main -I$W/frame -I$W/share -I$W/phys -I$W/dyn_em -I$W/chem -I$W/external/esmf_time_f90 -I$repo/include"
  mkdir -p "$tmp/fsyn"
  # each file with a call that is compiled only under RUN_ON_GPU
  for fm in phys/module_microphysics_driver.F:wsm5_gpu dyn_em/module_em.F:wrfgpu_advect_take \
            dyn_em/solve_em.F:wrfgpu_advect_batch main/module_wrf_top.F:wsm5_gpu_init \
            chem/chem_driver.F:wrfgpu_radm2sorg; do
    f=${fm%%:*}; mark=${fm#*:}
    if [ "$f" = chem/chem_driver.F ] && ! ls "$W"/chem/module_input_chem_data.mod > /dev/null 2>&1; then
      echo "     $f: left out ($W is not a WRF-Chem build: no chem/*.mod)"; continue
    fi
    base=$(basename "$f" .F)
    # WRF's own step before cpp: drop comment lines holding a quote (they upset cpp)
    sed -e "s/^\!.*'.*//" -e "s/^ *\!.*'.*//" "$T/$f" > "$tmp/fsyn/$base.G"
    if ! (cd "$T/$(dirname "$f")" && $cpp_cmd "$tmp/fsyn/$base.G" > "$tmp/fsyn/$base.f90" 2> "$tmp/fsyn/$base.cpp.log"); then
      bad "$f: cpp failed:"; head -5 "$tmp/fsyn/$base.cpp.log"; continue
    fi
    grep -qi "call *$mark" "$tmp/fsyn/$base.f90" || { bad "$f: no call of $mark after cpp with -DRUN_ON_GPU"; continue; }
    if (cd "$tmp/fsyn" && $fc_cmd -fsyntax-only -J "$tmp/fsyn" -I"$tmp/fsyn" $mods "$base.f90" > "$base.fc.log" 2>&1); then
      ok "$f: patched, preprocessed with -DRUN_ON_GPU, compiles (${fc_cmd%% *} -fsyntax-only)"
    else
      bad "$f: ${fc_cmd%% *} -fsyntax-only failed:"; head -15 "$tmp/fsyn/$base.fc.log"
    fi
  done
else
  echo "     left out: needs configure.wrf and a built tree (frame/module_domain.mod) in $W, and make lib here"
fi

# ---- C. CMake mode found by itself: a configure_new build directory, no configure.wrf ---------
echo "-- CMake mode detected"
fresh
rm -f "$T/configure.wrf"
mkdir -p "$T/_build"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\nUSE_MPI:BOOL=ON\nWRF_CASE:STRING=EM_QUARTER_SS\n' "$T" > "$T/_build/CMakeCache.txt"
echo 'set( WRF_ARCH_LOCAL         "NONSTANDARD_SYSTEM_SUBR"    )' > "$T/_build/wrf_config.cmake"
snap
run; status 0 "apply with _build/CMakeCache.txt and no configure.wrf"
has "no configure.wrf and a configure_new build directory (_build): WRF's CMake build (as with --cmake)" "CMake mode chosen"
has "CMakeLists.txt: include( wrfgpu ) added" "detected: include added"
has "next: cd $T && ./compile_new _build" "detected: says compile_new next"
run --check
has "_build/CMakeCache.txt                    configure_new build: WRF_CASE=EM_QUARTER_SS USE_MPI=ON" "--check: reports the CMake build directory"
printf 'USE_WRFGPU:BOOL=ON\nWRFGPU_ROOT:PATH=/opt/wrfgpu\n' >> "$T/_build/CMakeCache.txt"
run --check
has "USE_WRFGPU=ON WRFGPU_ROOT=/opt/wrfgpu" "--check: reports USE_WRFGPU and WRFGPU_ROOT of the build"
run --revert; status 0 "--revert (detected)"
same "$tmp/snap" "--revert (detected): the original again"

# ---- D. both builds on one tree, one --revert --------------------------------------------------
if [ "$HAVE_CONF" = 1 ]; then
  echo "-- both"
  fresh
  run; run --cmake; status 0 "classic, then --cmake"
  run --check
  has "wrfgpu build set up                      classic (configure.wrf has -DRUN_ON_GPU) and CMake (include( wrfgpu ) in CMakeLists.txt)" "--check: both"
  run --revert; status 0 "--revert (both)"
  same "$P" "--revert (both): the original again"
fi

# ---- E. refusals leave the tree as it was ---------------------------------------------------
echo "-- refusals"
fresh
rm -f "$T/configure.wrf"
mkdir -p "$T/_build"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\n' "$T" > "$T/_build/CMakeCache.txt"
echo 'set( WRF_ARCH_LOCAL         "NONSTANDARD_SYSTEM_SUBR XEON_OPTIMIZED_WSM5"    )' > "$T/_build/wrf_config.cmake"
snap
run --cmake; status 1 "XEON_OPTIMIZED_WSM5 stanza refused"
has "_build/wrf_config.cmake defines XEON_OPTIMIZED_WSM5" "XEON: says why"
same "$tmp/snap" "XEON: nothing changed"
fresh
echo "# someone else's file" > "$T/cmake/wrfgpu.cmake"
snap
run --cmake; status 1 "a cmake/wrfgpu.cmake apply.sh did not write: refused"
same "$tmp/snap" "foreign cmake/wrfgpu.cmake: nothing changed"
run --revert; status 0 "--revert with a foreign cmake/wrfgpu.cmake"
has "cmake/wrfgpu.cmake was not written by apply.sh; left as it is" "--revert leaves the foreign file"
same "$tmp/snap" "--revert: the foreign file kept"
fresh
snap
run --cmake --capture --no-gpu; status 1 "--cmake --capture --no-gpu refused"
same "$tmp/snap" "--cmake --capture: nothing changed"
grep -vx '# Accumulate option and definitions' "$P/CMakeLists.txt" > "$T/CMakeLists.txt"
snap
run --cmake; status 1 "a CMakeLists.txt without '# Accumulate option and definitions' refused"
same "$tmp/snap" "no anchor: nothing changed"

# WRF of another version: refused in both modes, nothing changed
for m in "" --cmake; do
  fresh
  sed -i "s/'V4\.7\.[0-9]*'/'V4.6.1'/" "$T/inc/version_decl"
  snap
  run $m; status 1 "WRF 4.6.1 refused${m:+ ($m)}"
  has "WRF 4.6.1 in $T: these patches are for WRF v4.7.x only" "WRF 4.6.1${m:+ ($m)}: says why"
  same "$tmp/snap" "WRF 4.6.1${m:+ ($m)}: nothing changed"
done

# ---- G. a tree patched by an earlier wrfgpu whose 0002 differs: apply.sh reverts the recorded
#      version and applies this one; --revert reverts whichever is recorded. The earlier version
#      is this repository's 0002 with one comment line it adds changed (a copy of wrf_patch/).
echo "-- an earlier version of a patch"
old=$tmp/old_wrf_patch
rm -rf "$old" && cp -a "$repo/wrf_patch" "$old"
n=$(grep -n '^+ *!' "$old/gpu/0002-advect-pd-gpu.patch" | head -1 | cut -d: -f1)
sed -i "${n}s/\$/ (an earlier text)/" "$old/gpu/0002-advect-pd-gpu.patch"
cmp -s "$old/gpu/0002-advect-pd-gpu.patch" "$repo/wrf_patch/gpu/0002-advect-pd-gpu.patch" \
  && bad "the earlier 0002 is not another text" || ok "an earlier 0002: line $n of the patch another comment"
fresh; run; rm -rf "$tmp/now" && cp -a "$T" "$tmp/now"         # the tree as this wrfgpu patches it
fresh
out=$("$old/apply.sh" "$T" --wrfgpu "$repo" 2>&1); st=$?; status 0 "the earlier wrfgpu applies its patches"
[ -f "$T/.wrfgpu/applied/0002-advect-pd-gpu.patch" ] && cmp -s "$T/.wrfgpu/applied/0002-advect-pd-gpu.patch" "$old/gpu/0002-advect-pd-gpu.patch" \
  && ok "the earlier 0002 is recorded as applied" || bad "no record of the earlier 0002 in .wrfgpu/applied"
run --check; status 0 "--check on the earlier version"
echo "$out" | grep -Eq '^0002-advect-pd-gpu.patch +an earlier version applied \(running apply.sh again updates it\)$' \
  && ok "--check: 0002 an earlier version" || bad "--check did not report the earlier 0002: $out"
echo "$out" | grep -Eq '^0005-persistent-solve-em-arrays.patch +applied$' && ok "--check: 0005 applied" || bad "--check: 0005: $out"
run; status 0 "apply over the earlier version"
has "updated: 0002-advect-pd-gpu.patch (the earlier version reverted, this one applied)" "the earlier 0002 updated"
[ "$(count '^already applied: 000[1345]-')" = 4 ] && ok "the other 4 patches left as they were" || bad "the other patches: $out"
same "$tmp/now" "the updated tree is the tree this wrfgpu patches (diff -r, records included)"
fresh; "$old/apply.sh" "$T" --wrfgpu "$repo" > /dev/null 2>&1
run --revert; status 0 "--revert of the earlier version"
[ "$(count '^reverted: 000[1-5]-')" = 5 ] && ok "--revert: the 5 patches, the earlier 0002 among them" || bad "--revert: $out"
same "$P" "--revert of the earlier version: the original files, no records (diff -r)"
fresh; "$old/apply.sh" "$T" --wrfgpu "$repo" > /dev/null 2>&1; rm -rf "$T/.wrfgpu"; snap
run; status 1 "a tree patched without records: refused"
has "records no earlier version of it" "without records: says why"
has "nothing changed" "without records: says nothing changed"
same "$tmp/snap" "without records: the tree as it was"

# ---- F. all or nothing in CMake mode: cp, mv, rm or mkdir failing at each call in turn -----------------
# (apply --cmake on the original tree, --revert on the applied one): the tree ends either as it
# was or completely done, never in between
echo "-- failures injected"
shim=$tmp/shim
mkdir -p "$shim"
for c in cp mv rm mkdir; do
  real=$(command -v $c)
  cat > "$shim/$c.sh" <<EOF
#!/bin/sh
n=\$(cat "\$SHIM_COUNT" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > "\$SHIM_COUNT"
[ "\$n" = "\$SHIM_FAIL_AT" ] && { echo "($c call \$n made to fail)" >&2; exit 1; }
exec $real "\$@"
EOF
done
fresh; run --cmake; rm -rf "$tmp/done" && cp -a "$T" "$tmp/done"
for scenario in apply revert; do
  if [ "$scenario" = apply ]; then from=$P; to=$tmp/done; opt=--cmake; else from=$tmp/done; to=$P; opt=--revert; fi
  for c in cp mv rm mkdir; do
    rm -f "$shim/$c"; ln -s "$shim/$c.sh" "$shim/$c"; chmod +x "$shim/$c.sh"
    n=1; mid=0; tried=0
    while [ "$n" -le 200 ]; do
      rm -rf "$T" && cp -a "$from" "$T"
      echo 0 > "$tmp/count"
      SHIM_COUNT=$tmp/count SHIM_FAIL_AT=$n PATH="$shim:$PATH" "$A" "$T" $opt > "$tmp/out" 2>&1
      calls=$(cat "$tmp/count"); tried=$((tried + 1))
      if diff -r "$from" "$T" > /dev/null 2>&1 || diff -r "$to" "$T" > /dev/null 2>&1; then :; else
        mid=$((mid + 1)); echo "      $scenario, $c call $n failing: the tree is neither as it was nor done:"; diff -r "$to" "$T" | head -5
      fi
      [ "$calls" -lt "$n" ] && break          # this run made fewer calls: no failure happened
      n=$((n + 1))
    done
    rm -f "$shim/$c"
    [ "$mid" = 0 ] && ok "$scenario ($opt), $c failing at each of its $((tried - 1)) calls in turn: as it was or done" \
                   || bad "$scenario ($opt), $c failing: $mid of $tried runs left the tree half-done"
  done
done

exit $rc
