!-------------------------------------------------------------------------------
! test_wsm5_fortran: links libwrfgpu from Fortran and runs WSM5 through both Fortran paths
! on a small set of realistic columns (memory with a halo, as in WRF):
!   A  module_wrfgpu_wsm5's wsm5_gpu (WRF's wsm5 argument list, no copies), backend 'auto'
!   B  the legacy RUN_ON_GPU symbol wsm5_host (array sections -> dense tile copies), 'auto'
!   C  wsm5_gpu on the CPU backend (the C++ API's OpenMP path, strict mode)
! Checks: A and B agree bit for bit; A and C agree (bitwise when A ran on the CPU, else
! within the GPU-vs-CPU tolerance); nothing outside the tile is written; surface rain sane.
! Prints PASS/FAIL lines; exit status 1 on any failure.
!-------------------------------------------------------------------------------
program test_wsm5_fortran
  use module_wrfgpu_wsm5
  implicit none
  integer, parameter :: ni = 12, nj = 7, nk = 30, h = 2
  integer, parameter :: ids = 1, ide = ni + 2*h + 1, jds = 1, jde = nj + 2*h + 1, kds = 1, kde = nk + 1
  integer, parameter :: ims = 1, ime = ni + 2*h, jms = 1, jme = nj + 2*h, kms = 1, kme = nk + 1
  integer, parameter :: its = ims + h, ite = ime - h, jts = jms + h, jte = jme - h, kts = 1, kte = nk
  real, parameter :: sentinel = -777.
  real, dimension(ims:ime, kms:kme, jms:jme) :: th0, qv0, qc0, qr0, qi0, qs0, den, pii, p, dz
  real, dimension(ims:ime, kms:kme, jms:jme) :: tha, qva, qca, qra, qia, qsa, rca, ria, rsa, refl
  real, dimension(ims:ime, kms:kme, jms:jme) :: thb, qvb, qcb, qrb, qib, qsb
  real, dimension(ims:ime, kms:kme, jms:jme) :: thc, qvc, qcc, qrc, qic, qsc, rcc, ric, rsc
  real, dimension(ims:ime, jms:jme) :: rain0, snow0, raina, rainncva, snowa, snowncva, sra
  real, dimension(ims:ime, jms:jme) :: rainb, rainncvb, snowb, snowncvb, srb
  real, dimension(ims:ime, jms:jme) :: rainc, rainncvc, snowc, snowncvc, src
  ! WRF's constants (module_model_constants) as the microphysics driver passes them
  real, parameter :: g = 9.81, r_d = 287., r_v = 461.6, cp = 7.*r_d/2., cpv = 4.*r_v
  real, parameter :: svpt0 = 273.15, ep_1 = r_v/r_d - 1., ep_2 = r_d/r_v, epsilon = 1.e-15
  real, parameter :: xls = 2.85e6, xlv = 2.5e6, xlf = 3.5e5, rhoair0 = 1.28, rhowater = 1000.
  real, parameter :: cliq = 4190., cice = 2106., psat = 610.78, rhosnow = 100.
  real, parameter :: delt = 60.
  integer :: nfail
  logical :: ok

  nfail = 0
  call make_columns()
  call wrfgpu_wsm5_init(rhoair0, rhowater, rhosnow, cliq, cpv, .true.)

  ! ---- A: module path, default device selection ('auto': the GPU when one is visible)
  call wrfgpu_wsm5_backend('auto')
  call copy_state(tha, qva, qca, qra, qia, qsa, raina, snowa)
  rainncva = sentinel; snowncva = sentinel; sra = sentinel
  rca = sentinel; ria = sentinel; rsa = sentinel; refl = sentinel
  call wsm5_gpu(TH=tha, Q=qva, QC=qca, QR=qra, QI=qia, QS=qsa, DEN=den, PII=pii, P=p, DELZ=dz, &
                DELT=delt, G=g, CPD=cp, CPV=cpv, RD=r_d, RV=r_v, T0C=svpt0, EP1=ep_1, EP2=ep_2, &
                QMIN=epsilon, XLS=xls, XLV0=xlv, XLF0=xlf, DEN0=rhoair0, DENR=rhowater,          &
                CLIQ=cliq, CICE=cice, PSAT=psat, RAIN=raina, RAINNCV=rainncva,                  &
                SNOW=snowa, SNOWNCV=snowncva, SR=sra, REFL_10CM=refl, diagflag=.false.,         &
                do_radar_ref=0, has_reqc=1, has_reqi=1, has_reqs=1, re_cloud=rca, re_ice=ria,   &
                re_snow=rsa, IDS=ids, IDE=ide, JDS=jds, JDE=jde, KDS=kds, KDE=kde,              &
                IMS=ims, IME=ime, JMS=jms, JME=jme, KMS=kms, KME=kme,                           &
                ITS=its, ITE=ite, JTS=jts, JTE=jte, KTS=kts, KTE=kte)

  ! ---- B: legacy RUN_ON_GPU call exactly as module_mp_wsm5_accel.F makes it
  call copy_state(thb, qvb, qcb, qrb, qib, qsb, rainb, snowb)
  rainncvb = sentinel; snowncvb = sentinel; srb = sentinel
  call legacy_call()

  ! ---- C: the CPU backend (C++ API, OpenMP, strict)
  call wrfgpu_wsm5_backend('cpu')
  call copy_state(thc, qvc, qcc, qrc, qic, qsc, rainc, snowc)
  rainncvc = sentinel; snowncvc = sentinel; src = sentinel
  rcc = sentinel; ric = sentinel; rsc = sentinel
  call wsm5_gpu(thc, qvc, qcc, qrc, qic, qsc, den, pii, p, dz, delt, g, cp, cpv, r_d, r_v,   &
                svpt0, ep_1, ep_2, epsilon, xls, xlv, xlf, rhoair0, rhowater, cliq, cice, psat, &
                rainc, rainncvc, snowc, snowncvc, src, refl, .false., 0, 1, 1, 1, rcc, ric, rsc, &
                ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte)
  call wrfgpu_wsm5_backend('')

  ! ---- checks
  call check(all(tha == thb) .and. all(qva == qvb) .and. all(qca == qcb) .and. all(qra == qrb) &
             .and. all(qia == qib) .and. all(qsa == qsb), 'module path == legacy wsm5_host (3-D, bitwise)')
  call check(all(raina == rainb) .and. all(rainncva(its:ite,jts:jte) == rainncvb(its:ite,jts:jte)) &
             .and. all(sra(its:ite,jts:jte) == srb(its:ite,jts:jte)) &
             .and. all(snowncva(its:ite,jts:jte) == snowncvb(its:ite,jts:jte)), &
             'module path == legacy wsm5_host (2-D, bitwise)')
  call check(near(tha, thc, 1.e-6) .and. near(qva, qvc, 1.e-4) .and. close_abs(qca, qcc, 2.e-7) &
             .and. close_abs(qra, qrc, 2.e-7) .and. close_abs(qia, qic, 2.e-7) .and. close_abs(qsa, qsc, 2.e-7), &
             'module path (auto backend) agrees with the CPU backend')
  call check(abs(sum(real(rainncva(its:ite,jts:jte),8)) - sum(real(rainncvc(its:ite,jts:jte),8))) &
             <= 1.e-5*abs(sum(real(rainncvc(its:ite,jts:jte),8))) + 1.e-12, 'step rain: auto backend vs CPU')
  call check(sum(rainncvc(its:ite,jts:jte)) > 0. .and. all(rainncvc(its:ite,jts:jte) >= 0.) .and. &
             all(src(its:ite,jts:jte) >= 0.) .and. all(src(its:ite,jts:jte) <= 1.0001), &
             'surface precipitation present, non-negative, sr in [0,1]')
  call check(all(abs(rainc(its:ite,jts:jte) - rain0(its:ite,jts:jte) - rainncvc(its:ite,jts:jte)) &
             <= 1.e-4*max(1.,rainc(its:ite,jts:jte))), 'rain accumulates rainncv')
  call check(all(rca(its:ite,:nk,jts:jte) >= 2.49e-6) .and. all(rsa(its:ite,:nk,jts:jte) <= 999.e-6) &
             .and. near(rca, rcc, 2.e-2), 'effective radii within WRF bounds, backends agree (2% where qc differs)')
  ok = untouched3(tha) .and. untouched3(qva) .and. untouched3(qca) .and. untouched3(qra) .and. &
       untouched3(qia) .and. untouched3(qsa) .and. untouched3(rca) .and. untouched2(rainncva) .and. &
       untouched2(sra) .and. untouched3(thc) .and. untouched2(src) .and. all(refl == sentinel)
  call check(ok, 'nothing written outside the tile (both backends)')
  call check(all(qca(its:ite,:nk,jts:jte) >= 0.) .and. all(qra(its:ite,:nk,jts:jte) >= 0.), &
             'negative inputs clipped')

  if (nfail > 0) then
    print '(a,i0,a)', 'test_wsm5_fortran: FAIL (', nfail, ' checks failed)'
    stop 1
  end if
  print '(a)', 'test_wsm5_fortran: PASS'

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

  logical function near(a, b, rtol)
    real, intent(in) :: a(ims:ime,kms:kme,jms:jme), b(ims:ime,kms:kme,jms:jme), rtol
    near = all(abs(a(its:ite,kts:kte,jts:jte) - b(its:ite,kts:kte,jts:jte)) <= &
                rtol*abs(b(its:ite,kts:kte,jts:jte)) + 1.e-30)
  end function near
  logical function close_abs(a, b, atol)
    real, intent(in) :: a(ims:ime,kms:kme,jms:jme), b(ims:ime,kms:kme,jms:jme), atol
    close_abs = all(abs(a(its:ite,kts:kte,jts:jte) - b(its:ite,kts:kte,jts:jte)) <= atol)
  end function close_abs

  logical function untouched3(a)
    real, intent(in) :: a(ims:ime,kms:kme,jms:jme)
    untouched3 = all(a(ims:its-1,:,:) == sentinel) .and. all(a(ite+1:ime,:,:) == sentinel) .and. &
                 all(a(:,:,jms:jts-1) == sentinel) .and. all(a(:,:,jte+1:jme) == sentinel) .and. &
                 all(a(:,kte+1:kme,:) == sentinel)
  end function untouched3
  logical function untouched2(a)
    real, intent(in) :: a(ims:ime,jms:jme)
    untouched2 = all(a(ims:its-1,:) == sentinel) .and. all(a(ite+1:ime,:) == sentinel) .and. &
                 all(a(:,jms:jts-1) == sentinel) .and. all(a(:,jte+1:jme) == sentinel)
  end function untouched2

  subroutine copy_state(th, qv, qc, qr, qi, qs, rain, snow)
    real, dimension(ims:ime,kms:kme,jms:jme), intent(out) :: th, qv, qc, qr, qi, qs
    real, dimension(ims:ime,jms:jme), intent(out) :: rain, snow
    th = th0; qv = qv0; qc = qc0; qr = qr0; qi = qi0; qs = qs0; rain = rain0; snow = snow0
  end subroutine copy_state

  subroutine legacy_call()
    external :: wsm5_host, get_wsm5_gpu_levels
    integer :: mkx_test
    call get_wsm5_gpu_levels(mkx_test)
    call check(mkx_test >= kte, 'get_wsm5_gpu_levels >= kte')
    call wsm5_host(thb(its:ite,kts:kte,jts:jte), pii(its:ite,kts:kte,jts:jte),     &
                   qvb(its:ite,kts:kte,jts:jte), qcb(its:ite,kts:kte,jts:jte),     &
                   qib(its:ite,kts:kte,jts:jte), qrb(its:ite,kts:kte,jts:jte),     &
                   qsb(its:ite,kts:kte,jts:jte), den(its:ite,kts:kte,jts:jte),     &
                   p(its:ite,kts:kte,jts:jte), dz(its:ite,kts:kte,jts:jte),        &
                   delt,                                                           &
                   rainb(its:ite,jts:jte), rainncvb(its:ite,jts:jte),              &
                   snowb(its:ite,jts:jte), snowncvb(its:ite,jts:jte),              &
                   srb(its:ite,jts:jte),                                           &
                   its, ite, jts, jte, kts, kte,                                   &
                   its, ite, jts, jte, kts, kte,                                   &
                   its, ite, jts, jte, kts, kte)
  end subroutine legacy_call

  ! A squall-line-like set of columns: warm moist boundary layer, cloud water below the
  ! freezing level, rain, snow and cloud ice aloft, dry top layers; a few negatives.
  subroutine make_columns()
    integer :: i, j, k, c
    real :: z, dzk, tk, pk, es, qsat, frz, x
    th0 = sentinel; qv0 = sentinel; qc0 = sentinel; qr0 = sentinel; qi0 = sentinel; qs0 = sentinel
    den = sentinel; pii = sentinel; p = sentinel; dz = sentinel; rain0 = sentinel; snow0 = sentinel
    do j = jts, jte
      do i = its, ite
        c = (j - jts)*ni + (i - its)
        x = real(c)/real(ni*nj - 1)
        z = 0.
        pk = 100000. - 800.*x
        do k = kts, kte
          dzk = 50. + 900.*(real(k-1)/real(nk-1))**2
          dz(i,k,j) = dzk
          z = z + 0.5*dzk
          tk = 300. - 4.*x - 6.5e-3*min(z, 11000.)
          pk = pk*exp(-9.81*dzk*0.5/(287.*tk))
          p(i,k,j) = pk
          pk = pk*exp(-9.81*dzk*0.5/(287.*tk))
          z = z + 0.5*dzk
          es = 610.78*exp(17.27*(tk - 273.16)/(tk - 35.86))
          qsat = 0.622*es/(p(i,k,j) - es)
          frz = tk - 273.15
          qv0(i,k,j) = qsat*merge(1.01, 0.7 + 0.25*x, z > 800. .and. z < 9000.)
          qc0(i,k,j) = 0.; qr0(i,k,j) = 0.; qi0(i,k,j) = 0.; qs0(i,k,j) = 0.
          if (z > 800. .and. z < 9000.) then
            if (frz > -30.) qc0(i,k,j) = 1.e-3*(0.3 + x)*exp(-((z - 3000.)/2000.)**2)
            if (frz < 0.) qi0(i,k,j) = 1.e-4*(0.2 + x)
            if (frz < 2.) qs0(i,k,j) = 8.e-4*(0.1 + x)
          end if
          if (z < 9000. .and. frz > -5.) qr0(i,k,j) = 2.e-3*(0.1 + x)*exp(-((z - 2000.)/2500.)**2)
          if (mod(c, 7) == 3 .and. k == 5) qc0(i,k,j) = -1.e-7
          if (mod(c, 5) == 1 .and. k == 9) qr0(i,k,j) = -3.e-8
          den(i,k,j) = p(i,k,j)/(287.*tk*(1. + 0.608*qv0(i,k,j)))
          pii(i,k,j) = (p(i,k,j)/1.e5)**(287./1004.5)
          th0(i,k,j) = tk/pii(i,k,j)
        end do
        rain0(i,j) = 3.*x
        snow0(i,j) = 0.5*x
      end do
    end do
  end subroutine make_columns

end program test_wsm5_fortran
