#!/bin/sh
# wrf_gpu_bundle.sh - tools/wrf_gpu_bundle.sh on stand-ins for wrf.exe: two small C programs
# (built here with cc, with symbols and debug info) that need a library libwork.so.1 in two
# different versions, and a stand-in ICU pair (libicuuc.so.99 referencing the data symbol
# icudt99_dat of a 1 MiB libicudata.so.99) and a stand-in MPI pair (libmpi_standin.so.1 needing
# libopen-pal_standin.so.1: the bundle keeps MPI under lib/mpi/ for machines without their own).
# Checked: two executables in one bundle (--exe
# NAME=PATH) with one lib/ and the differing libwork under lib/for-NAME/; the copies stripped and
# the originals unchanged; libicudata replaced by a stub that still loads; run.sh --list, --exe
# NAME and EXE=NAME, each executable with its own libwork after the build directories are gone;
# run.sh linking both MPI stand-ins from lib/mpi/ where they are missing (the second is only
# seen once the first is there); the single-executable usage (WRF_RUN_DIR/wrf.exe, out_BACKEND/); --no-icu-stub; two unnamed
# executables refused. Needs cc, strip, nm and xz; SKIPS (77) without them.
# tests/driver/wrf_gpu_bundle_wrf.sh does the same with a real wrf.exe.
cd "$(dirname "$0")/../.." || exit 2
repo=$(pwd)
for t in cc strip nm xz bash; do
  command -v $t >/dev/null 2>&1 || { echo "wrf_gpu_bundle.sh: SKIPPED: no $t"; exit 77; }
done
B=$repo/tools/wrf_gpu_bundle.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; rc=1; }

# ---- the stand-ins -----------------------------------------------------------------------------
mkdir -p "$tmp/icu" "$tmp/v1" "$tmp/v2" "$tmp/mpi" "$tmp/build" "$tmp/run"
printf 'int pal_standin(void) { return 7; }\n' > "$tmp/pal.c"
printf 'int pal_standin(void);\nint mpi_standin(void) { return pal_standin(); }\n' > "$tmp/mpi.c"
printf 'const unsigned char icudt99_dat[1048576] = {0xda, 0x27, 1, 2, 3};\n' > "$tmp/icudata.c"
printf 'extern const unsigned char icudt99_dat[];\nint icu_magic(void) { return icudt99_dat[0]; }\n' > "$tmp/icuuc.c"
for v in 1 2; do
  printf 'int work_version(void) { return %s; }\n' $v > "$tmp/work$v.c"
done
cat > "$tmp/main.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int work_version(void);
int icu_magic(void);
int mpi_standin(void);
int main(int argc, char **argv) {
  FILE *f = fopen("namelist.input", "r");
  const char *be = getenv("WRFGPU_BACKEND");
  (void)argc;
  if (!f) { printf("ERROR OPENING namelist.input\n"); return 1; }
  fclose(f);
  /* icu 218: the real stand-in libicudata (0xda), icu 0: the bundle's stub */
  printf("stand-in %s libwork v%d icu %d mpi %d backend=%s\n", NAME, work_version(), icu_magic(),
         mpi_standin(), be ? be : "unset");
  printf("d01 wrf: SUCCESS COMPLETE WRF (%s)\n", argv[0]);
  return 0;
}
EOF
cc -shared -fPIC -Wl,-soname,libicudata.so.99 -o "$tmp/icu/libicudata.so.99" "$tmp/icudata.c" \
  && cc -shared -fPIC -Wl,-soname,libopen-pal_standin.so.1 -o "$tmp/mpi/libopen-pal_standin.so.1" "$tmp/pal.c" \
  && cc -shared -fPIC -Wl,-soname,libmpi_standin.so.1 -o "$tmp/mpi/libmpi_standin.so.1" "$tmp/mpi.c" \
       -L"$tmp/mpi" -l:libopen-pal_standin.so.1 -Wl,--enable-new-dtags,-rpath,"$tmp/mpi" \
  && cc -shared -fPIC -Wl,-soname,libicuuc.so.99 -o "$tmp/icu/libicuuc.so.99" "$tmp/icuuc.c" \
       -L"$tmp/icu" -l:libicudata.so.99 -Wl,--enable-new-dtags,-rpath,"$tmp/icu" \
  && cc -shared -fPIC -Wl,-soname,libwork.so.1 -o "$tmp/v1/libwork.so.1" "$tmp/work1.c" \
  && cc -shared -fPIC -Wl,-soname,libwork.so.1 -o "$tmp/v2/libwork.so.1" "$tmp/work2.c" \
  && cc -g -DNAME='"a"' -o "$tmp/build/a.exe" "$tmp/main.c" -L"$tmp/v1" -l:libwork.so.1 -L"$tmp/icu" \
       -l:libicuuc.so.99 -L"$tmp/mpi" -l:libmpi_standin.so.1 -Wl,--enable-new-dtags,-rpath,"$tmp/v1:$tmp/icu:$tmp/mpi" \
  && cc -g -DNAME='"b"' -o "$tmp/build/b.exe" "$tmp/main.c" -L"$tmp/v2" -l:libwork.so.1 -L"$tmp/icu" \
       -l:libicuuc.so.99 -L"$tmp/mpi" -l:libmpi_standin.so.1 -Wl,--enable-new-dtags,-rpath,"$tmp/v2:$tmp/icu:$tmp/mpi" \
  || { echo "wrf_gpu_bundle.sh: FAIL: could not build the stand-ins"; exit 1; }
"$tmp/build/a.exe" >/dev/null 2>&1; [ $? -eq 1 ] || { echo "FAIL: the stand-in does not run"; exit 1; }
printf '&time_control\n/\n' > "$tmp/run/namelist.input"
printf 'table\n' > "$tmp/run/x.asc"
printf 'output\n' > "$tmp/run/wrfout_d01_x"
sums() { sha256sum "$tmp/build/a.exe" "$tmp/build/b.exe" "$tmp/icu/libicudata.so.99" "$tmp/v1/libwork.so.1"; }
before=$(sums)

# ---- two executables --------------------------------------------------------------------------
O=$tmp/two
if bash "$B" "$tmp/run" "$O" --exe a="$tmp/build/a.exe" --exe b="$tmp/build/b.exe" --backends cpu \
     > "$tmp/two.log" 2>&1; then ok "bundle of a and b"; else cat "$tmp/two.log"; bad "bundle of a and b"; fi
[ "$(sums)" = "$before" ] && ok "originals unchanged" || bad "the originals changed"
[ -f "$O/payload.tar.xz" ] && [ ! -e "$O/a.exe" ] && ok "payload.tar.xz" || bad "no payload.tar.xz"
[ "$(ls "$O/input" | tr '\n' ' ')" = "namelist.input x.asc " ] && ok "input/: namelist.input x.asc" \
  || bad "input/ holds: $(ls "$O/input" | tr '\n' ' ')"
grep -q '^a.exe: ' "$O/MANIFEST.txt" && grep -q '^b.exe: ' "$O/MANIFEST.txt" && ok "MANIFEST names a.exe and b.exe" \
  || bad "MANIFEST.txt: $(cat "$O/MANIFEST.txt")"
[ "$("$O/run.sh" --list)" = "a b" ] && ok "run.sh --list: a b" || bad "run.sh --list: $("$O/run.sh" --list)"
mv "$tmp/v1" "$tmp/v1.gone"; mv "$tmp/v2" "$tmp/v2.gone"; mv "$tmp/icu" "$tmp/icu.gone"; mv "$tmp/mpi" "$tmp/mpi.gone"
"$O/run.sh" --exe b > "$tmp/run_b.log" 2>&1
grep -q 'stand-in b libwork v2 icu 0 mpi 7 backend=cpu' "$O/out_b_cpu/wrf.log" 2>/dev/null && [ ! -d "$O/out_a_cpu" ] \
  && ok "run.sh --exe b: b.exe with libwork v2, out_b_cpu/ only" || { cat "$tmp/run_b.log"; bad "run.sh --exe b"; }
grep -q 'using the bundled libmpi_standin.so.1' "$tmp/run_b.log" && grep -q 'using the bundled libopen-pal_standin.so.1' "$tmp/run_b.log" \
  && [ -f "$O/lib/mpi/libopen-pal_standin.so.1" ] && ok "run.sh: both MPI stand-ins linked from lib/mpi/" \
  || { cat "$tmp/run_b.log"; bad "MPI stand-ins from lib/mpi/"; }
EXE=a "$O/run.sh" gpu > "$tmp/run_a.log" 2>&1
grep -q 'stand-in a libwork v1 icu 0 mpi 7 backend=gpu' "$O/out_a_gpu/wrf.log" 2>/dev/null \
  && ok "EXE=a run.sh gpu: a.exe with libwork v1" || { cat "$tmp/run_a.log"; bad "EXE=a run.sh gpu"; }
rm -rf "$O"/out_*
"$O/run.sh" cpu > "$tmp/run_ab.log" 2>&1
grep -q 'stand-in a libwork v1' "$O/out_a_cpu/wrf.log" 2>/dev/null && grep -q 'stand-in b libwork v2' "$O/out_b_cpu/wrf.log" 2>/dev/null \
  && ok "run.sh cpu: both, each with its libwork" || { cat "$tmp/run_ab.log"; bad "run.sh cpu (both)"; }
"$O/run.sh" --exe c cpu > /dev/null 2>&1; [ $? -eq 2 ] && ok "run.sh --exe c: refused" || bad "run.sh --exe c not refused"
[ -f "$O/lib/libwork.so.1" ] && [ -f "$O/lib/for-b/libwork.so.1" ] && [ ! -e "$O/lib/for-a" ] \
  && ok "lib/libwork.so.1 (a's) and lib/for-b/libwork.so.1" || bad "lib/: $(cd "$O" && find lib | tr '\n' ' ')"
[ "$(find "$O/lib" -name libicuuc.so.99 | wc -l)" -eq 1 ] && ok "libicuuc carried once" || bad "libicuuc: $(find "$O/lib" -name 'libicuuc*')"
s=$(stat -c %s "$O/lib/libicudata.so.99" 2>/dev/null || echo 0)
[ "$s" -gt 0 ] && [ "$s" -lt 65536 ] && nm -D --defined-only "$O/lib/libicudata.so.99" | grep -q ' icudt99_dat$' \
  && ok "libicudata.so.99: a stub of $s bytes exporting icudt99_dat" || bad "libicudata.so.99: $s bytes"
if readelf -S "$O/a.exe" | grep -q '\.symtab\|\.debug_info'; then bad "a.exe not stripped"; else ok "a.exe stripped"; fi
readelf -S "$tmp/build/a.exe" | grep -q '\.debug_info' && ok "the original a.exe keeps its debug info" || bad "original a.exe stripped"

# ---- one executable, the old usage ------------------------------------------------------------
mv "$tmp/v1.gone" "$tmp/v1"; mv "$tmp/icu.gone" "$tmp/icu"; mv "$tmp/mpi.gone" "$tmp/mpi"
cp "$tmp/build/a.exe" "$tmp/run/wrf.exe"
O=$tmp/one
if bash "$B" "$tmp/run" "$O" --no-xz --no-icu-stub > "$tmp/one.log" 2>&1; then ok "bundle of RUN/wrf.exe"; else cat "$tmp/one.log"; bad "bundle of RUN/wrf.exe"; fi
[ -x "$O/wrf.exe" ] && [ ! -e "$O/payload.tar.xz" ] && [ ! -e "$O/input/wrf.exe" ] && ok "--no-xz: wrf.exe, no payload; wrf.exe not in input/" \
  || bad "--no-xz layout: $(ls "$O" "$O/input" | tr '\n' ' ')"
[ "$(stat -c %s "$O/lib/libicudata.so.99")" -ge 1048576 ] \
  && ok "--no-icu-stub: the real libicudata (stripped, its 1 MiB of data kept)" || bad "--no-icu-stub: libicudata replaced"
mv "$tmp/v1" "$tmp/v1.gone"
"$O/run.sh" cpu > "$tmp/run_one.log" 2>&1
grep -q 'stand-in a libwork v1 icu 218 mpi 7 backend=cpu' "$O/out_cpu/wrf.log" 2>/dev/null && ok "run.sh cpu: out_cpu/" \
  || { cat "$tmp/run_one.log"; bad "run.sh cpu (one executable)"; }

# ---- refusals --------------------------------------------------------------------------------
bash "$B" "$tmp/run" "$tmp/bad" --exe "$tmp/build/a.exe" --exe "$tmp/build/b.exe" > "$tmp/bad.log" 2>&1
[ $? -ne 0 ] && grep -q 'two executables named wrf' "$tmp/bad.log" && ok "two unnamed executables refused" \
  || { cat "$tmp/bad.log"; bad "two unnamed executables"; }

[ $rc -eq 0 ] && echo "wrf_gpu_bundle.sh: all checks passed"
exit $rc
