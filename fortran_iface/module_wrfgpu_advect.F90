!-------------------------------------------------------------------------------
! module_wrfgpu_advect: Fortran binding of wrfgpu's scalar advection
! (WRF's advect_scalar_pd for the last Runge-Kutta step, advect_scalar for RK1/RK2,
! h_sca_adv_order=5, v_sca_adv_order=3), for all species of a WRF 4-D array at once.
!
! No copies: the 4-D arrays are passed by their first element, so
!   CALL wrfgpu_advect(1, num_3d_m-PARAM_FIRST_SCALAR+1,                      &
!        moist(ims,kms,jms,PARAM_FIRST_SCALAR), moist_old(ims,kms,jms,PARAM_FIRST_SCALAR), &
!        advect_tend4(ims,kms,jms,1), ...)
! advects every moist species in one call (solve_em.F, before moist_variable_loop), and
!   CALL wrfgpu_advect(1, 1, scalar(ims,kms,jms,im), scalar_old(ims,kms,jms,im),  &
!        advect_tend(ims,kms,jms), h_tendency, z_tendency, ...)
! replaces the advect_scalar_pd call of rk_scalar_tend for one species.
! flags(16) and dims(18) as in fortran_iface/advect_bridge.cpp; wrfgpu_advect_flags builds
! flags from the config_flags members, so WRF's derived type never enters this module.
! On error: with stat present, stat = 2 (bad input) / 1 (runtime) after the message is
! printed; without it the program stops (ERROR STOP).
!-------------------------------------------------------------------------------
MODULE module_wrfgpu_advect
  USE, INTRINSIC :: ISO_C_BINDING
  IMPLICIT NONE
  PRIVATE
  PUBLIC :: wrfgpu_advect, wrfgpu_advect_flags

  INTERFACE
    SUBROUTINE wrfgpu_advect_run(pd, nspec, field, field_old, tend, h_tend, z_tend, ru, rv, rom, &
         mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,        &
         flags, dims, accumulate, backend, times, ierr) BIND(C, name='wrfgpu_advect_run')
      IMPORT :: C_INT, C_FLOAT, C_DOUBLE
      INTEGER(C_INT), INTENT(IN) :: pd, nspec, time_step, flags(16), dims(18), accumulate, backend
      REAL(C_FLOAT), INTENT(IN) :: field(*), field_old(*), ru(*), rv(*), rom(*)
      REAL(C_FLOAT), INTENT(INOUT) :: tend(*), h_tend(*), z_tend(*)
      REAL(C_FLOAT), INTENT(IN) :: mut(*), mub(*), mu_old(*), msftx(*), msfty(*)
      REAL(C_FLOAT), INTENT(IN) :: c1(*), c2(*), fzm(*), fzp(*), rdzw(*)
      REAL(C_FLOAT), INTENT(IN) :: rdx, rdy, dt
      REAL(C_DOUBLE), INTENT(OUT) :: times(4)
      INTEGER(C_INT), INTENT(OUT) :: ierr
    END SUBROUTINE wrfgpu_advect_run
  END INTERFACE

CONTAINS

  ! flags(16) from the config_flags members advect_scalar_pd reads.
  SUBROUTINE wrfgpu_advect_flags(flags, h_order, v_order, periodic_x, periodic_y,       &
       symmetric_xs, symmetric_xe, symmetric_ys, symmetric_ye, open_xs, open_xe, open_ys, &
       open_ye, specified, nested, polar, tenddec)
    INTEGER, INTENT(OUT) :: flags(16)
    INTEGER, INTENT(IN) :: h_order, v_order
    LOGICAL, INTENT(IN) :: periodic_x, periodic_y, symmetric_xs, symmetric_xe, symmetric_ys, &
         symmetric_ye, open_xs, open_xe, open_ys, open_ye, specified, nested, polar, tenddec
    flags(1) = h_order
    flags(2) = v_order
    flags(3) = MERGE(1, 0, periodic_x);   flags(4) = MERGE(1, 0, periodic_y)
    flags(5) = MERGE(1, 0, symmetric_xs); flags(6) = MERGE(1, 0, symmetric_xe)
    flags(7) = MERGE(1, 0, symmetric_ys); flags(8) = MERGE(1, 0, symmetric_ye)
    flags(9) = MERGE(1, 0, open_xs);      flags(10) = MERGE(1, 0, open_xe)
    flags(11) = MERGE(1, 0, open_ys);     flags(12) = MERGE(1, 0, open_ye)
    flags(13) = MERGE(1, 0, specified);   flags(14) = MERGE(1, 0, nested)
    flags(15) = MERGE(1, 0, polar);       flags(16) = MERGE(1, 0, tenddec)
  END SUBROUTINE wrfgpu_advect_flags

  ! pd: 1 = advect_scalar_pd (rk_step == rk_order), 0 = advect_scalar.
  ! backend: 0 auto/WRFGPU_BACKEND, 1 cpu, 2 gpu, 3 both. accumulate: 0 = tendency starts at 0.
  SUBROUTINE wrfgpu_advect(pd, nspec, field, field_old, tend, h_tend, z_tend, ru, rv, rom,  &
       mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,      &
       flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                      &
       its, ite, jts, jte, kts, kte, backend, accumulate, times, stat)
    INTEGER, INTENT(IN) :: pd, nspec, time_step, flags(16)
    INTEGER, INTENT(IN) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    REAL, INTENT(IN) :: field(*), field_old(*)
    REAL, INTENT(INOUT) :: tend(*), h_tend(*), z_tend(*)
    REAL, INTENT(IN) :: ru(*), rv(*), rom(*), mut(*), mub(*), mu_old(*), msftx(*), msfty(*)
    REAL, INTENT(IN) :: c1(*), c2(*), fzm(*), fzp(*), rdzw(*)
    REAL, INTENT(IN) :: rdx, rdy, dt
    INTEGER, INTENT(IN), OPTIONAL :: backend, accumulate
    DOUBLE PRECISION, INTENT(OUT), OPTIONAL :: times(4)
    INTEGER, INTENT(OUT), OPTIONAL :: stat
    INTEGER(C_INT) :: dims(18), ierr, b, acc
    REAL(C_DOUBLE) :: t(4)
    dims = (/ ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte /)
    b = 0
    IF (PRESENT(backend)) b = backend
    acc = 0
    IF (PRESENT(accumulate)) acc = accumulate
    CALL wrfgpu_advect_run(INT(pd, C_INT), INT(nspec, C_INT), field, field_old, tend, h_tend, &
         z_tend, ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, &
         dt, INT(time_step, C_INT), INT(flags, C_INT), dims, acc, b, t, ierr)
    IF (PRESENT(times)) times = t
    IF (PRESENT(stat)) THEN
      stat = ierr
    ELSE IF (ierr /= 0) THEN
      WRITE(0, '(A,I0)') 'wrfgpu_advect: failed, status ', ierr
      ERROR STOP 1
    END IF
  END SUBROUTINE wrfgpu_advect

END MODULE module_wrfgpu_advect
