"""wrfect: the ensemble consistency test for WRF runs (tools/ect/README.md)."""
