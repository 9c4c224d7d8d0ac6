# src/radm2sorg/kernel.mk - RADM2SORG's public headers (packaging/install.mk): radm2sorg.h
# includes the per-cell interface (Options use its constants), which includes the KPP
# integrator and the generated mechanism ("generated/radm2sorg_mechanism.h": the folder is kept;
# its radm2sorg_split.h needs kpp_split.h).
PUBLIC_HEADERS += $(addprefix src/radm2sorg/,radm2sorg.h radm2sorg_interface.h kpp_rosenbrock.h kpp_rosenbrock_team.h kpp_split.h)
PUBLIC_GENERATED += $(wildcard src/radm2sorg/generated/*.h)
# Its captures are the test_data/*.nc files whose names contain this (tools/gpu_validation.sh).
CAPTURE_NAMES += radm2sorg
