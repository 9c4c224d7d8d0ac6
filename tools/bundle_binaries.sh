#!/bin/sh
# bundle_binaries.sh DIR - copies bin/, test_data/ and the shared libraries the programs
# need (all but glibc and the CUDA driver) into DIR, for a run on a machine that has a GPU
# driver but not NetCDF, HDF5 or gfortran. Run there with
#   LD_LIBRARY_PATH=DIR/lib DIR/bin/wrfgpu_replay ...
# (add DIR/mpilib where the machine has no Open MPI 4.x: tools/gpu_validation.sh does that).
set -e
dest=${1:?usage: tools/bundle_binaries.sh DIR}
cd "$(dirname "$0")/.."
mkdir -p "$dest/bin" "$dest/lib"
cp bin/* "$dest/bin/"
cp lib/libwrfgpu.so "$dest/lib/"
# Debug information is not needed to run; it would double what travels.
strip --strip-debug "$dest"/bin/* "$dest/lib/libwrfgpu.so" 2>/dev/null || true
for b in bin/*; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*|libwrfgpu.so*) ;;
    # Large libraries every recent Linux distribution has; set BUNDLE_ALL=1 to copy them too.
    libicu*|libcrypto*|libssl*|libgnutls*|libstdc++*|libunistring*|libp11-kit*|libgcc_s*|libxml2*|\
    libcurl*|libkrb5*|libk5crypto*|libgssapi*|libldap*|liblber*|libsasl2*|libssh2*|librtmp*|libnghttp2*|\
    libpsl*|libidn2*|libbrotli*|libzstd*|liblzma*|libz.so*|libffi*|libgmp*|libnettle*|libhogweed*|\
    libtasn1*|libcom_err*|libkeyutils*|libkrb5support*|libresolv*|libudev*)
      [ -n "$BUNDLE_ALL" ] && cp -L "$lib" "$dest/lib/" ;;
    # Open MPI goes to mpilib/: use it only where the machine has no Open MPI 4.x of its own
    # (a machine's own mpirun needs its own libraries).
    libmpi*|libopen-rte*|libopen-pal*|libhwloc*|libevent*) mkdir -p "$dest/mpilib"; cp -L "$lib" "$dest/mpilib/" ;;
    *) cp -L "$lib" "$dest/lib/" ;;
  esac
done
if [ -d "$dest/mpilib" ]; then
  cp -rL /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 "$dest/mpilib/" 2>/dev/null || true
  cp -L /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2 "$dest/mpilib/" 2>/dev/null || true
  cp -rL /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix "$dest/mpilib/" 2>/dev/null || true
fi
du -sh "$dest"
