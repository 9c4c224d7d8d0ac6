# src/wsm5/kernel.mk - WSM5's public headers (packaging/install.mk): the API and its constants.
PUBLIC_HEADERS += src/wsm5/wsm5.h src/wsm5/wsm5_constants.h
# Its captures are the test_data/*.nc files whose names contain this (tools/gpu_validation.sh).
CAPTURE_NAMES += wsm5
