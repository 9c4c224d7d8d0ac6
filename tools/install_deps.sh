#!/bin/sh
# install_deps.sh - installs, from Debian packages, whatever wrfgpu needs and is missing:
# compilers, NetCDF-C/Fortran, Open MPI, GoogleTest, gnuplot (driver plots), python3 (the
# KPP mechanism generator) with numpy, scipy, netCDF4 and matplotlib (tools/ect, the ensemble
# consistency test), tcsh, which WRF's own build scripts (configure, compile) need, and cmake and
# pkg-config, through which the tests build programs against an installed wrfgpu. The CUDA
# toolkit is not a Debian package here: it is expected at
# /usr/local/cuda, and without it ./configure builds the CPU backend alone.
set -e
pkgs="g++ gfortran make libnetcdf-dev libnetcdff-dev netcdf-bin libopenmpi-dev openmpi-bin libgtest-dev gnuplot-nox python3 python3-numpy python3-scipy python3-netcdf4 python3-matplotlib tcsh cmake pkg-config"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install_deps: all dependencies present"
  exit 0
fi
echo "install_deps: installing$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install_deps: need root (or sudo) to install:$missing" >&2; exit 1; }
  SUDO=sudo
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
