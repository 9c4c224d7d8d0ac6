# src/advection/kernel.mk - the scalar advection's public header (packaging/install.mk).
PUBLIC_HEADERS += src/advection/advection.h
