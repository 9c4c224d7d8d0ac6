! test_switches_fortran.F90 - the run-time switches the WRF hooks read through the Fortran
! modules: wrfgpu_radm2sorg_on() is .FALSE. exactly when WRFGPU_RADM2SORG=0 (the RADM2SORG
! hook in chem_driver.F then calls WRF's own kpp_mechanism_driver). run_tests.sh runs this with
! the environment as it is; tests/driver/switches.sh runs it with WRFGPU_RADM2SORG=0 and =1.
PROGRAM test_switches_fortran
  USE module_wrfgpu_radm2sorg, ONLY: wrfgpu_radm2sorg_on
  IMPLICIT NONE
  CHARACTER(LEN=8) :: env
  LOGICAL :: expect
  CALL GET_ENVIRONMENT_VARIABLE('WRFGPU_RADM2SORG', env)
  expect = TRIM(env) /= '0'
  IF (wrfgpu_radm2sorg_on() .NEQV. expect) THEN
    WRITE(*, '(A,A,A)') 'test_switches_fortran: FAIL: WRFGPU_RADM2SORG="', TRIM(env), '"'
    STOP 1
  END IF
  IF (wrfgpu_radm2sorg_on() .NEQV. expect) STOP 1   ! the cached second answer agrees
  WRITE(*, '(A,L1)') 'test_switches_fortran: PASS, wrfgpu_radm2sorg_on() = ', expect
END PROGRAM test_switches_fortran
