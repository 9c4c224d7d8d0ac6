!-------------------------------------------------------------------------------
! consumer_fortran: a Fortran program of a wrfgpu user (as WRF is one), built by
! the scripts of tests/install against an installed wrfgpu only: the .mod files of the installed module
! folder and libwrfgpu (shared or static), found through pkg-config or CMake find_package.
!
! Calls WSM5 through module_wrfgpu_wsm5's wsm5_gpu, with WRF's argument list, once over a
! small box of columns (supersaturated between 1 and 5 km, rain from the ground to 4 km); the
! scripts run it with WRFGPU_BACKEND=cpu. Checks what a real step must give: water conserved
! per column (column water before = after + rainncv), cloud water formed where there was none,
! the air warmed where it formed, rain reached the ground and accumulated into rain; and that
! module_wrfgpu_advect's wrfgpu_advect_flags packs WRF's configuration flags.
! Exit status 0 when every check passes, 1 otherwise.
!-------------------------------------------------------------------------------
program consumer_fortran
  use module_wrfgpu_wsm5, only: wsm5_gpu, wrfgpu_wsm5_init
  use module_wrfgpu_advect, only: wrfgpu_advect_flags
  implicit none
  integer, parameter :: ni = 4, nj = 3, nk = 24
  integer, parameter :: ids = 1, ide = ni + 1, jds = 1, jde = nj + 1, kds = 1, kde = nk + 1
  integer, parameter :: ims = 1, ime = ni, jms = 1, jme = nj, kms = 1, kme = nk
  integer, parameter :: its = 1, ite = ni, jts = 1, jte = nj, kts = 1, kte = nk
  ! WRF's constants (module_model_constants) as the microphysics driver passes them
  real, parameter :: g = 9.81, r_d = 287., r_v = 461.6, cp = 7.*r_d/2., cpv = 4.*r_v
  real, parameter :: svpt0 = 273.15, ep_1 = r_v/r_d - 1., ep_2 = r_d/r_v, epsilon = 1.e-15
  real, parameter :: xls = 2.85e6, xlv = 2.5e6, xlf = 3.5e5, rhoair0 = 1.28, rhowater = 1000.
  real, parameter :: cliq = 4190., cice = 2106., psat = 610.78, rhosnow = 100.
  real, parameter :: delt = 20.
  real, dimension(ims:ime, kms:kme, jms:jme) :: th, th0, qv, qc, qr, qi, qs, den, pii, p, dz
  real, dimension(ims:ime, kms:kme, jms:jme) :: re_c, re_i, re_s, refl
  real, dimension(ims:ime, jms:jme) :: rain, rainncv, sr, snow, snowncv
  real(8) :: w0(ims:ime, jms:jme), w1, worst, wmax
  integer :: i, j, nfail, flags(16)
  logical :: warm_where_cloud

  nfail = 0
  call make_box()
  th0 = th
  do j = jts, jte
    do i = its, ite
      w0(i,j) = column_water(i, j)
    end do
  end do
  rain = 0.; snow = 0.; rainncv = -1.; snowncv = -1.; sr = -1.
  re_c = 0.; re_i = 0.; re_s = 0.; refl = 0.

  call wrfgpu_wsm5_init(rhoair0, rhowater, rhosnow, cliq, cpv, .true.)
  call wsm5_gpu(TH=th, Q=qv, QC=qc, QR=qr, QI=qi, QS=qs, DEN=den, PII=pii, P=p, DELZ=dz,     &
                DELT=delt, G=g, CPD=cp, CPV=cpv, RD=r_d, RV=r_v, T0C=svpt0, EP1=ep_1, EP2=ep_2, &
                QMIN=epsilon, XLS=xls, XLV0=xlv, XLF0=xlf, DEN0=rhoair0, DENR=rhowater,          &
                CLIQ=cliq, CICE=cice, PSAT=psat, RAIN=rain, RAINNCV=rainncv,                    &
                SNOW=snow, SNOWNCV=snowncv, SR=sr, REFL_10CM=refl, diagflag=.false.,            &
                do_radar_ref=0, has_reqc=0, has_reqi=0, has_reqs=0, re_cloud=re_c, re_ice=re_i, &
                re_snow=re_s, IDS=ids, IDE=ide, JDS=jds, JDE=jde, KDS=kds, KDE=kde,             &
                IMS=ims, IME=ime, JMS=jms, JME=jme, KMS=kms, KME=kme,                           &
                ITS=its, ITE=ite, JTS=jts, JTE=jte, KTS=kts, KTE=kte)

  worst = 0.d0; wmax = 0.d0
  do j = jts, jte
    do i = its, ite
      w1 = column_water(i, j) + rainncv(i,j)
      worst = max(worst, abs(w1 - w0(i,j))/w0(i,j))
      wmax = max(wmax, w0(i,j))
    end do
  end do
  print '(a,f8.3,a,es9.2,a,f8.4,a)', 'column water ', wmax, ' kg m-2 at most; largest |after + rainncv - before| / before = ', &
        worst, '; rainncv summed over the box ', sum(rainncv), ' mm'
  call check(worst < 1.d-5, 'water conserved per column (relative change < 1e-5)')
  call check(sum(real(qc, 8)) > 0.d0, 'the supersaturation condensed into cloud water')
  warm_where_cloud = any(qc > 1.e-6 .and. th > th0)
  call check(warm_where_cloud, 'the air warmed where cloud water formed')
  call check(sum(rainncv) > 0. .and. all(rainncv >= 0.) .and. all(rain == rainncv), &
             'rain reached the ground and accumulated into rain')

  call wrfgpu_advect_flags(flags, 5, 3, .true., .false., .false., .false., .false., .false., &
                           .false., .false., .false., .false., .true., .false., .false., .false.)
  call check(flags(1) == 5 .and. flags(2) == 3 .and. flags(3) == 1 .and. flags(4) == 0 .and. &
             flags(13) == 1 .and. sum(flags) == 10, 'module_wrfgpu_advect: wrfgpu_advect_flags')

  if (nfail > 0) then
    print '(a,i0,a)', 'consumer_fortran: FAIL (', nfail, ' checks failed)'
    stop 1
  end if
  print '(a)', 'consumer_fortran: PASS'

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (cond) then
      print '(a,a)', 'PASS ', what
    else
      print '(a,a)', 'FAIL ', what
      nfail = nfail + 1
    end if
  end subroutine check

  real(8) function column_water(i, j)
    integer, intent(in) :: i, j
    integer :: k
    column_water = 0.d0
    do k = kts, kte
      column_water = column_water + real(den(i,k,j), 8)*dz(i,k,j)* &
          (real(qv(i,k,j), 8) + qc(i,k,j) + qr(i,k,j) + qi(i,k,j) + qs(i,k,j))
    end do
  end function column_water

  ! The same box as consumer.cpp: 0..1 across the columns, hydrostatic pressure.
  subroutine make_box()
    integer :: i, j, k
    real :: x, z, pk, dzk, tk, es, qsat
    logical :: moist
    qc = 0.; qr = 0.; qi = 0.; qs = 0.
    do j = jts, jte
      do i = its, ite
        x = real((j - 1)*ni + (i - 1))/real(ni*nj - 1)
        z = 0.; pk = 100000.
        do k = kts, kte
          dzk = 250. + 20.*real(k)
          z = z + 0.5*dzk
          tk = 298. - 2.*x - 6.5e-3*z
          pk = pk*exp(-9.81*dzk*0.5/(287.*tk))
          es = 610.78*exp(17.27*(tk - 273.16)/(tk - 35.86))
          qsat = 0.622*es/(pk - es)
          moist = z > 1000. .and. z < 5000.
          qv(i,k,j) = qsat*merge(1.02 + 0.02*x, 0.6, moist)
          if (z < 4000.) qr(i,k,j) = 1.5e-3*(0.5 + x)
          if (tk < 268. .and. moist) qs(i,k,j) = 3.e-4
          p(i,k,j) = pk
          dz(i,k,j) = dzk
          den(i,k,j) = pk/(287.*tk*(1. + 0.608*qv(i,k,j)))
          pii(i,k,j) = (pk/1.e5)**(287./1004.5)
          th(i,k,j) = tk/pii(i,k,j)
          pk = pk*exp(-9.81*dzk*0.5/(287.*tk))
          z = z + 0.5*dzk
        end do
      end do
    end do
  end subroutine make_box

end program consumer_fortran
