#!/bin/sh
# tools/mps.sh start|stop|status - the CUDA Multi-Process Service for WRF runs in which several
# MPI ranks share one GPU.
#
# Without MPS every rank has its own GPU context and the GPU time-slices between them: one
# rank's kernels and copies wait for the others' time slices. With MPS the ranks' work goes
# through one server context and runs concurrently. Results are the same bit for bit (each
# rank's kernels and copies are the same; docs/performance.md, "WRF on a node", checks it).
#
#   tools/mps.sh start     # before mpirun; the ranks find the daemon through the pipe folder
#   mpirun -np 16 ./wrf.exe
#   tools/mps.sh stop      # after the run (also when it failed)
#
# The pipe and log folders are $CUDA_MPS_PIPE_DIRECTORY and $CUDA_MPS_LOG_DIRECTORY when set,
# else CUDA's defaults (/tmp/nvidia-mps, /var/log/nvidia-mps; the log folder falls back to
# /tmp/nvidia-mps-log when /var/log is not writable). Ranks must see the same pipe folder as
# the daemon: with non-default folders export CUDA_MPS_PIPE_DIRECTORY for mpirun too
# (mpirun -x CUDA_MPS_PIPE_DIRECTORY). When CUDA_MPS_PIPE_DIRECTORY is set and no daemon runs
# there, libwrfgpu stops the run at start-up, naming the rank, rather than running without MPS.
# On a node with several GPUs one daemon serves all of them. Needs the NVIDIA driver's
# nvidia-cuda-mps-control on PATH.
set -eu
cmd=${1:-}
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
log=${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}
command -v nvidia-cuda-mps-control >/dev/null 2>&1 || {
  echo "mps.sh: nvidia-cuda-mps-control not found (it comes with the NVIDIA driver)" >&2; exit 1; }
running() { [ -S "$pipe/control" ] && echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control >/dev/null 2>&1; }
case "$cmd" in
  start)
    if running; then echo "mps.sh: an MPS daemon already runs (pipe folder $pipe)"; exit 0; fi
    mkdir -p "$pipe"
    if ! mkdir -p "$log" 2>/dev/null || [ ! -w "$log" ]; then log=/tmp/nvidia-mps-log; mkdir -p "$log"; fi
    CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log nvidia-cuda-mps-control -d
    i=0
    until running; do
      i=$((i + 1))
      [ $i -le 50 ] || { echo "mps.sh: the MPS daemon did not come up (log: $log/control.log)" >&2; exit 1; }
      sleep 0.1
    done
    echo "mps.sh: MPS daemon started (pipe folder $pipe, log folder $log)"
    [ "$pipe" = /tmp/nvidia-mps ] || echo "mps.sh: export CUDA_MPS_PIPE_DIRECTORY=$pipe for the ranks"
    ;;
  stop)
    if ! running; then echo "mps.sh: no MPS daemon runs (pipe folder $pipe)"; exit 0; fi
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
    i=0
    while pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1 && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
    echo "mps.sh: MPS daemon stopped"
    ;;
  status)
    if running; then
      echo "mps.sh: an MPS daemon runs (pipe folder $pipe); servers: $(echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control | tr '\n' ' ')"
    else
      echo "mps.sh: no MPS daemon runs (pipe folder $pipe)"; exit 3
    fi
    ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
