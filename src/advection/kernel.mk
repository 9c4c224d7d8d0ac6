# src/advection/kernel.mk - the scalar advection's public header (packaging/install.mk).
PUBLIC_HEADERS += src/advection/advection.h
# Its captures are the test_data/*.nc files whose names contain this (tools/gpu_validation.sh).
CAPTURE_NAMES += advect
