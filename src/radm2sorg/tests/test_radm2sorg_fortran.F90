!-------------------------------------------------------------------------------
! test_radm2sorg_fortran: the RADM2SORG KPP chemistry through its Fortran binding
! (module_wrfgpu_radm2sorg, wrfgpu_radm2sorg), called as the chem_driver.F hook calls it in
! place of kpp_mechanism_driver -> radm2sorg_interface.
!
! Input: test_data/radm2sorg_warm_40x15x20.nc (12,000 cells: inputs and the outputs of
! WRF-Chem's KPP Fortran, test_data/README_radm2sorg.md). Its fields are laid out as
! chem_driver holds them: memory bounds wider than the tile, halo cells poisoned, the 41
! species at scattered P_x indices of a 4-D chem array built from wrfgpu_radm2sorg_chem_name(q)
! (so the order contract is what is tested), radicals and photolysis rates passed by the
! argument keywords that carry the names of wrfgpu_radm2sorg_chem_name(42..58) and
! wrfgpu_radm2sorg_ph_name(1..21).
!   A  backend=1 (CPU): every chem species, radical and vdrog3 value equals the reference bit
!      for bit (glibc 2.36 on x86-64, the references' libm; with another libm the rule of
!      src/radm2sorg/tests: key species within 1e-5 relative in >= 99 % of the cells, 1e-3 in
!      all, above 1 molecule cm-3); nothing outside the tile or in other chem slots written.
!   B  backend=0 (auto: the GPU when one is visible, else the CPU): bit for bit the CPU's
!      result when it ran on the CPU, else within 1e-6 relative above 1 molecule cm-3.
!   C  a swapped pair of photolysis arguments and a swapped pair of radical arguments are
!      caught by the check of A.
! Strict mode is set (WRFGPU_MODE=strict). Prints PASS/FAIL lines; stop 1 on a failure.
!-------------------------------------------------------------------------------
program test_radm2sorg_fortran
  use, intrinsic :: iso_c_binding
  use netcdf
  use module_wrfgpu_radm2sorg
  use wrfgpu_test_gpu, only: gpu_visible
  implicit none
  interface
    function c_setenv(name, value, overwrite) bind(C, name='setenv') result(r)
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int), value :: overwrite
      integer(c_int) :: r
    end function c_setenv
    function c_libc_version() bind(C, name='gnu_get_libc_version') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_libc_version
    function c_uname(buf) bind(C, name='uname') result(r)
      import :: c_char, c_int
      character(kind=c_char) :: buf(*)
      integer(c_int) :: r
    end function c_uname
  end interface

  character(len=*), parameter :: path = 'test_data/radm2sorg_warm_40x15x20.nc'
  integer, parameter :: NCHEM = wrfgpu_radm2sorg_nchem, NRAD = wrfgpu_radm2sorg_nrad, &
                        NPH = wrfgpu_radm2sorg_nph, NMET = 4 + NPH
  real, parameter :: POISON = -999.0
  ! chem(:,:,:,NUM_CHEM) holds other species too; the tile starts at (IOFF+1, 1, JOFF+1)
  integer, parameter :: NUM_CHEM = 53, HALO = 3, IOFF = 4, JOFF = 2
  ! WRF's dens2con_a (module_wkppc_constants, sp): molecules cm-3 of air per kg m-3
  real(8), parameter :: DENS2CON_A = 2.0787024d19
  ! the issue's validation species
  character(len=4), parameter :: key(9) = (/ 'o3  ', 'no  ', 'no2 ', 'ho  ', 'ho2 ', 'hno3', &
                                             'hcho', 'pan ', 'h2o2' /)
  ! GPU (CUDA's exp/pow/log10) against the CPU (glibc), strict double: 6.7e-7 measured with the
  ! same step sequences (docs/radm2sorg.md section 5)
  real(8), parameter :: GPU_VS_CPU = 1d-6

  character(len=16) :: cname(NCHEM + NRAD), pname(NPH)
  integer :: p_chem(NCHEM), nfail, ncid, nx, nz, ny, ldrog, p_nu0, q, nfailed, ncell, st
  integer :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte
  real :: dtstepc
  logical :: bitwise, gpu_expected
  character(len=32) :: libc, machine, env
  real, allocatable :: chem0(:,:,:,:), rad0(:,:,:,:), met(:,:,:,:), met0(:,:,:,:)
  real, allocatable :: ref(:,:,:,:), refv(:,:,:,:), buf(:,:,:), buf4(:,:,:,:)
  real, allocatable :: cc(:,:,:,:), rc(:,:,:,:), vc(:,:,:,:)   ! A: CPU
  real, allocatable :: ca(:,:,:,:), ra(:,:,:,:), va(:,:,:,:)   ! B: auto
  real, allocatable :: cs(:,:,:,:), rs(:,:,:,:), vs(:,:,:,:)   ! C: swapped arguments
  logical, allocatable :: in_tile(:,:,:)
  integer(8) :: ndiff
  real(8) :: worst

  nfail = 0
  if (c_setenv('WRFGPU_MODE' // c_null_char, 'strict' // c_null_char, 1_c_int) /= 0) stop 2

  ! --- names: the order contract of the binding ---------------------------------------
  do q = 1, NCHEM + NRAD
    cname(q) = wrfgpu_radm2sorg_chem_name(q)
  end do
  do q = 1, NPH
    pname(q) = wrfgpu_radm2sorg_ph_name(q)
  end do
  call check(all(len_trim(cname) > 0) .and. all(len_trim(pname) > 0), &
             'wrfgpu_radm2sorg_chem_name(1..58) and wrfgpu_radm2sorg_ph_name(1..21) are named')

  ! --- the capture, laid out as chem_driver holds it ------------------------------------
  call nc(nf90_open(path, nf90_nowrite, ncid), 'open')
  nx = dimlen('west_east'); nz = dimlen('bottom_top'); ny = dimlen('south_north')
  ldrog = dimlen('ldrog')
  ncell = nx * nz * ny
  call nc(nf90_get_att(ncid, nf90_global, 'dtstepc', dtstepc), 'dtstepc')
  call nc(nf90_get_att(ncid, nf90_global, 'p_nu0', p_nu0), 'p_nu0')
  its = IOFF + 1; ite = IOFF + nx; kts = 1; kte = nz; jts = JOFF + 1; jte = JOFF + ny
  ims = its - HALO; ime = ite + HALO; kms = 1; kme = nz + 1; jms = jts - HALO; jme = jte + HALO
  ids = 1; ide = ite + 1; kds = 1; kde = nz + 1; jds = 1; jde = jte + 1
  ! P_x of the 41 species: a permutation of 41 of the 53 slots (7 is invertible mod 53)
  do q = 1, NCHEM
    p_chem(q) = 1 + mod(7 * q + 3, NUM_CHEM)
  end do

  allocate(chem0(ims:ime, kms:kme, jms:jme, NUM_CHEM), rad0(ims:ime, kms:kme, jms:jme, NRAD))
  allocate(met(ims:ime, kms:kme, jms:jme, NMET), ref(nx, nz, ny, NCHEM + NRAD))
  allocate(refv(nx, nz, ny, ldrog), buf(nx, nz, ny), buf4(nx, nz, ny, ldrog))
  allocate(in_tile(ims:ime, kms:kme, jms:jme))
  chem0 = POISON; rad0 = POISON; met = POISON
  in_tile = .false.
  in_tile(its:ite, kts:kte, jts:jte) = .true.
  do q = 1, NCHEM
    call getv(trim(cname(q)), chem0(:, :, :, p_chem(q)))
    call getd(trim(cname(q)) // '_out', ref(:, :, :, q))
  end do
  do q = 1, NRAD   ! radicals in wrfgpu_radm2sorg_chem_name(42..58) order
    call getv(trim(cname(NCHEM + q)), rad0(:, :, :, q))
    call getd(trim(cname(NCHEM + q)) // '_out', ref(:, :, :, NCHEM + q))
  end do
  call getv('qv', met(:, :, :, 1))
  call getv('t_phy', met(:, :, :, 2))
  call getv('p_phy', met(:, :, :, 3))
  call getv('rho_phy', met(:, :, :, 4))
  do q = 1, NPH    ! photolysis in wrfgpu_radm2sorg_ph_name order
    call getv('ph_' // trim(pname(q)), met(:, :, :, 4 + q))
  end do
  call nc(nf90_inq_varid(ncid, 'vdrog3_out', q), 'vdrog3_out')
  call nc(nf90_get_var(ncid, q, refv), 'get vdrog3_out')
  call nc(nf90_close(ncid), 'close')
  met0 = met

  ! The references were made by gfortran on x86-64 with glibc 2.36 (README_radm2sorg.md); the
  ! strict CPU backend calls the same exp/pow/log10/expf/powf: bit for bit there. Another libm
  ! may round them differently in the last bit, which can flip a step's acceptance.
  libc = c_string(c_libc_version())
  machine = uname_machine()
  bitwise = trim(libc) == '2.36' .and. trim(machine) == 'x86_64'
  if (bitwise) then
    write(*, '(5a)') 'glibc ', trim(libc), ' on ', trim(machine), ': the references'' libm, bit for bit expected'
  else
    write(*, '(5a)') 'glibc ', trim(libc), ' on ', trim(machine), ': not the references'' libm, tolerances'
  end if

  ! --- A: the CPU backend against WRF-Chem's KPP Fortran --------------------------------
  allocate(cc, ca, cs, mold=chem0)
  allocate(rc, ra, rs, mold=rad0)
  allocate(vc(ims:ime, kms:kme, jms:jme, ldrog), va(ims:ime, kms:kme, jms:jme, ldrog), &
           vs(ims:ime, kms:kme, jms:jme, ldrog))
  call run(1, 0, cc, rc, vc)
  call check(nfailed == 0, 'A: CPU backend, no failed cell')
  call check_against_reference('A: CPU backend', cc, rc, vc, .true.)
  call check(untouched(cc, rc, vc), 'A: nothing written outside the tile or in other chem slots')
  call check(all(bits(met) == bits(met0)), 'A: qv, t_phy, p_phy, rho, ph_* unchanged')
  q = p_chem(ifield('o3'))
  call check(count(bits(cc(its:ite, kts:kte, jts:jte, q)) /= bits(chem0(its:ite, kts:kte, jts:jte, q))) &
             > ncell / 2, 'A: the chemistry changed o3 in most cells')

  ! --- B: the default backend (WRFGPU_BACKEND, else the GPU: fortran_iface/bridge.h) ------
  call get_environment_variable('WRFGPU_BACKEND', env)
  select case (trim(env))
  case ('cpu')
    gpu_expected = .false.
  case ('auto')
    gpu_expected = gpu_visible()
  case default  ! unset, gpu, both
    gpu_expected = .true.
  end select
  if (gpu_expected .and. .not. gpu_visible()) then
    write(*, '(a)') 'B: backend=0 asks for the GPU and none is visible: the call must fail'
    call run(0, 0, ca, ra, va, st)
    call check(st == 1, 'B: no usable GPU: status 1, not a silent CPU run')
    call check(all(bits(ca) == bits(chem0)) .and. all(bits(ra) == bits(rad0)), &
               'B: no usable GPU: chem and radicals untouched')
  else
  write(*, '(a,a)') 'B: backend=0 runs on the ', merge('GPU', 'CPU', gpu_expected)
  call run(0, 0, ca, ra, va, st)
  call check(st == 0, 'B: default backend, status 0')
  call check(nfailed == 0, 'B: default backend, no failed cell')
  if (gpu_expected) then
    worst = 0
    do q = 1, NCHEM
      worst = max(worst, maxrel(ca(its:ite, kts:kte, jts:jte, p_chem(q)), cc(its:ite, kts:kte, jts:jte, p_chem(q))))
    end do
    do q = 1, NRAD
      worst = max(worst, maxrel(ra(its:ite, kts:kte, jts:jte, q), rc(its:ite, kts:kte, jts:jte, q)))
    end do
    do q = 1, ldrog
      worst = max(worst, maxrel(va(its:ite, kts:kte, jts:jte, q), vc(its:ite, kts:kte, jts:jte, q)))
    end do
    write(*, '(a,es10.3)') 'B: GPU vs CPU, 58 fields and vdrog3 above 1 molecule cm-3: max rel ', worst
    call check(worst <= GPU_VS_CPU, 'B: GPU within 1e-6 relative of the CPU backend')
  else
    ndiff = count(bits(ca) /= bits(cc)) + count(bits(ra) /= bits(rc)) + count(bits(va) /= bits(vc))
    write(*, '(a,i0,a)') 'B: ', ndiff, ' values differ from the CPU backend''s call'
    call check(ndiff == 0, 'B: the same bits as backend=1')
  end if
  call check(untouched(ca, ra, va), 'B: nothing written outside the tile or in other chem slots')
  end if

  ! --- C: swapped arguments are caught -------------------------------------------------
  call run(1, 1, cs, rs, vs)
  call check_against_reference('C: ph_ch2om and ph_ch2or swapped', cs, rs, vs, .false.)
  call run(1, 2, cs, rs, vs)
  call check_against_reference('C: hc3p and ethp swapped', cs, rs, vs, .false.)

  call finish()

contains

  subroutine finish()
    if (nfail > 0) then
      write(*, '(i0,a)') nfail, ' check(s) FAILED'
      stop 1
    end if
    write(*, '(a)') 'test_radm2sorg_fortran: all checks PASS'
    stop
  end subroutine finish

  ! One call as chem_driver makes it. swap 1: ph_ch2om and ph_ch2or exchanged; swap 2: the
  ! radicals hc3p and ethp exchanged (the arrays written back are exchanged too).
  subroutine run(backend, swap, c, r, v, stat)
    integer, intent(in) :: backend, swap
    integer, intent(out), optional :: stat
    real, intent(inout), target :: c(ims:ime, kms:kme, jms:jme, NUM_CHEM)
    real, intent(inout), target :: r(ims:ime, kms:kme, jms:jme, NRAD), v(ims:ime, kms:kme, jms:jme, ldrog)
    integer :: m1, m2, r1, r2
    c = chem0
    r = rad0
    v = POISON
    m1 = iph('ch2om'); m2 = iph('ch2or'); r1 = irad('hc3p'); r2 = irad('ethp')
    if (swap == 1) then
      m1 = iph('ch2or'); m2 = iph('ch2om')
    else if (swap == 2) then
      r1 = irad('ethp'); r2 = irad('hc3p')
    end if
    call wrfgpu_radm2sorg(chem=c, p_chem=p_chem,                                              &
      o1d=r(:,:,:,irad('o1d')), o3p=r(:,:,:,irad('o3p')), xno2=r(:,:,:,irad('xno2')),        &
      tolp=r(:,:,:,irad('tolp')), xylp=r(:,:,:,irad('xylp')), oltp=r(:,:,:,irad('oltp')),    &
      oln=r(:,:,:,irad('oln')), xo2=r(:,:,:,irad('xo2')), ol2p=r(:,:,:,irad('ol2p')),        &
      hc5p=r(:,:,:,irad('hc5p')), hc8p=r(:,:,:,irad('hc8p')), tco3=r(:,:,:,irad('tco3')),    &
      olip=r(:,:,:,irad('olip')), ketp=r(:,:,:,irad('ketp')), mo2=r(:,:,:,irad('mo2')),      &
      hc3p=r(:,:,:,r1), ethp=r(:,:,:,r2),                                                    &
      qv=met(:,:,:,1), t_phy=met(:,:,:,2), p_phy=met(:,:,:,3), rho=met(:,:,:,4),             &
      ph_no2=met(:,:,:,4+iph('no2')), ph_o31d=met(:,:,:,4+iph('o31d')),                      &
      ph_o33p=met(:,:,:,4+iph('o33p')), ph_hno2=met(:,:,:,4+iph('hno2')),                    &
      ph_hno3=met(:,:,:,4+iph('hno3')), ph_hno4=met(:,:,:,4+iph('hno4')),                    &
      ph_no3o2=met(:,:,:,4+iph('no3o2')), ph_no3o=met(:,:,:,4+iph('no3o')),                  &
      ph_h2o2=met(:,:,:,4+iph('h2o2')), ph_ch2om=met(:,:,:,4+m1), ph_ch2or=met(:,:,:,4+m2),  &
      ph_ch3cho=met(:,:,:,4+iph('ch3cho')), ph_ch3o2h=met(:,:,:,4+iph('ch3o2h')),            &
      ph_ch3coch3=met(:,:,:,4+iph('ch3coch3')), ph_ch3coo2h=met(:,:,:,4+iph('ch3coo2h')),    &
      ph_ch3coc2h5=met(:,:,:,4+iph('ch3coc2h5')), ph_hcocho=met(:,:,:,4+iph('hcocho')),      &
      ph_hcochob=met(:,:,:,4+iph('hcochob')), ph_ch3cocho=met(:,:,:,4+iph('ch3cocho')),      &
      ph_hcochest=met(:,:,:,4+iph('hcochest')), ph_ch3ono2=met(:,:,:,4+iph('ch3ono2')),      &
      vdrog3=v, dtstepc=dtstepc, p_nu0=p_nu0,                                                &
      ids=ids, ide=ide, jds=jds, jde=jde, kds=kds, kde=kde,                                  &
      ims=ims, ime=ime, jms=jms, jme=jme, kms=kms, kme=kme,                                  &
      its=its, ite=ite, jts=jts, jte=jte, kts=kts, kte=kte, backend=backend, nfailed=nfailed, &
      stat=stat)
  end subroutine run

  ! The tile's values against the Fortran reference: bit for bit (every value, no exclusion)
  ! with the references' libm, else the key species within 1e-5 relative in >= 99 % of the
  ! cells and within 1e-3 (RTOL) in all, above 1 molecule cm-3 (KPP's ATOL). expect_pass
  ! .false.: the call had wrong arguments, and the check must fail.
  subroutine check_against_reference(what, c, r, v, expect_pass)
    character(len=*), intent(in) :: what
    real, intent(in) :: c(ims:ime, kms:kme, jms:jme, NUM_CHEM), r(ims:ime, kms:kme, jms:jme, NRAD)
    real, intent(in) :: v(ims:ime, kms:kme, jms:jme, ldrog)
    logical, intent(in) :: expect_pass
    integer(8) :: nc_, nr_, nv_
    integer :: k, f, nover, nworst
    real(8) :: wk, wall
    logical :: ok
    nc_ = 0; nr_ = 0; nv_ = 0
    do f = 1, NCHEM
      nc_ = nc_ + count(bits(c(its:ite, kts:kte, jts:jte, p_chem(f))) /= bits(ref(:, :, :, f)))
    end do
    do f = 1, NRAD
      nr_ = nr_ + count(bits(r(its:ite, kts:kte, jts:jte, f)) /= bits(ref(:, :, :, NCHEM + f)))
    end do
    nv_ = count(bits(v(its:ite, kts:kte, jts:jte, :)) /= bits(refv))
    wall = 0
    nworst = 0
    do k = 1, size(key)
      f = ifield(trim(key(k)))
      if (f <= NCHEM) then
        call relcount(c(its:ite, kts:kte, jts:jte, p_chem(f)), ref(:, :, :, f), 1d-5, wk, nover)
      else
        call relcount(r(its:ite, kts:kte, jts:jte, f - NCHEM), ref(:, :, :, f), 1d-5, wk, nover)
      end if
      wall = max(wall, wk)
      nworst = max(nworst, nover)
    end do
    write(*, '(2a,3(i0,a),es10.3,a,i0,a)') what, ': values differing from the reference: chem ', &
         nc_, ', radicals ', nr_, ', vdrog3 ', nv_, '; key species max rel ', wall, &
         ' (most cells above 1e-5 in one species: ', nworst, ')'
    if (bitwise) then
      ok = nc_ == 0 .and. nr_ == 0 .and. nv_ == 0
    else
      ok = real(nworst) <= 0.01 * ncell .and. wall <= 1d-3
    end if
    if (expect_pass .and. bitwise) then
      call check(ok, what // ': equals the reference bit for bit')
    else if (expect_pass) then
      call check(ok, what // ': key species within the tolerances for another libm')
    else
      call check(.not. ok, what // ': caught by the check of A')
    end if
  end subroutine check_against_reference

  ! Largest relative difference of x from y and the number of cells over tol, over the cells
  ! where y is above 1 molecule cm-3 (x, y ppmv over the tile).
  subroutine relcount(x, y, tol, worst, nover)
    real, intent(in) :: x(nx, nz, ny), y(nx, nz, ny)
    real(8), intent(in) :: tol
    real(8), intent(out) :: worst
    integer, intent(out) :: nover
    integer :: i, k, j
    real(8) :: conv, rel
    worst = 0
    nover = 0
    do j = 1, ny
      do k = 1, nz
        do i = 1, nx
          conv = 1d-6 * DENS2CON_A * met(its + i - 1, k, jts + j - 1, 4)
          if (y(i, k, j) * conv <= 1d0) cycle
          rel = abs(real(x(i, k, j), 8) - y(i, k, j)) / abs(real(y(i, k, j), 8))
          worst = max(worst, rel)
          if (rel > tol) nover = nover + 1
        end do
      end do
    end do
  end subroutine relcount

  real(8) function maxrel(x, y)
    real, intent(in) :: x(nx, nz, ny), y(nx, nz, ny)
    real(8) :: w
    integer :: nover
    call relcount(x, y, 0d0, w, nover)
    maxrel = w
  end function maxrel

  ! Everything outside the tile, and the chem slots that are not RADM2SORG's, still POISON.
  logical function untouched(c, r, v)
    real, intent(in) :: c(ims:ime, kms:kme, jms:jme, NUM_CHEM), r(ims:ime, kms:kme, jms:jme, NRAD)
    real, intent(in) :: v(ims:ime, kms:kme, jms:jme, ldrog)
    integer :: n
    untouched = .true.
    do n = 1, NUM_CHEM
      if (any(p_chem == n)) then
        untouched = untouched .and. all(in_tile .or. c(:, :, :, n) == POISON)
      else
        untouched = untouched .and. all(c(:, :, :, n) == POISON)
      end if
    end do
    do n = 1, NRAD
      untouched = untouched .and. all(in_tile .or. r(:, :, :, n) == POISON)
    end do
    do n = 1, ldrog
      untouched = untouched .and. all(in_tile .or. v(:, :, :, n) == POISON)
    end do
  end function untouched

  integer function ifield(name)
    character(len=*), intent(in) :: name
    do ifield = 1, NCHEM + NRAD
      if (trim(cname(ifield)) == name) return
    end do
    write(0, '(3a)') 'test_radm2sorg_fortran: ', name, ' is not a RADM2SORG field'
    stop 2
  end function ifield

  integer function irad(name)
    character(len=*), intent(in) :: name
    irad = ifield(name) - NCHEM
    if (irad < 1) then
      write(0, '(3a)') 'test_radm2sorg_fortran: ', name, ' is not a radical'
      stop 2
    end if
  end function irad

  integer function iph(name)
    character(len=*), intent(in) :: name
    do iph = 1, NPH
      if (trim(pname(iph)) == name) return
    end do
    write(0, '(3a)') 'test_radm2sorg_fortran: ph_', name, ' is not a photolysis rate'
    stop 2
  end function iph

  elemental integer function bits(x)
    real, intent(in) :: x
    bits = transfer(x, bits)
  end function bits

  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=32) :: s
    character(kind=c_char), pointer :: a(:)
    integer :: n
    s = ''
    if (.not. c_associated(p)) return
    call c_f_pointer(p, a, (/ 32 /))
    do n = 1, 32
      if (a(n) == c_null_char) exit
      s(n:n) = a(n)
    end do
  end function c_string

  ! struct utsname (Linux): six fields of 65 characters; machine is the fifth.
  function uname_machine() result(s)
    character(len=32) :: s
    character(kind=c_char) :: u(6 * 65 + 1024)
    integer :: n
    s = ''
    if (c_uname(u) /= 0) return
    do n = 1, 32
      if (u(4 * 65 + n) == c_null_char) exit
      s(n:n) = u(4 * 65 + n)
    end do
  end function uname_machine

  subroutine getv(name, a)
    character(len=*), intent(in) :: name
    real, intent(inout) :: a(ims:ime, kms:kme, jms:jme)
    call getd(name, buf)
    a(its:ite, kts:kte, jts:jte) = buf
  end subroutine getv

  subroutine getd(name, a)
    character(len=*), intent(in) :: name
    real, intent(out) :: a(nx, nz, ny)
    integer :: v
    call nc(nf90_inq_varid(ncid, name, v), 'variable ' // name)
    call nc(nf90_get_var(ncid, v, a), 'get ' // name)
  end subroutine getd

  integer function dimlen(name)
    character(len=*), intent(in) :: name
    integer :: d, n
    call nc(nf90_inq_dimid(ncid, name, d), 'dimension ' // name)
    call nc(nf90_inquire_dimension(ncid, d, len=n), 'dimension ' // name)
    dimlen = n
  end function dimlen

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*, '(A,A)') 'PASS ', trim(what)
    else
      write(*, '(A,A)') 'FAIL ', trim(what)
      nfail = nfail + 1
    end if
  end subroutine check

  subroutine nc(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= nf90_noerr) then
      write(0, '(5A)') path, ': ', what, ': ', trim(nf90_strerror(status))
      stop 2
    end if
  end subroutine nc
end program test_radm2sorg_fortran
