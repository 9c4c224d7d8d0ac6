!-------------------------------------------------------------------------------
! module_wrfgpu_wsm5: WSM5 microphysics (mp_physics=4) on the GPU, called from WRF.
!
! wsm5_gpu has the argument list of WRF v4.7.1's wsm5 (phys/module_mp_wsm5.F), same dummy
! names and order, so the call in module_microphysics_driver.F changes by one word:
!     CALL wsm5(     TH=th, Q=qv_curr, ... )   ->   CALL wsm5_gpu( TH=th, Q=qv_curr, ... )
! The arrays are WRF's memory-dimensioned arrays (ims:ime,kms:kme,jms:jme), passed to C by
! address: no copies. Only the tile its:ite,kts:kte,jts:jte is read and written.
!
! wsm5init is redone in C from the constants passed (only when they change); its rhosnow
! argument, which wsm5 does not receive, is 100 (module_model_constants) unless
! wrfgpu_wsm5_init is called with WRF's values first.
!
! Backend: the GPU by default; environment WRFGPU_BACKEND=cpu|gpu|auto|both, or
! wrfgpu_wsm5_backend('cpu'), overrides. Numerical mode: WRFGPU_MODE=strict|fast.
! Errors: one line "wrfgpu: ..."; with `stat` the status (2 bad input, else 1), without it the
! run stops (inside WRF through wrf_error_fatal, fortran_iface/bridge.h).
! refl_10cm is computed when diagflag and do_radar_ref=1, as WRF's wsm5 does: WRF's
! refl10cm_wsm5 (module_mp_radar tables from radar_init) on the updated column, on the same
! backend as the microphysics.
!-------------------------------------------------------------------------------
module module_wrfgpu_wsm5
  use iso_c_binding, only: c_float, c_int, c_char
  use module_wrfgpu_host, only: wrfgpu_bridge_stop
  implicit none
  private
  public :: wsm5_gpu, wrfgpu_wsm5_init, wrfgpu_wsm5_backend

  interface
    subroutine wrfgpu_wsm5_c(th, q, qc, qr, qi, qs, den, pii, p, delz, delt, consts17, &
                             rain, rainncv, snow, snowncv, has_snow, sr, refl_10cm,      &
                             diagflag, do_radar_ref, has_reqc, has_reqi, has_reqs,      &
                             re_cloud, re_ice, re_snow, dims18, ierr) bind(C, name='wrfgpu_wsm5_c')
      import :: c_float, c_int
      real(c_float), intent(inout) :: th(*), q(*), qc(*), qr(*), qi(*), qs(*)
      real(c_float), intent(in) :: den(*), pii(*), p(*), delz(*)
      real(c_float), value :: delt
      real(c_float), intent(in) :: consts17(17)
      real(c_float), intent(inout) :: rain(*), rainncv(*), snow(*), snowncv(*), sr(*)
      integer(c_int), value :: has_snow
      real(c_float), intent(inout) :: refl_10cm(*)
      integer(c_int), value :: diagflag, do_radar_ref, has_reqc, has_reqi, has_reqs
      real(c_float), intent(inout) :: re_cloud(*), re_ice(*), re_snow(*)
      integer(c_int), intent(in) :: dims18(18)
      integer(c_int), intent(out) :: ierr
    end subroutine wrfgpu_wsm5_c
    subroutine wrfgpu_wsm5_set_dens(dens) bind(C, name='wrfgpu_wsm5_set_dens')
      import :: c_float
      real(c_float), value :: dens
    end subroutine wrfgpu_wsm5_set_dens
    subroutine wrfgpu_wsm5_set_backend(name, n) bind(C, name='wrfgpu_wsm5_set_backend')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: n
    end subroutine wrfgpu_wsm5_set_backend
  end interface

contains

  ! Same arguments as WRF's wsm5init (module_physics_init.F: CALL wsm5init(rhoair0,
  ! rhowater,rhosnow,cliq,cpv,allowed_to_read)). Only rhosnow is kept: the other values
  ! arrive with every wsm5_gpu call, as in WRF.
  subroutine wrfgpu_wsm5_init(den0, denr, dens, cl, cpv, allowed_to_read)
    real, intent(in) :: den0, denr, dens, cl, cpv
    logical, intent(in) :: allowed_to_read
    call wrfgpu_wsm5_set_dens(real(dens, c_float))
  end subroutine wrfgpu_wsm5_init

  ! 'cpu', 'gpu', 'auto', 'both'; '' returns to WRFGPU_BACKEND / the GPU default.
  subroutine wrfgpu_wsm5_backend(name)
    character(len=*), intent(in) :: name
    call wrfgpu_wsm5_set_backend(name, int(len(name), c_int))
  end subroutine wrfgpu_wsm5_backend

  ! Dummy names and order are those of WRF's wsm5, so keyword calls carry over unchanged.
  subroutine wsm5_gpu(th, q, qc, qr, qi, qs, den, pii, p, delz, delt, g, cpd, cpv, rd, rv, &
      t0c, ep1, ep2, qmin, XLS, XLV0, XLF0, den0, denr, cliq, cice, psat, rain, rainncv,   &
      snow, snowncv, sr, refl_10cm, diagflag, do_radar_ref, has_reqc, has_reqi, has_reqs,  &
      re_cloud, re_ice, re_snow, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms,    &
      kme, its, ite, jts, jte, kts, kte, stat)
    integer, intent(in) :: ids,ide, jds,jde, kds,kde, ims,ime, jms,jme, kms,kme, &
                           its,ite, jts,jte, kts,kte
    real(c_float), dimension(ims:ime, kms:kme, jms:jme), intent(inout) :: th, q, qc, qi, qr, qs
    real(c_float), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: den, pii, p, delz
    real, intent(in) :: delt, g, rd, rv, t0c, den0, cpd, cpv, ep1, ep2, qmin, XLS, XLV0, &
                        XLF0, cliq, cice, psat, denr
    real(c_float), dimension(ims:ime, jms:jme), intent(inout) :: rain, rainncv, sr
    integer, intent(in) :: has_reqc, has_reqi, has_reqs
    real(c_float), dimension(ims:ime, kms:kme, jms:jme), intent(inout) :: re_cloud, re_ice, re_snow
    real(c_float), dimension(ims:ime, kms:kme, jms:jme), intent(inout) :: refl_10cm
    real(c_float), dimension(ims:ime, jms:jme), optional, intent(inout) :: snow, snowncv
    logical, optional, intent(in) :: diagflag
    integer, optional, intent(in) :: do_radar_ref
    integer, optional, intent(out) :: stat   ! 0, 1 or 2 (bridge.h); absent: a failure stops

    real(c_float) :: consts(17)
    integer(c_int) :: dims(18), idiag, iref, isnow, ierr
    real(c_float) :: dummy(1)

    consts = (/ g, cpd, cpv, rd, rv, t0c, ep1, ep2, qmin, XLS, XLV0, XLF0, den0, denr, &
                cliq, cice, psat /)
    dims = (/ ids,ide, jds,jde, kds,kde, ims,ime, jms,jme, kms,kme, its,ite, jts,jte, kts,kte /)
    idiag = 0
    if (present(diagflag)) then
      if (diagflag) idiag = 1
    end if
    iref = 0
    if (present(do_radar_ref)) iref = do_radar_ref
    ! WRF's wsm5 accumulates snow only when both snow and snowncv are present
    isnow = 0
    if (present(snow) .and. present(snowncv)) isnow = 1
    if (isnow == 1) then
      call wrfgpu_wsm5_c(th, q, qc, qr, qi, qs, den, pii, p, delz, real(delt, c_float), consts, &
                         rain, rainncv, snow, snowncv, isnow, sr, refl_10cm, idiag, iref,       &
                         int(has_reqc, c_int), int(has_reqi, c_int), int(has_reqs, c_int),    &
                         re_cloud, re_ice, re_snow, dims, ierr)
    else
      call wrfgpu_wsm5_c(th, q, qc, qr, qi, qs, den, pii, p, delz, real(delt, c_float), consts, &
                         rain, rainncv, dummy, dummy, isnow, sr, refl_10cm, idiag, iref,       &
                         int(has_reqc, c_int), int(has_reqi, c_int), int(has_reqs, c_int),    &
                         re_cloud, re_ice, re_snow, dims, ierr)
    end if
    if (present(stat)) then
      stat = ierr
    else if (ierr /= 0) then
      call wrfgpu_bridge_stop(ierr, '', 0_c_int)   ! inside WRF: wrf_error_fatal (bridge.h)
    end if
  end subroutine wsm5_gpu

end module module_wrfgpu_wsm5
