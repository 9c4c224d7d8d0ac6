#!/bin/sh
# A bad value in a batched advection call (wrfgpu_advect_batch, as wrf_patch 0002 calls it for
# moist) is named with WRF's own subscripts, moist(i,k,j,im), and its value: case I of
# bin/test_advect_fortran puts a NaN in moist(its+1,kts+1,jts+1,nspec) of a batch of
# moist(:,:,:,1:nspec); and one in tke_1(its+1,kts+1,jts+1) of a 3-D pair batched as wrf_patch
# 0002 batches TKE (tke_2 advected from tke_1), named without a species subscript, also when
# the name is longer than 32 characters.
cd "$(dirname "$0")/../.." || exit 2
t=bin/test_advect_fortran
[ -x $t ] || { echo "FAIL $t was not built (make check builds it)"; exit 1; }
out=$(WRFGPU_BACKEND=cpu timeout 300 $t 2>&1); rc=$?
pat="^wrfgpu: advection: moist\(2,2,2,[0-9]+\): non-finite value nan$"
if [ $rc -ne 0 ]; then echo "FAIL $t exited $rc:"; echo "$out" | tail -5; exit 1; fi
n=$(echo "$out" | grep -cE "$pat")
if [ "$n" -lt 1 ]; then
  echo "FAIL no line matching '$pat'; the advection messages were:"; echo "$out" | grep "advection" | head -5; exit 1
fi
if echo "$out" | grep -q "in species"; then
  echo "FAIL a batch's message counts species within the call:"; echo "$out" | grep "in species" | head -3; exit 1
fi
echo "ok   a NaN in a batch named as WRF's element, $n times: $(echo "$out" | grep -E "$pat" | head -1)"
pat3="^wrfgpu: advection: tke_1\(2,2,2\): non-finite value nan$"
n3=$(echo "$out" | grep -cE "$pat3")
if [ "$n3" -lt 1 ]; then
  echo "FAIL no line matching '$pat3'; the advection messages were:"; echo "$out" | grep "advection" | head -8; exit 1
fi
echo "ok   a NaN in a 3-D pair named as WRF's element, $n3 times: $(echo "$out" | grep -E "$pat3" | head -1)"
pat4="^wrfgpu: advection: tke_1_of_the_nested_domain_with_a_long_name\(2,2,2\): non-finite value nan$"
if ! echo "$out" | grep -qE "$pat4"; then
  echo "FAIL no line matching '$pat4' (a field_old name over 32 characters, named in full)"; echo "$out" | grep "advection: tke" | head -4; exit 1
fi
echo "ok   a field_old name over 32 characters named in full"
