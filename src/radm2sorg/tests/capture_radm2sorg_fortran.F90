!-------------------------------------------------------------------------------
! capture_radm2sorg_fortran: checks the RADM2SORG writer of capture mode
! (module_wrfgpu_capture, wrfgpu_capture_radm2sorg), the routine the chem_driver.F hook of
! wrf_patch/capture/0003-radm2sorg-capture.patch calls around kpp_mechanism_driver.
!
! It takes a committed RADM2SORG capture (inputs and WRF-Chem KPP outputs), puts its fields
! into arrays laid out as chem_driver holds them (memory bounds wider than the tile, halo
! cells poisoned, the 41 species at scattered P_x indices of a 4-D chem array), writes a
! capture with the writer (before: inputs, after: the reference outputs), and reads the file
! back: every variable must equal the source bit for bit, and the attributes must be the
! tile's. tests/driver/capture_radm2sorg.sh runs it with WRFGPU_CAPTURE_* set and then
! replays the written file with bin/wrfgpu_replay.
!
! usage: capture_radm2sorg_fortran SOURCE.nc STEP      (STEP must be in WRFGPU_CAPTURE_STEPS)
!-------------------------------------------------------------------------------
program capture_radm2sorg_fortran
  use netcdf
  use module_wrfgpu_capture, only: wrfgpu_capture_wanted, wrfgpu_capture_radm2sorg, &
                                   wrfgpu_capture_filename
  implicit none
  character(len=4), parameter :: chem_names(41) = (/ &
       'sulf', 'ora1', 'ora2', 'so2 ', 'eth ', 'hc5 ', 'hc8 ', 'tol ', 'xyl ', 'tpan', 'hono', &
       'h2o2', 'n2o5', 'hc3 ', 'ch4 ', 'paa ', 'hno4', 'op1 ', 'csl ', 'pan ', 'ol2 ', 'hno3', &
       'co  ', 'iso ', 'olt ', 'oli ', 'dcb ', 'gly ', 'ket ', 'mgly', 'op2 ', 'hcho', 'o3  ', &
       'onit', 'ald ', 'ho2 ', 'ho  ', 'no3 ', 'aco3', 'no  ', 'no2 ' /)
  character(len=4), parameter :: rad_names(17) = (/ &
       'o1d ', 'o3p ', 'xno2', 'tolp', 'xylp', 'oltp', 'oln ', 'xo2 ', 'ol2p', 'hc5p', 'hc8p', &
       'tco3', 'olip', 'ketp', 'mo2 ', 'hc3p', 'ethp' /)
  character(len=12), parameter :: met_names(25) = (/ &
       'qv          ', 't_phy       ', 'p_phy       ', 'rho_phy     ', &
       'ph_no2      ', 'ph_o31d     ', 'ph_o33p     ', 'ph_hno2     ', 'ph_hno3     ', &
       'ph_hno4     ', 'ph_no3o2    ', 'ph_no3o     ', 'ph_h2o2     ', 'ph_ch2om    ', &
       'ph_ch2or    ', 'ph_ch3cho   ', 'ph_ch3o2h   ', 'ph_ch3coch3 ', 'ph_ch3coo2h ', &
       'ph_ch3coc2h5', 'ph_hcocho   ', 'ph_hcochob  ', 'ph_ch3cocho ', 'ph_hcochest ', &
       'ph_ch3ono2  ' /)
  real, parameter :: POISON = -999.0
  integer, parameter :: NUM_CHEM = 50, HALO = 3, IOFF = 4, JOFF = 2
  integer :: p_chem(41)
  character(len=1024) :: src, arg
  character(len=2048) :: fname
  integer :: ncid, nx, nz, ny, ldrog, step, q, nbad, st, vid, ival
  integer :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte
  real :: dtstepc, rval
  real, allocatable :: cin(:,:,:,:), cout(:,:,:,:), rin(:,:,:,:), rout(:,:,:,:), met(:,:,:,:)
  real, allocatable :: vd(:,:,:,:), vdw(:,:,:,:), buf(:,:,:), buf4(:,:,:,:)
  integer :: p_nu0

  nbad = 0
  call get_command_argument(1, src)
  call get_command_argument(2, arg)
  read(arg, *, iostat=st) step
  if (len_trim(src) == 0 .or. st /= 0) then
    write(0,'(a)') 'usage: capture_radm2sorg_fortran SOURCE.nc STEP'
    stop 2
  end if

  ! --- the source capture ----------------------------------------------------
  call chk(nf90_open(trim(src), nf90_nowrite, ncid), 'open '//trim(src))
  nx = dimlen(ncid, 'west_east'); nz = dimlen(ncid, 'bottom_top'); ny = dimlen(ncid, 'south_north')
  ldrog = dimlen(ncid, 'ldrog')
  call chk(nf90_get_att(ncid, nf90_global, 'dtstepc', dtstepc), 'dtstepc')
  call chk(nf90_get_att(ncid, nf90_global, 'p_nu0', p_nu0), 'p_nu0')

  ! WRF-like bounds: the tile starts at (IOFF+1, 1, JOFF+1); memory has a halo of HALO
  its = IOFF + 1; ite = IOFF + nx; kts = 1; kte = nz; jts = JOFF + 1; jte = JOFF + ny
  ims = its - HALO; ime = ite + HALO; kms = 1; kme = nz + 1; jms = jts - HALO; jme = jte + HALO
  ids = 1; ide = ite + 1; kds = 1; kde = nz + 1; jds = 1; jde = jte + 1
  ! the 41 species at scattered indices (reverse order, from NUM_CHEM down), as P_x are in WRF
  do q = 1, 41
    p_chem(q) = NUM_CHEM + 1 - q
  end do

  allocate(cin(ims:ime, kms:kme, jms:jme, NUM_CHEM), cout(ims:ime, kms:kme, jms:jme, NUM_CHEM))
  allocate(rin(ims:ime, kms:kme, jms:jme, 17), rout(ims:ime, kms:kme, jms:jme, 17))
  allocate(met(ims:ime, kms:kme, jms:jme, 25), vd(ims:ime, kms:kme, jms:jme, ldrog))
  allocate(buf(nx, nz, ny), buf4(nx, nz, ny, ldrog))
  cin = POISON; cout = POISON; rin = POISON; rout = POISON; met = POISON; vd = POISON
  do q = 1, 41
    call getv(trim(chem_names(q)), cin(:, :, :, p_chem(q)))
    call getv(trim(chem_names(q))//'_out', cout(:, :, :, p_chem(q)))
  end do
  do q = 1, 17
    call getv(trim(rad_names(q)), rin(:, :, :, q))
    call getv(trim(rad_names(q))//'_out', rout(:, :, :, q))
  end do
  do q = 1, 25
    call getv(trim(met_names(q)), met(:, :, :, q))
  end do
  call chk(nf90_inq_varid(ncid, 'vdrog3_out', vid), 'vdrog3_out')
  call chk(nf90_get_var(ncid, vid, buf4), 'get vdrog3_out')
  vd(its:ite, kts:kte, jts:jte, :) = buf4
  call chk(nf90_close(ncid), 'close source')

  ! --- the environment decides which steps are captured ------------------------
  call expect(wrfgpu_capture_wanted('radm2sorg_kpp', step), 'WRFGPU_CAPTURE_STEPS selects step')
  call expect(.not. wrfgpu_capture_wanted('radm2sorg_kpp', step + 100000), &
              'a step not in WRFGPU_CAPTURE_STEPS is not captured')

  ! --- write: before (inputs), after (the reference outputs) --------------------
  call write_capture(.false., cin, rin)
  call write_capture(.true., cout, rout)
  fname = wrfgpu_capture_filename('radm2sorg_kpp', 1, step, 0, 1, 1)
  write(*,'(a)') 'wrote '//trim(fname)

  ! --- read back ------------------------------------------------------------------
  call chk(nf90_open(trim(fname), nf90_nowrite, ncid), 'open '//trim(fname))
  call expect(dimlen(ncid, 'west_east') == nx .and. dimlen(ncid, 'bottom_top') == nz .and. &
              dimlen(ncid, 'south_north') == ny .and. dimlen(ncid, 'ldrog') == ldrog, 'dimensions are the tile''s')
  call expect(gatt_i('its') == its .and. gatt_i('ite') == ite .and. gatt_i('jts') == jts .and. &
              gatt_i('jte') == jte .and. gatt_i('kts') == kts .and. gatt_i('kte') == kte .and. &
              gatt_i('region_i0') == its .and. gatt_i('region_j0') == jts, 'tile and region attributes')
  call expect(gatt_i('itimestep') == step .and. gatt_i('p_nu0') == p_nu0 .and. &
              gatt_i('capture_format') == 1, 'itimestep, p_nu0, capture_format')
  call chk(nf90_get_att(ncid, nf90_global, 'dtstepc', rval), 'dtstepc back')
  call expect(rval == dtstepc, 'dtstepc')
  call expect(gatt_s('kernel') == 'radm2sorg_kpp' .and. gatt_s('method') == 'ros3' .and. &
              gatt_s('source') == 'wrf', 'kernel, method, source')
  do q = 1, 41
    call same(trim(chem_names(q)), cin(:, :, :, p_chem(q)))
    call same(trim(chem_names(q))//'_out', cout(:, :, :, p_chem(q)))
  end do
  do q = 1, 17
    call same(trim(rad_names(q)), rin(:, :, :, q))
    call same(trim(rad_names(q))//'_out', rout(:, :, :, q))
  end do
  do q = 1, 25
    call same(trim(met_names(q)), met(:, :, :, q))
  end do
  call chk(nf90_inq_varid(ncid, 'vdrog3_out', vid), 'vdrog3_out back')
  call chk(nf90_get_var(ncid, vid, buf4), 'get vdrog3_out back')
  call expect(all(buf4 == vd(its:ite, kts:kte, jts:jte, :)), 'vdrog3_out equals the source')
  ival = 0
  call chk(nf90_inquire(ncid, nvariables=ival), 'inquire')
  call expect(ival == 2 * 41 + 2 * 17 + 25 + 1, 'no variable missing or extra')
  call chk(nf90_close(ncid), 'close written')

  if (nbad == 0) then
    write(*,'(a)') 'capture_radm2sorg_fortran: all checks PASS'
  else
    write(*,'(a,i0,a)') 'capture_radm2sorg_fortran: ', nbad, ' check(s) FAILED'
    stop 1
  end if

contains

  subroutine write_capture(after, c, r)
    logical, intent(in) :: after
    real, intent(in) :: c(ims:ime, kms:kme, jms:jme, NUM_CHEM), r(ims:ime, kms:kme, jms:jme, 17)
    call wrfgpu_capture_radm2sorg(after, 1, step, 0, 1, 1, 60.0, c, NUM_CHEM, p_chem,       &
         r(:,:,:,1), r(:,:,:,2), r(:,:,:,3), r(:,:,:,4), r(:,:,:,5), r(:,:,:,6), r(:,:,:,7),  &
         r(:,:,:,8), r(:,:,:,9), r(:,:,:,10), r(:,:,:,11), r(:,:,:,12), r(:,:,:,13),          &
         r(:,:,:,14), r(:,:,:,15), r(:,:,:,16), r(:,:,:,17),                                  &
         met(:,:,:,1), met(:,:,:,2), met(:,:,:,3), met(:,:,:,4),                              &
         met(:,:,:,5), met(:,:,:,6), met(:,:,:,7), met(:,:,:,8), met(:,:,:,9), met(:,:,:,10), &
         met(:,:,:,11), met(:,:,:,12), met(:,:,:,13), met(:,:,:,14), met(:,:,:,15),           &
         met(:,:,:,16), met(:,:,:,17), met(:,:,:,18), met(:,:,:,19), met(:,:,:,20),           &
         met(:,:,:,21), met(:,:,:,22), met(:,:,:,23), met(:,:,:,24), met(:,:,:,25),           &
         vd, ldrog, dtstepc, p_nu0,                                                            &
         ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte)
  end subroutine write_capture

  subroutine getv(name, a)
    character(len=*), intent(in) :: name
    real, intent(inout) :: a(ims:ime, kms:kme, jms:jme)
    integer :: v
    call chk(nf90_inq_varid(ncid, name, v), 'inq_varid '//name//' in '//trim(src))
    call chk(nf90_get_var(ncid, v, buf), 'get '//name)
    a(its:ite, kts:kte, jts:jte) = buf
  end subroutine getv

  subroutine same(name, a)
    character(len=*), intent(in) :: name
    real, intent(in) :: a(ims:ime, kms:kme, jms:jme)
    integer :: v
    if (nf90_inq_varid(ncid, name, v) /= nf90_noerr) then
      call expect(.false., name//' is in the written file')
      return
    end if
    call chk(nf90_get_var(ncid, v, buf), 'get '//name//' back')
    if (.not. all(buf == a(its:ite, kts:kte, jts:jte))) call expect(.false., name//' equals the source')
  end subroutine same

  integer function dimlen(nc, name)
    integer, intent(in) :: nc
    character(len=*), intent(in) :: name
    integer :: d
    call chk(nf90_inq_dimid(nc, name, d), 'dimension '//name)
    call chk(nf90_inquire_dimension(nc, d, len=dimlen), 'dimension '//name)
  end function dimlen

  integer function gatt_i(name)
    character(len=*), intent(in) :: name
    call chk(nf90_get_att(ncid, nf90_global, name, gatt_i), 'attribute '//name)
  end function gatt_i

  function gatt_s(name) result(v)
    character(len=*), intent(in) :: name
    character(len=64) :: v
    v = ''
    call chk(nf90_get_att(ncid, nf90_global, name, v), 'attribute '//name)
  end function gatt_s

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*,'(a)') 'PASS  '//what
    else
      write(*,'(a)') 'FAIL  '//what
      nbad = nbad + 1
    end if
  end subroutine expect

  subroutine chk(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= nf90_noerr) then
      write(0,'(a)') 'capture_radm2sorg_fortran: '//trim(nf90_strerror(status))//' at '//what
      stop 2
    end if
  end subroutine chk
end program capture_radm2sorg_fortran
