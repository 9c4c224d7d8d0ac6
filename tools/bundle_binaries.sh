#!/bin/sh
# bundle_binaries.sh DIR - copies bin/, test_data/ and the shared libraries the programs
# need (all but glibc and the CUDA driver) into DIR, for a run on a machine that has a GPU
# driver but not NetCDF, HDF5, Open MPI or gfortran. Run there with
#   LD_LIBRARY_PATH=DIR/lib DIR/bin/wrfgpu_replay ...
set -e
dest=${1:?usage: tools/bundle_binaries.sh DIR}
cd "$(dirname "$0")/.."
mkdir -p "$dest/bin" "$dest/lib"
cp bin/* "$dest/bin/"
for b in bin/*; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*) ;;
    # Large libraries every recent Linux distribution has; set BUNDLE_ALL=1 to copy them too.
    libicu*|libcrypto*|libssl*|libgnutls*|libstdc++*|libunistring*|libp11-kit*|libgcc_s*)
      [ -n "$BUNDLE_ALL" ] && cp -L "$lib" "$dest/lib/" ;;
    *) cp -L "$lib" "$dest/lib/" ;;
  esac
done
# Open MPI loads its components at run time (a singleton MPI_Init needs them too).
for d in /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 /usr/lib/x86_64-linux-gnu/pmix2/lib; do
  [ -d "$d" ] && mkdir -p "$dest/lib/$(basename "$d")" && cp -rL "$d"/. "$dest/lib/$(basename "$d")/" 2>/dev/null || true
done
du -sh "$dest"
