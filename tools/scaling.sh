#!/bin/sh
# scaling.sh gpu|cpu OUTDIR [RANKS] - strong and weak scaling of the three kernels through the
# replay driver's MPI mode (one rank per GPU, or one single-threaded rank per core).
#
#   tools/scaling.sh gpu out "1 2 4"        # on a machine with 4 GPUs
#   tools/scaling.sh cpu out "1 2 4 8 16"   # CPU backend, OMP_NUM_THREADS=1, ranks bound to cores
#
# Cases are made with tools/make_large_case from the bundled captures (uncompressed, in
# $WORK, default /tmp/wrfgpu_scaling) and reused. Strong scaling: one size for every rank
# count. Weak scaling: the size grows with the rank count (south_north x ranks), so each rank
# keeps the same number of columns. Advection runs 3 steps with MPI halo exchange between
# steps (--steps 3). Times are medians of --repeat $REPEAT (default 3 on GPUs, 1 on CPUs) of the
# slowest rank of each call.
# Prints one markdown table per (kernel, kind) and writes OUTDIR/scaling.md; logs in OUTDIR.
# Uses $WRFGPU_BUNDLE (tools/bundle_binaries.sh) when set, else this build. ONLY="wsm5 adv chem"
# (default all) picks the kernels.
kind=${1:?usage: scaling.sh gpu|cpu OUTDIR [RANKS]}
out=${2:?usage: scaling.sh gpu|cpu OUTDIR [RANKS]}
ranks=${3:-"1 2 4"}
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
B=${WRFGPU_BUNDLE:-.}
[ -d "$B/lib" ] && export LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
work=${WORK:-/tmp/wrfgpu_scaling}
mkdir -p "$work"
drv="$B/bin/wrfgpu_replay"
mk="$B/bin/wrfgpu_make_large_case"
case $kind in
  gpu) backend=gpu; export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}; bind="--bind-to none"; repeat=${REPEAT:-3} ;;
  cpu) backend=cpu; export OMP_NUM_THREADS=1; bind="--bind-to core"; repeat=${REPEAT:-1} ;;
  *) echo "scaling.sh: first argument is gpu or cpu" >&2; exit 2 ;;
esac

# make_case NAME CAPTURE SIZE [NSCALAR]
make_case() {
  f="$work/$1.nc"
  [ -s "$f" ] && return 0
  extra=""; [ -n "$4" ] && extra="--nscalar $4"
  "$mk" "$2" "$f.tmp" --size "$3" --deflate 0 $extra > "$out/make_$1.log" 2>&1 && mv "$f.tmp" "$f" ||
    { echo "scaling.sh: could not make $1:"; tail -3 "$out/make_$1.log"; return 1; }
}
W=test_data/quarter_ss_wsm5_d01_step0180_rank0.nc
A=test_data/quarter_ss_advect_scalar_pd_d01_step0180_rank0.nc
C=test_data/radm2sorg_warm_40x15x20.nc

# Per kind: the strong-scaling sizes, and the weak-scaling size per rank (south_north rows).
if [ $kind = gpu ]; then
  wsm5_strong=425x300x35; adv_strong=425x300x35; adv_n=81; chem_strong=425x300x35
  wsm5_row=425; wsm5_per=75; chem_row=425; chem_per=75
else
  wsm5_strong=425x300x35; adv_strong=425x300x35; adv_n=5; chem_strong=134x110x35
  wsm5_row=425; wsm5_per=19; chem_row=134; chem_per=7
fi
# SMOKE=1: tiny sizes, to check the script itself.
if [ -n "$SMOKE" ]; then
  wsm5_strong=40x30x20; adv_strong=40x30x20; chem_strong=20x10x20; wsm5_row=40; wsm5_per=8; chem_row=20; chem_per=4
  work="$work/smoke"; mkdir -p "$work"
fi
only=${ONLY:-wsm5 adv chem}
want() { case " $only " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
want wsm5 && { make_case wsm5_$wsm5_strong $W $wsm5_strong || exit 1; }
want adv && { make_case adv${adv_n}_$adv_strong $A $adv_strong $adv_n || exit 1; }
want chem && { make_case chem_$chem_strong $C $chem_strong || exit 1; }
for n in $ranks; do
  want wsm5 && { make_case wsm5_${wsm5_row}x$((wsm5_per * n))x35 $W ${wsm5_row}x$((wsm5_per * n))x35 || exit 1; }
  want adv && { make_case adv${adv_n}_${wsm5_row}x$((wsm5_per * n))x35 $A ${wsm5_row}x$((wsm5_per * n))x35 $adv_n || exit 1; }
  want chem && { make_case chem_${chem_row}x$((chem_per * n))x35 $C ${chem_row}x$((chem_per * n))x35 || exit 1; }
done
echo "cases made in $(( $(date +%s) - t0 )) s (in $work)"

# run NAME NP FILE [ARGS]: prints "total kernel h2d d2h halo" (ms, median; slowest rank)
run() {
  name=$1; np=$2; file=$3; shift 3
  log="$out/$name.np$np.log"
  b=$bind; [ "$np" -gt "$(nproc --all)" ] && b="--bind-to none"  # more ranks than cores: no binding
  timeout 580 mpirun --oversubscribe $b -np "$np" "$drv" "$file" --backend $backend --repeat $repeat --quiet "$@" > "$log" 2>&1
  rc=$?
  line=$(grep -E "^   $backend " "$log" | tail -1)
  if [ $rc -ne 0 ] && [ $rc -ne 1 ] || [ -z "$line" ]; then echo "FAILED(rc=$rc)"; tail -3 "$log" >&2; return; fi
  halo=$(echo "$line" | sed -n 's/.*halo exchange \([0-9.]*\).*/\1/p')
  echo "$line" | awk -v h="${halo:-0}" '{printf "%s %s %s %s %s\n", $6, $4, $3, $5, h}'
}

table() { # table TITLE NAME SIZEFN ARGS...
  title=$1; name=$2; sizefn=$3; shift 3
  echo
  echo "### $title"
  echo
  echo "| ranks | case | total ms | kernel ms | H2D+D2H ms | halo ms | speedup | efficiency |"
  echo "|---|---|---|---|---|---|---|---|"
  base=""
  for n in $ranks; do
    c=$($sizefn $n)
    r=$(run "$name" "$n" "$work/$c.nc" "$@")
    case $r in FAILED*) echo "| $n | $c | $r | | | | | |"; continue ;; esac
    tot=$(echo $r | cut -d' ' -f1); ker=$(echo $r | cut -d' ' -f2); h2d=$(echo $r | cut -d' ' -f3)
    d2h=$(echo $r | cut -d' ' -f4); halo=$(echo $r | cut -d' ' -f5)
    [ -z "$base" ] && base=$tot && base_n=$n
    echo "$name" | grep -q weak && weak=1 || weak=0
    awk -v b="$base" -v bn="$base_n" -v t="$tot" -v n="$n" -v k="$ker" -v x1="$h2d" -v x2="$d2h" \
        -v h="$halo" -v c="$c" -v w=$weak 'BEGIN {
      sp = (w ? b / t * n / bn : b / t); eff = (w ? b / t : b / t * bn / n);
      printf "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f%% |\n", n, c, t, k, x1 + x2, h, sp, 100 * eff }'
  done
}
s_wsm5() { echo wsm5_$wsm5_strong; }
s_adv() { echo adv${adv_n}_$adv_strong; }
s_chem() { echo chem_$chem_strong; }
w_wsm5() { echo wsm5_${wsm5_row}x$(($wsm5_per * $1))x35; }
w_adv() { echo adv${adv_n}_${wsm5_row}x$(($wsm5_per * $1))x35; }
w_chem() { echo chem_${chem_row}x$(($chem_per * $1))x35; }

{
  echo "## $kind scaling ($backend backend, ranks: $ranks; $(hostname); $(date -u +%Y-%m-%dT%H:%MZ))"
  [ $kind = gpu ] && nvidia-smi -L
  [ $kind = cpu ] && echo "CPU: $(nproc --all) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), OMP_NUM_THREADS=1, --bind-to core"
  want wsm5 && table "WSM5, strong ($wsm5_strong)" wsm5_strong s_wsm5
  want wsm5 && table "WSM5, weak (${wsm5_row}x${wsm5_per}x35 per rank)" wsm5_weak w_wsm5
  want adv && table "PD advection, $adv_n tracers, 3 steps with halo exchange, strong ($adv_strong)" adv_strong s_adv --steps 3
  want adv && table "PD advection, $adv_n tracers, 3 steps, weak (${wsm5_row}x${wsm5_per}x35 per rank)" adv_weak w_adv --steps 3
  want chem && table "RADM2SORG, strong ($chem_strong)" chem_strong s_chem
  want chem && table "RADM2SORG, weak (${chem_row}x${chem_per}x35 per rank)" chem_weak w_chem
} | tee "$out/scaling.md"
echo "total $(( $(date +%s) - t0 )) s"
# One archive of every log (some machines return only a few files).
tar -C "$out" -czf "$out/../$(basename "$out")_logs.tgz" --exclude '*.tgz' . 2>/dev/null
