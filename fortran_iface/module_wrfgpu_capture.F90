!-------------------------------------------------------------------------------
! module_wrfgpu_capture: capture mode of wrfgpu (writer, capture format version 1)
!
! Writes one NetCDF-4 file per captured call of a WRF kernel, holding the inputs
! WRF passed and the outputs WRF's own Fortran produced, in the layout described
! in docs/capture_format.md (WRF memory order: a Fortran array f(i,k,j) becomes a
! NetCDF variable with dimensions (south_north, bottom_top, west_east)).
!
! The module only reads the arrays it is given; it never changes WRF state.
! It depends on NetCDF-Fortran only (no WRF modules), so it can be compiled
! before WRF and linked into wrf.exe (see wrf_patch/capture/README.md).
! Compile it with the same REAL promotion flags as WRF (real_kind is recorded).
!
! Run-time control (environment, read once):
!   WRFGPU_CAPTURE_STEPS    comma list of time-step indices (grid%itimestep), e.g. "10,20";
!                           ranges "a-b" are accepted too. Empty/unset: capture nothing.
!   WRFGPU_CAPTURE_CASE     case name written into file names and attributes (default "wrf")
!   WRFGPU_CAPTURE_DIR      output folder (default ".")
!   WRFGPU_CAPTURE_KERNELS  optional comma list restricting the kernels
!                           ("wsm5", "advect_scalar_pd", "radm2sorg_kpp"); unset: all kernels.
!
! File name: <dir>/<case>_<kernel>_d<NN>_step<NNNN>_rank<R>.nc, plus "_tile<T>"
! before ".nc" when the patch runs more than one tile (OpenMP); for advection of
! a 4-D array other than moist the array name follows the kernel name
! (e.g. <case>_advect_scalar_pd_chem_d01_...).
!
! Each call opens and closes its file, so the writer keeps no state between the
! "in" and "out" calls of a kernel. NetCDF errors stop the program with a
! message naming the file and the variable.
!-------------------------------------------------------------------------------
module module_wrfgpu_capture
  use netcdf
  implicit none
  private

  integer, parameter :: wp = kind(1.0)
  integer, parameter :: CAPTURE_FORMAT_VERSION = 1
  character(len=*), parameter :: CAPTURE_WRF_VERSION = '4.7.1'
  integer, parameter :: HALO_PD = 4          ! halo stored around the tile for advect_scalar_pd
  integer, parameter :: DEFLATE = 4

  public :: wrfgpu_capture_wanted
  public :: wrfgpu_capture_filename
  public :: wrfgpu_capture_wsm5_in, wrfgpu_capture_wsm5_out
  public :: wrfgpu_capture_advect_pd_begin, wrfgpu_capture_advect_pd_scalar
  public :: wrfgpu_capture_advect_pd
  public :: wrfgpu_capture_radm2sorg

  ! RADM2SORG_KPP: the WRF names (lower case) of the 41 chem species, the 17 radical arrays
  ! and the 21 photolysis rates, in the order the chem_driver hook passes them (the order of
  ! the chem_driver GPU hook and of src/radm2sorg/fortran/module_wrfgpu_radm2sorg.F90)
  character(len=4), parameter :: RADM2SORG_CHEM(41) = (/ &
       'sulf', 'ora1', 'ora2', 'so2 ', 'eth ', 'hc5 ', 'hc8 ', 'tol ', 'xyl ', 'tpan', 'hono', &
       'h2o2', 'n2o5', 'hc3 ', 'ch4 ', 'paa ', 'hno4', 'op1 ', 'csl ', 'pan ', 'ol2 ', 'hno3', &
       'co  ', 'iso ', 'olt ', 'oli ', 'dcb ', 'gly ', 'ket ', 'mgly', 'op2 ', 'hcho', 'o3  ', &
       'onit', 'ald ', 'ho2 ', 'ho  ', 'no3 ', 'aco3', 'no  ', 'no2 ' /)
  character(len=4), parameter :: RADM2SORG_RAD(17) = (/ &
       'o1d ', 'o3p ', 'xno2', 'tolp', 'xylp', 'oltp', 'oln ', 'xo2 ', 'ol2p', 'hc5p', 'hc8p', &
       'tco3', 'olip', 'ketp', 'mo2 ', 'hc3p', 'ethp' /)
  character(len=12), parameter :: RADM2SORG_PH(21) = (/ &
       'ph_no2      ', 'ph_o31d     ', 'ph_o33p     ', 'ph_hno2     ', 'ph_hno3     ', &
       'ph_hno4     ', 'ph_no3o2    ', 'ph_no3o     ', 'ph_h2o2     ', 'ph_ch2om    ', &
       'ph_ch2or    ', 'ph_ch3cho   ', 'ph_ch3o2h   ', 'ph_ch3coch3 ', 'ph_ch3coo2h ', &
       'ph_ch3coc2h5', 'ph_hcocho   ', 'ph_hcochob  ', 'ph_ch3cocho ', 'ph_hcochest ', &
       'ph_ch3ono2  ' /)

  logical, save :: cfg_read = .false.
  integer, allocatable, save :: cap_steps(:)
  character(len=256), save :: cap_case = 'wrf'
  character(len=1024), save :: cap_dir = '.'
  character(len=512), save :: cap_kernels = ''

  ! generic name for the per-scalar call
  interface wrfgpu_capture_advect_pd
    module procedure wrfgpu_capture_advect_pd_scalar
  end interface

contains

  !=============================================================================
  ! configuration
  !=============================================================================
  subroutine read_config()
    character(len=4096) :: s
    integer :: l, st, n, p0, p1, a, b, ios, dash, k, i
    integer, allocatable :: tmp(:)

    if (cfg_read) return
    allocate(tmp(100000))
    n = 0
    call get_environment_variable('WRFGPU_CAPTURE_STEPS', s, length=l, status=st)
    if (st == 0 .and. l > 0) then
      p0 = 1
      do while (p0 <= l)
        p1 = index(s(p0:l), ',')
        if (p1 == 0) then
          p1 = l + 1
        else
          p1 = p0 + p1 - 1
        end if
        if (p1 > p0) then
          dash = index(s(p0:p1-1), '-')
          if (dash > 1) then
            read(s(p0:p0+dash-2), *, iostat=ios) a
            if (ios == 0) read(s(p0+dash:p1-1), *, iostat=ios) b
          else
            read(s(p0:p1-1), *, iostat=ios) a
            b = a
          end if
          if (ios /= 0) then
            write(0,'(a)') 'wrfgpu_capture: cannot parse WRFGPU_CAPTURE_STEPS="'//s(1:l)//'"'
            error stop 'wrfgpu_capture: bad WRFGPU_CAPTURE_STEPS'
          end if
          do k = a, b
            if (n < size(tmp)) then
              n = n + 1
              tmp(n) = k
            end if
          end do
        end if
        p0 = p1 + 1
      end do
    end if
    allocate(cap_steps(n))
    do i = 1, n
      cap_steps(i) = tmp(i)
    end do
    deallocate(tmp)

    call get_environment_variable('WRFGPU_CAPTURE_CASE', s, length=l, status=st)
    if (st == 0 .and. l > 0) cap_case = adjustl(s(1:l))
    call get_environment_variable('WRFGPU_CAPTURE_DIR', s, length=l, status=st)
    if (st == 0 .and. l > 0) cap_dir = s(1:l)
    call get_environment_variable('WRFGPU_CAPTURE_KERNELS', s, length=l, status=st)
    if (st == 0 .and. l > 0) cap_kernels = ','//trim(adjustl(s(1:l)))//','
    cfg_read = .true.
    if (n > 0) then
      write(0,'(a,i0,a)') 'wrfgpu_capture: capture enabled for ', n, ' step(s), case "'// &
           trim(cap_case)//'", dir "'//trim(cap_dir)//'"'
    end if
  end subroutine read_config

  !> .true. when the call of `kernel` at WRF time step `itimestep` must be captured
  logical function wrfgpu_capture_wanted(kernel, itimestep)
    character(len=*), intent(in) :: kernel
    integer, intent(in) :: itimestep
    !$omp critical (wrfgpu_capture_cfg)
    call read_config()
    !$omp end critical (wrfgpu_capture_cfg)
    wrfgpu_capture_wanted = .false.
    if (size(cap_steps) == 0) return
    if (.not. any(cap_steps == itimestep)) return
    if (len_trim(cap_kernels) > 0) then
      if (index(cap_kernels, ','//trim(kernel)//',') == 0) return
    end if
    wrfgpu_capture_wanted = .true.
  end function wrfgpu_capture_wanted

  !> file name of a capture
  function wrfgpu_capture_filename(kernel, domain_id, itimestep, rank, tile, num_tiles) result(fname)
    character(len=*), intent(in) :: kernel
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles
    character(len=2048) :: fname
    character(len=64) :: sstep, srank, stile, sdom
    call read_config()
    write(sdom, '(i2.2)') domain_id
    write(sstep, '(i4.4)') itimestep
    write(srank, '(i0)') rank
    stile = ''
    if (num_tiles > 1) write(stile, '(a,i0)') '_tile', tile
    fname = trim(cap_dir)//'/'//trim(cap_case)//'_'//trim(kernel)//'_d'//trim(sdom)// &
            '_step'//trim(sstep)//'_rank'//trim(srank)//trim(stile)//'.nc'
  end function wrfgpu_capture_filename

  !=============================================================================
  ! NetCDF helpers
  !=============================================================================
  subroutine chk(status, fname, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: fname, what
    if (status /= nf90_noerr) then
      write(0,'(a)') 'wrfgpu_capture: NetCDF error "'//trim(nf90_strerror(status))// &
                     '" in file '//trim(fname)//' at '//trim(what)
      error stop 'wrfgpu_capture: NetCDF error (see message above)'
    end if
  end subroutine chk

  integer function nc_real_type()
    if (kind(1.0_wp) == kind(1.0d0)) then
      nc_real_type = nf90_double
    else
      nc_real_type = nf90_float
    end if
  end function nc_real_type

  integer function defvar(ncid, name, xtype, dimids, units, desc, fname, chunks) result(varid)
    integer, intent(in) :: ncid, xtype, dimids(:)
    character(len=*), intent(in) :: name, units, desc, fname
    integer, intent(in), optional :: chunks(:)   ! chunk sizes (Fortran order); default: whole variable
    if (present(chunks)) then
      call chk(nf90_def_var(ncid, name, xtype, dimids, varid, chunksizes=chunks), fname, 'def_var '//name)
    else
      call chk(nf90_def_var(ncid, name, xtype, dimids, varid), fname, 'def_var '//name)
    end if
    call chk(nf90_def_var_deflate(ncid, varid, 1, 1, DEFLATE), fname, 'def_var_deflate '//name)
    call chk(nf90_put_att(ncid, varid, 'units', units), fname, 'units of '//name)
    call chk(nf90_put_att(ncid, varid, 'description', desc), fname, 'description of '//name)
  end function defvar

  subroutine att_i(ncid, name, v, fname)
    integer, intent(in) :: ncid, v
    character(len=*), intent(in) :: name, fname
    call chk(nf90_put_att(ncid, nf90_global, name, v), fname, 'global attribute '//name)
  end subroutine att_i

  subroutine att_r(ncid, name, v, fname)
    integer, intent(in) :: ncid
    real(wp), intent(in) :: v
    character(len=*), intent(in) :: name, fname
    call chk(nf90_put_att(ncid, nf90_global, name, v), fname, 'global attribute '//name)
  end subroutine att_r

  subroutine att_s(ncid, name, v, fname)
    integer, intent(in) :: ncid
    character(len=*), intent(in) :: name, v, fname
    call chk(nf90_put_att(ncid, nf90_global, name, v), fname, 'global attribute '//name)
  end subroutine att_s

  subroutine att_l(ncid, name, v, fname)
    integer, intent(in) :: ncid
    logical, intent(in) :: v
    character(len=*), intent(in) :: name, fname
    call att_i(ncid, name, merge(1, 0, v), fname)
  end subroutine att_l

  subroutine common_globals(ncid, fname, kernel, itimestep, dt, &
                            ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                            its, ite, jts, jte, kts, kte, i0, j0, k0, domain_id, rank, tile, num_tiles)
    integer, intent(in) :: ncid, itimestep, domain_id, rank, tile, num_tiles
    character(len=*), intent(in) :: fname, kernel
    real(wp), intent(in) :: dt
    integer, intent(in) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte, i0, j0, k0
    call att_i(ncid, 'capture_format', CAPTURE_FORMAT_VERSION, fname)
    call att_s(ncid, 'kernel', kernel, fname)
    call att_s(ncid, 'wrf_version', CAPTURE_WRF_VERSION, fname)
    call att_s(ncid, 'case_name', trim(cap_case), fname)
    call att_i(ncid, 'itimestep', itimestep, fname)
    call att_r(ncid, 'dt', dt, fname)
    call att_i(ncid, 'ids', ids, fname); call att_i(ncid, 'ide', ide, fname)
    call att_i(ncid, 'jds', jds, fname); call att_i(ncid, 'jde', jde, fname)
    call att_i(ncid, 'kds', kds, fname); call att_i(ncid, 'kde', kde, fname)
    call att_i(ncid, 'its', its, fname); call att_i(ncid, 'ite', ite, fname)
    call att_i(ncid, 'jts', jts, fname); call att_i(ncid, 'jte', jte, fname)
    call att_i(ncid, 'kts', kts, fname); call att_i(ncid, 'kte', kte, fname)
    call att_i(ncid, 'region_i0', i0, fname)
    call att_i(ncid, 'region_j0', j0, fname)
    call att_i(ncid, 'region_k0', k0, fname)
    call att_i(ncid, 'real_kind', int(storage_size(1.0_wp) / 8), fname)
    call att_s(ncid, 'source', 'wrf', fname)
    ! extra (informative) attributes
    call att_i(ncid, 'ims', ims, fname); call att_i(ncid, 'ime', ime, fname)
    call att_i(ncid, 'jms', jms, fname); call att_i(ncid, 'jme', jme, fname)
    call att_i(ncid, 'kms', kms, fname); call att_i(ncid, 'kme', kme, fname)
    call att_i(ncid, 'domain_id', domain_id, fname)
    call att_i(ncid, 'mpi_rank', rank, fname)
    call att_i(ncid, 'tile', tile, fname)
    call att_i(ncid, 'num_tiles', num_tiles, fname)
  end subroutine common_globals

  subroutine put3(ncid, fname, name, a, ims, ime, kms, kme, jms, jme, i0, i1, k0, k1, j0, j1)
    integer, intent(in) :: ncid, ims, ime, kms, kme, jms, jme, i0, i1, k0, k1, j0, j1
    character(len=*), intent(in) :: fname, name
    real(wp), intent(in) :: a(ims:ime, kms:kme, jms:jme)
    integer :: varid
    call chk(nf90_inq_varid(ncid, name, varid), fname, 'inq_varid '//name)
    call chk(nf90_put_var(ncid, varid, a(i0:i1, k0:k1, j0:j1)), fname, 'put_var '//name)
  end subroutine put3

  subroutine put2(ncid, fname, name, a, ims, ime, jms, jme, i0, i1, j0, j1)
    integer, intent(in) :: ncid, ims, ime, jms, jme, i0, i1, j0, j1
    character(len=*), intent(in) :: fname, name
    real(wp), intent(in) :: a(ims:ime, jms:jme)
    integer :: varid
    call chk(nf90_inq_varid(ncid, name, varid), fname, 'inq_varid '//name)
    call chk(nf90_put_var(ncid, varid, a(i0:i1, j0:j1)), fname, 'put_var '//name)
  end subroutine put2

  subroutine put1(ncid, fname, name, a, kms, kme, k0, k1)
    integer, intent(in) :: ncid, kms, kme, k0, k1
    character(len=*), intent(in) :: fname, name
    real(wp), intent(in) :: a(kms:kme)
    integer :: varid
    call chk(nf90_inq_varid(ncid, name, varid), fname, 'inq_varid '//name)
    call chk(nf90_put_var(ncid, varid, a(k0:k1)), fname, 'put_var '//name)
  end subroutine put1

  !=============================================================================
  ! WSM5 (kernel = "wsm5"), region its:ite, kts:kte, jts:jte
  !=============================================================================

  !> Create the capture file and write the inputs of one CALL wsm5(...). Call just before it.
  subroutine wrfgpu_capture_wsm5_in(domain_id, itimestep, rank, tile, num_tiles,      &
       th, qv, qc, qr, qi, qs, rho, pii, p, dz, rainnc, snownc,                        &
       delt, g, cpd, cpv, rd, rv, t0c, ep1, ep2, qmin, xls, xlv0, xlf0,                &
       den0, denr, cliq, cice, psat, dens,                                             &
       ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                     &
       its, ite, jts, jte, kts, kte, diagflag, do_radar_ref, has_reqc, has_reqi, has_reqs)
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles
    integer, intent(in) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: &
         th, qv, qc, qr, qi, qs, rho, pii, p, dz
    real(wp), dimension(ims:ime, jms:jme), intent(in) :: rainnc
    real(wp), dimension(ims:ime, jms:jme), intent(in), optional :: snownc
    real(wp), intent(in) :: delt, g, cpd, cpv, rd, rv, t0c, ep1, ep2, qmin, xls, xlv0, xlf0, &
                            den0, denr, cliq, cice, psat, dens
    logical, intent(in), optional :: diagflag
    integer, intent(in), optional :: do_radar_ref, has_reqc, has_reqi, has_reqs

    character(len=2048) :: fname
    integer :: ncid, d_we, d_bt, d_sn, vid, rt, d3(3), d2(2)
    real(wp), allocatable :: zero2(:,:)

    fname = wrfgpu_capture_filename('wsm5', domain_id, itimestep, rank, tile, num_tiles)
    call chk(nf90_create(trim(fname), ior(nf90_netcdf4, nf90_clobber), ncid), fname, 'create')
    call chk(nf90_def_dim(ncid, 'west_east', ite - its + 1, d_we), fname, 'def_dim west_east')
    call chk(nf90_def_dim(ncid, 'bottom_top', kte - kts + 1, d_bt), fname, 'def_dim bottom_top')
    call chk(nf90_def_dim(ncid, 'south_north', jte - jts + 1, d_sn), fname, 'def_dim south_north')
    d3 = (/ d_we, d_bt, d_sn /)
    d2 = (/ d_we, d_sn /)
    rt = nc_real_type()

    call common_globals(ncid, fname, 'wsm5', itimestep, delt, ids, ide, jds, jde, kds, kde, &
                        ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte, its, jts, kts, &
                        domain_id, rank, tile, num_tiles)
    call att_r(ncid, 'delt', delt, fname)
    call att_r(ncid, 'g', g, fname);       call att_r(ncid, 'cpd', cpd, fname)
    call att_r(ncid, 'cpv', cpv, fname);   call att_r(ncid, 'rd', rd, fname)
    call att_r(ncid, 'rv', rv, fname);     call att_r(ncid, 't0c', t0c, fname)
    call att_r(ncid, 'ep1', ep1, fname);   call att_r(ncid, 'ep2', ep2, fname)
    call att_r(ncid, 'qmin', qmin, fname); call att_r(ncid, 'xls', xls, fname)
    call att_r(ncid, 'xlv0', xlv0, fname); call att_r(ncid, 'xlf0', xlf0, fname)
    call att_r(ncid, 'den0', den0, fname); call att_r(ncid, 'denr', denr, fname)
    call att_r(ncid, 'cliq', cliq, fname); call att_r(ncid, 'cice', cice, fname)
    call att_r(ncid, 'psat', psat, fname); call att_r(ncid, 'dens', dens, fname)
    if (present(diagflag)) call att_l(ncid, 'diagflag', diagflag, fname)
    if (present(do_radar_ref)) call att_i(ncid, 'do_radar_ref', do_radar_ref, fname)
    if (present(has_reqc)) call att_i(ncid, 'has_reqc', has_reqc, fname)
    if (present(has_reqi)) call att_i(ncid, 'has_reqi', has_reqi, fname)
    if (present(has_reqs)) call att_i(ncid, 'has_reqs', has_reqs, fname)
    call att_l(ncid, 'snow_present', present(snownc), fname)

    vid = defvar(ncid, 'th',  rt, d3, 'K', 'potential temperature as passed to wsm5 (th_phy), input', fname)
    vid = defvar(ncid, 'qv',  rt, d3, 'kg kg-1', 'water vapor mixing ratio, input', fname)
    vid = defvar(ncid, 'qc',  rt, d3, 'kg kg-1', 'cloud water mixing ratio, input', fname)
    vid = defvar(ncid, 'qr',  rt, d3, 'kg kg-1', 'rain water mixing ratio, input', fname)
    vid = defvar(ncid, 'qi',  rt, d3, 'kg kg-1', 'cloud ice mixing ratio, input', fname)
    vid = defvar(ncid, 'qs',  rt, d3, 'kg kg-1', 'snow mixing ratio, input', fname)
    vid = defvar(ncid, 'rho', rt, d3, 'kg m-3', 'dry air density (den = grid%rho), input', fname)
    vid = defvar(ncid, 'pii', rt, d3, '1', 'Exner function (pi_phy), input', fname)
    vid = defvar(ncid, 'p',   rt, d3, 'Pa', 'full pressure (p_phy), input', fname)
    vid = defvar(ncid, 'dz',  rt, d3, 'm', 'layer depth (dz8w, delz), input', fname)
    vid = defvar(ncid, 'rainnc', rt, d2, 'mm', 'accumulated grid-scale precipitation, input', fname)
    vid = defvar(ncid, 'snownc', rt, d2, 'mm', &
                 'accumulated grid-scale snow+ice, input (zero if WRF passed no snow argument)', fname)
    call chk(nf90_enddef(ncid), fname, 'enddef')

    call put3(ncid, fname, 'th',  th,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qv',  qv,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qc',  qc,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qr',  qr,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qi',  qi,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qs',  qs,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'rho', rho, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'pii', pii, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'p',   p,   ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'dz',  dz,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put2(ncid, fname, 'rainnc', rainnc, ims, ime, jms, jme, its, ite, jts, jte)
    if (present(snownc)) then
      call put2(ncid, fname, 'snownc', snownc, ims, ime, jms, jme, its, ite, jts, jte)
    else
      allocate(zero2(ims:ime, jms:jme)); zero2 = 0.0_wp
      call put2(ncid, fname, 'snownc', zero2, ims, ime, jms, jme, its, ite, jts, jte)
      deallocate(zero2)
    end if
    call chk(nf90_close(ncid), fname, 'close')
  end subroutine wrfgpu_capture_wsm5_in

  !> Add the outputs of the same CALL wsm5(...) to its capture file. Call just after it.
  subroutine wrfgpu_capture_wsm5_out(domain_id, itimestep, rank, tile, num_tiles,     &
       th, qv, qc, qr, qi, qs, rainnc, rainncv, sr, snownc, snowncv,                   &
       ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte,                     &
       refl_10cm, re_cloud, re_ice, re_snow, refl_computed, re_computed)
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles
    integer, intent(in) :: ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: th, qv, qc, qr, qi, qs
    real(wp), dimension(ims:ime, jms:jme), intent(in) :: rainnc, rainncv, sr
    real(wp), dimension(ims:ime, jms:jme), intent(in), optional :: snownc, snowncv
    ! optional diagnostics: written only when present and WRF computed them in this call
    ! (refl_10cm: diagflag .and. do_radar_ref==1; re_*: has_reqc, has_reqi, has_reqs all /= 0)
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in), optional :: &
         refl_10cm, re_cloud, re_ice, re_snow
    logical, intent(in), optional :: refl_computed, re_computed
    logical :: w_refl, w_re

    character(len=2048) :: fname
    integer :: ncid, d_we, d_bt, d_sn, vid, rt, d3(3), d2(2)
    real(wp), allocatable :: zero2(:,:)

    w_refl = .false.
    if (present(refl_computed) .and. present(refl_10cm)) w_refl = refl_computed
    w_re = .false.
    if (present(re_computed) .and. present(re_cloud) .and. present(re_ice) .and. present(re_snow)) &
         w_re = re_computed
    fname = wrfgpu_capture_filename('wsm5', domain_id, itimestep, rank, tile, num_tiles)
    call chk(nf90_open(trim(fname), nf90_write, ncid), fname, 'open for outputs')
    call chk(nf90_inq_dimid(ncid, 'west_east', d_we), fname, 'inq_dimid west_east')
    call chk(nf90_inq_dimid(ncid, 'bottom_top', d_bt), fname, 'inq_dimid bottom_top')
    call chk(nf90_inq_dimid(ncid, 'south_north', d_sn), fname, 'inq_dimid south_north')
    d3 = (/ d_we, d_bt, d_sn /)
    d2 = (/ d_we, d_sn /)
    rt = nc_real_type()
    call chk(nf90_redef(ncid), fname, 'redef')
    vid = defvar(ncid, 'th_out', rt, d3, 'K', 'potential temperature after wsm5', fname)
    vid = defvar(ncid, 'qv_out', rt, d3, 'kg kg-1', 'water vapor mixing ratio after wsm5', fname)
    vid = defvar(ncid, 'qc_out', rt, d3, 'kg kg-1', 'cloud water mixing ratio after wsm5', fname)
    vid = defvar(ncid, 'qr_out', rt, d3, 'kg kg-1', 'rain water mixing ratio after wsm5', fname)
    vid = defvar(ncid, 'qi_out', rt, d3, 'kg kg-1', 'cloud ice mixing ratio after wsm5', fname)
    vid = defvar(ncid, 'qs_out', rt, d3, 'kg kg-1', 'snow mixing ratio after wsm5', fname)
    vid = defvar(ncid, 'rainnc_out', rt, d2, 'mm', 'accumulated grid-scale precipitation after wsm5', fname)
    vid = defvar(ncid, 'snownc_out', rt, d2, 'mm', 'accumulated grid-scale snow+ice after wsm5', fname)
    vid = defvar(ncid, 'rainncv_out', rt, d2, 'mm', 'grid-scale precipitation of this step', fname)
    vid = defvar(ncid, 'snowncv_out', rt, d2, 'mm', 'grid-scale snow+ice of this step', fname)
    vid = defvar(ncid, 'sr_out', rt, d2, '1', 'frozen fraction of this step''s precipitation', fname)
    if (w_refl) vid = defvar(ncid, 'refl_10cm_out', rt, d3, 'dBZ', &
         'radar reflectivity (10 cm) computed by wsm5', fname)
    if (w_re) vid = defvar(ncid, 're_cloud_out', rt, d3, 'm', &
         'cloud water effective radius computed by wsm5', fname)
    if (w_re) vid = defvar(ncid, 're_ice_out', rt, d3, 'm', &
         'cloud ice effective radius computed by wsm5', fname)
    if (w_re) vid = defvar(ncid, 're_snow_out', rt, d3, 'm', &
         'snow effective radius computed by wsm5', fname)
    call chk(nf90_enddef(ncid), fname, 'enddef (outputs)')

    call put3(ncid, fname, 'th_out', th, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qv_out', qv, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qc_out', qc, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qr_out', qr, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qi_out', qi, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'qs_out', qs, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put2(ncid, fname, 'rainnc_out', rainnc, ims, ime, jms, jme, its, ite, jts, jte)
    call put2(ncid, fname, 'rainncv_out', rainncv, ims, ime, jms, jme, its, ite, jts, jte)
    call put2(ncid, fname, 'sr_out', sr, ims, ime, jms, jme, its, ite, jts, jte)
    if (present(snownc) .and. present(snowncv)) then
      call put2(ncid, fname, 'snownc_out', snownc, ims, ime, jms, jme, its, ite, jts, jte)
      call put2(ncid, fname, 'snowncv_out', snowncv, ims, ime, jms, jme, its, ite, jts, jte)
    else
      allocate(zero2(ims:ime, jms:jme)); zero2 = 0.0_wp
      call put2(ncid, fname, 'snownc_out', zero2, ims, ime, jms, jme, its, ite, jts, jte)
      call put2(ncid, fname, 'snowncv_out', zero2, ims, ime, jms, jme, its, ite, jts, jte)
      deallocate(zero2)
    end if
    if (w_refl) call put3(ncid, fname, 'refl_10cm_out', refl_10cm, &
         ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    if (w_re) call put3(ncid, fname, 're_cloud_out', re_cloud, &
         ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    if (w_re) call put3(ncid, fname, 're_ice_out', re_ice, &
         ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    if (w_re) call put3(ncid, fname, 're_snow_out', re_snow, &
         ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call chk(nf90_close(ncid), fname, 'close')
  end subroutine wrfgpu_capture_wsm5_out

  !=============================================================================
  ! Positive-definite scalar advection (kernel = "advect_scalar_pd")
  ! One file per RK3 call sequence over all species of one 4-D array.
  ! Region its-4:ite+4, kts:kde, jts-4:jte+4 (clipped to memory bounds).
  !=============================================================================
  subroutine pd_region(ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kde, &
                       i0, i1, j0, j1, k0, k1)
    integer, intent(in) :: ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kde
    integer, intent(out) :: i0, i1, j0, j1, k0, k1
    i0 = max(its - HALO_PD, ims); i1 = min(ite + HALO_PD, ime)
    j0 = max(jts - HALO_PD, jms); j1 = min(jte + HALO_PD, jme)
    k0 = max(kts, kms);           k1 = min(kde, kme)
  end subroutine pd_region

  function pd_kernel_tag(array_name) result(tag)
    character(len=*), intent(in) :: array_name
    character(len=128) :: tag
    if (trim(array_name) == 'moist') then
      tag = 'advect_scalar_pd'
    else
      tag = 'advect_scalar_pd_'//trim(array_name)
    end if
  end function pd_kernel_tag

  !> Create the capture file of one RK3 advect_scalar_pd sequence and write the inputs that are
  !> common to all species (mass fluxes, column mass, map factors, vertical coefficients) and
  !> all attributes. flags(13) = periodic_x, periodic_y, symmetric_xs, symmetric_xe,
  !> symmetric_ys, symmetric_ye, open_xs, open_xe, open_ys, open_ye, specified, nested, polar.
  !> rom must be the wwE array advect_scalar_pd received; only the part WW_SPLIT sets
  !> (its-1:min(ite,ide-1)+1, kts:kte, jts-1:min(jte,jde-1)+1) is stored, the rest is 0.
  subroutine wrfgpu_capture_advect_pd_begin(array_name, domain_id, itimestep, rank, tile, num_tiles, &
       nscalar, scalar_names, field_units,                                                  &
       ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw,                &
       rdx, rdy, dt, dt_rk, time_step, h_sca_adv_order, v_sca_adv_order, flags, spec_zone, &
       ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte)
    character(len=*), intent(in) :: array_name, scalar_names, field_units
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles, nscalar
    integer, intent(in) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: ru, rv, rom
    real(wp), dimension(ims:ime, jms:jme), intent(in) :: mut, mub, mu_old, msftx, msfty
    real(wp), dimension(kms:kme), intent(in) :: c1, c2, fzm, fzp, rdzw
    real(wp), intent(in) :: rdx, rdy, dt, dt_rk
    integer, intent(in) :: time_step, h_sca_adv_order, v_sca_adv_order, spec_zone
    logical, intent(in) :: flags(13)

    character(len=*), parameter :: flag_names(13) = (/ 'periodic_x  ', 'periodic_y  ', &
         'symmetric_xs', 'symmetric_xe', 'symmetric_ys', 'symmetric_ye', 'open_xs     ', &
         'open_xe     ', 'open_ys     ', 'open_ye     ', 'specified   ', 'nested      ', 'polar       ' /)
    character(len=2048) :: fname
    integer :: ncid, d_we, d_bt, d_sn, d_sc, vid, rt, d3(3), d4(4), d2(2), d1(1), n, c4(4)
    integer :: i0, i1, j0, j1, k0, k1, wi0, wi1, wj0, wj1, wk1
    real(wp), allocatable :: rom_s(:,:,:)

    call pd_region(ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kde, i0, i1, j0, j1, k0, k1)
    fname = wrfgpu_capture_filename(trim(pd_kernel_tag(array_name)), domain_id, itimestep, rank, &
                                    tile, num_tiles)
    call chk(nf90_create(trim(fname), ior(nf90_netcdf4, nf90_clobber), ncid), fname, 'create')
    call chk(nf90_def_dim(ncid, 'scalar', nscalar, d_sc), fname, 'def_dim scalar')
    call chk(nf90_def_dim(ncid, 'west_east', i1 - i0 + 1, d_we), fname, 'def_dim west_east')
    call chk(nf90_def_dim(ncid, 'bottom_top_stag', k1 - k0 + 1, d_bt), fname, 'def_dim bottom_top_stag')
    call chk(nf90_def_dim(ncid, 'south_north', j1 - j0 + 1, d_sn), fname, 'def_dim south_north')
    d4 = (/ d_we, d_bt, d_sn, d_sc /)
    d3 = (/ d_we, d_bt, d_sn /)
    d2 = (/ d_we, d_sn /)
    d1 = (/ d_bt /)
    rt = nc_real_type()

    call common_globals(ncid, fname, 'advect_scalar_pd', itimestep, dt, ids, ide, jds, jde, kds, kde, &
                        ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte, i0, j0, k0, &
                        domain_id, rank, tile, num_tiles)
    call att_s(ncid, 'scalar_array', trim(array_name), fname)
    call att_s(ncid, 'scalar_names', trim(scalar_names), fname)
    call att_r(ncid, 'rdx', rdx, fname)
    call att_r(ncid, 'rdy', rdy, fname)
    call att_r(ncid, 'dt_rk', dt_rk, fname)
    call att_i(ncid, 'time_step', time_step, fname)
    call att_i(ncid, 'h_sca_adv_order', h_sca_adv_order, fname)
    call att_i(ncid, 'v_sca_adv_order', v_sca_adv_order, fname)
    do n = 1, 13
      call att_l(ncid, trim(flag_names(n)), flags(n), fname)
    end do
    call att_i(ncid, 'spec_zone', spec_zone, fname)
    call att_i(ncid, 'tenddec', 0, fname)

    ! one chunk per species: each species is written once, by its own call (no chunk rewrites)
    c4 = (/ i1 - i0 + 1, k1 - k0 + 1, j1 - j0 + 1, 1 /)
    vid = defvar(ncid, 'field', rt, d4, field_units, &
         'scalar passed to advect_scalar_pd (RK stage-2 value), per species', fname, c4)
    vid = defvar(ncid, 'field_old', rt, d4, field_units, &
         'scalar_old passed to advect_scalar_pd (time n plus physics tendency, after rk_update_scalar_pd)', fname, c4)
    vid = defvar(ncid, 'ru', rt, d3, 'Pa m s-1', 'ru_m, time-averaged mass-coupled x flux (x-staggered)', fname)
    vid = defvar(ncid, 'rv', rt, d3, 'Pa m s-1', 'rv_m, time-averaged mass-coupled y flux (y-staggered)', fname)
    vid = defvar(ncid, 'rom', rt, d3, 'Pa s-1', &
         'wwE (explicit part of ww_m, z-staggered); zero outside the range WW_SPLIT sets', fname)
    vid = defvar(ncid, 'mut', rt, d2, 'Pa', 'muts, full column dry-air mass (time n+1 estimate)', fname)
    vid = defvar(ncid, 'mub', rt, d2, 'Pa', 'mub, base-state column dry-air mass', fname)
    vid = defvar(ncid, 'mu_old', rt, d2, 'Pa', 'mu_1, perturbation column dry-air mass at time n', fname)
    vid = defvar(ncid, 'msftx', rt, d2, '1', 'map scale factor at mass points, x', fname)
    vid = defvar(ncid, 'msfty', rt, d2, '1', 'map scale factor at mass points, y', fname)
    vid = defvar(ncid, 'c1', rt, d1, '1', 'c1h, hybrid coordinate coefficient (half levels)', fname)
    vid = defvar(ncid, 'c2', rt, d1, 'Pa', 'c2h, hybrid coordinate coefficient (half levels)', fname)
    vid = defvar(ncid, 'fzm', rt, d1, '1', 'fnm, vertical interpolation weight', fname)
    vid = defvar(ncid, 'fzp', rt, d1, '1', 'fnp, vertical interpolation weight', fname)
    vid = defvar(ncid, 'rdzw', rt, d1, '1', 'rdnw, inverse eta-level thickness', fname)
    vid = defvar(ncid, 'tendency_out', rt, d4, 'Pa '//trim(field_units)//' s-1', &
         'advect_tend after advect_scalar_pd (mass-coupled, divided by msfty); '// &
         'stored on mass points of the tile its:min(ite,ide-1), kts:min(kte,kde-1), jts:min(jte,jde-1), 0 elsewhere', &
         fname, c4)
    call chk(nf90_enddef(ncid), fname, 'enddef')

    call put3(ncid, fname, 'ru', ru, ims, ime, kms, kme, jms, jme, i0, i1, k0, k1, j0, j1)
    call put3(ncid, fname, 'rv', rv, ims, ime, kms, kme, jms, jme, i0, i1, k0, k1, j0, j1)
    ! wwE: keep only what WW_SPLIT defined (the rest of that work array is undefined memory)
    allocate(rom_s(i0:i1, k0:k1, j0:j1))
    rom_s = 0.0_wp
    wi0 = max(its - 1, i0); wi1 = min(min(ite, ide - 1) + 1, i1)
    wj0 = max(jts - 1, j0); wj1 = min(min(jte, jde - 1) + 1, j1)
    wk1 = min(kte, k1)
    rom_s(wi0:wi1, k0:wk1, wj0:wj1) = rom(wi0:wi1, k0:wk1, wj0:wj1)
    call chk(nf90_inq_varid(ncid, 'rom', vid), fname, 'inq_varid rom')
    call chk(nf90_put_var(ncid, vid, rom_s), fname, 'put_var rom')
    deallocate(rom_s)
    call put2(ncid, fname, 'mut', mut, ims, ime, jms, jme, i0, i1, j0, j1)
    call put2(ncid, fname, 'mub', mub, ims, ime, jms, jme, i0, i1, j0, j1)
    call put2(ncid, fname, 'mu_old', mu_old, ims, ime, jms, jme, i0, i1, j0, j1)
    call put2(ncid, fname, 'msftx', msftx, ims, ime, jms, jme, i0, i1, j0, j1)
    call put2(ncid, fname, 'msfty', msfty, ims, ime, jms, jme, i0, i1, j0, j1)
    call put1(ncid, fname, 'c1', c1, kms, kme, k0, k1)
    call put1(ncid, fname, 'c2', c2, kms, kme, k0, k1)
    call put1(ncid, fname, 'fzm', fzm, kms, kme, k0, k1)
    call put1(ncid, fname, 'fzp', fzp, kms, kme, k0, k1)
    call put1(ncid, fname, 'rdzw', rdzw, kms, kme, k0, k1)
    call chk(nf90_close(ncid), fname, 'close')
  end subroutine wrfgpu_capture_advect_pd_begin

  !> Write species number iscalar (1-based position along dimension `scalar`) of the
  !> advect_scalar_pd capture begun by wrfgpu_capture_advect_pd_begin: field and field_old as
  !> advect_scalar_pd received them, and the advection tendency it returned.
  subroutine wrfgpu_capture_advect_pd_scalar(array_name, domain_id, itimestep, rank, tile, num_tiles, &
       iscalar, field, field_old, tendency, ide, jde, kde, ims, ime, jms, jme, kms, kme,    &
       its, ite, jts, jte, kts, kte)
    character(len=*), intent(in) :: array_name
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles, iscalar
    integer, intent(in) :: ide, jde, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: field, field_old, tendency

    character(len=2048) :: fname
    integer :: ncid, vid, i0, i1, j0, j1, k0, k1, ti1, tj1, tk1, start(4), cnt(4)
    real(wp), allocatable :: t_s(:,:,:)

    call pd_region(ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kde, i0, i1, j0, j1, k0, k1)
    fname = wrfgpu_capture_filename(trim(pd_kernel_tag(array_name)), domain_id, itimestep, rank, &
                                    tile, num_tiles)
    call chk(nf90_open(trim(fname), nf90_write, ncid), fname, 'open for scalar')
    start = (/ 1, 1, 1, iscalar /)
    cnt = (/ i1 - i0 + 1, k1 - k0 + 1, j1 - j0 + 1, 1 /)
    call chk(nf90_inq_varid(ncid, 'field', vid), fname, 'inq_varid field')
    call chk(nf90_put_var(ncid, vid, field(i0:i1, k0:k1, j0:j1), start=start, count=cnt), &
             fname, 'put_var field')
    call chk(nf90_inq_varid(ncid, 'field_old', vid), fname, 'inq_varid field_old')
    call chk(nf90_put_var(ncid, vid, field_old(i0:i1, k0:k1, j0:j1), start=start, count=cnt), &
             fname, 'put_var field_old')
    allocate(t_s(i0:i1, k0:k1, j0:j1))
    t_s = 0.0_wp
    ti1 = min(ite, ide - 1); tj1 = min(jte, jde - 1); tk1 = min(kte, kde - 1, k1)
    t_s(its:ti1, k0:tk1, jts:tj1) = tendency(its:ti1, k0:tk1, jts:tj1)
    call chk(nf90_inq_varid(ncid, 'tendency_out', vid), fname, 'inq_varid tendency_out')
    call chk(nf90_put_var(ncid, vid, t_s, start=start, count=cnt), fname, 'put_var tendency_out')
    deallocate(t_s)
    call chk(nf90_close(ncid), fname, 'close')
  end subroutine wrfgpu_capture_advect_pd_scalar

  !=============================================================================
  ! RADM2SORG KPP chemistry (kernel = "radm2sorg_kpp"), region its:ite, kts:kte, jts:jte.
  ! The hook in chem/chem_driver.F calls this twice around kpp_mechanism_driver: with
  ! after = .false. it creates the file and writes the inputs, with after = .true. it adds
  ! the chem species and radicals after the call (_out) and vdrog3_out.
  !=============================================================================
  subroutine wrfgpu_capture_radm2sorg(after, domain_id, itimestep, rank, tile, num_tiles, dt, &
       chem, num_chem, p_chem,                                                             &
       o1d, o3p, xno2, tolp, xylp, oltp, oln, xo2, ol2p, hc5p, hc8p, tco3, olip, ketp,      &
       mo2, hc3p, ethp, qv, t_phy, p_phy, rho_phy,                                          &
       ph_no2, ph_o31d, ph_o33p, ph_hno2, ph_hno3, ph_hno4, ph_no3o2, ph_no3o, ph_h2o2,     &
       ph_ch2om, ph_ch2or, ph_ch3cho, ph_ch3o2h, ph_ch3coch3, ph_ch3coo2h, ph_ch3coc2h5,    &
       ph_hcocho, ph_hcochob, ph_ch3cocho, ph_hcochest, ph_ch3ono2,                         &
       vdrog3, ldrog, dtstepc, p_nu0,                                                       &
       ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte)
    logical, intent(in) :: after
    integer, intent(in) :: domain_id, itimestep, rank, tile, num_tiles, num_chem, ldrog, p_nu0
    integer, intent(in) :: p_chem(41)
    integer, intent(in) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    real(wp), intent(in) :: dt, dtstepc
    real(wp), intent(in) :: chem(ims:ime, kms:kme, jms:jme, num_chem)
    real(wp), dimension(ims:ime, kms:kme, jms:jme), intent(in) :: &
         o1d, o3p, xno2, tolp, xylp, oltp, oln, xo2, ol2p, hc5p, hc8p, tco3, olip, ketp,     &
         mo2, hc3p, ethp, qv, t_phy, p_phy, rho_phy,                                          &
         ph_no2, ph_o31d, ph_o33p, ph_hno2, ph_hno3, ph_hno4, ph_no3o2, ph_no3o, ph_h2o2,     &
         ph_ch2om, ph_ch2or, ph_ch3cho, ph_ch3o2h, ph_ch3coch3, ph_ch3coo2h, ph_ch3coc2h5,    &
         ph_hcocho, ph_hcochob, ph_ch3cocho, ph_hcochest, ph_ch3ono2
    real(wp), intent(in) :: vdrog3(ims:ime, kms:kme, jms:jme, ldrog)

    character(len=2048) :: fname
    character(len=16) :: sfx
    integer :: ncid, d_we, d_bt, d_sn, d_l, vid, rt, d3(3), d4(4), q
    character(len=8) :: when

    fname = wrfgpu_capture_filename('radm2sorg_kpp', domain_id, itimestep, rank, tile, num_tiles)
    rt = nc_real_type()
    sfx = ''
    when = 'before'
    if (after) then
      sfx = '_out'
      when = 'after'
    end if
    if (.not. after) then
      call chk(nf90_create(trim(fname), ior(nf90_netcdf4, nf90_clobber), ncid), fname, 'create')
      call chk(nf90_def_dim(ncid, 'west_east', ite - its + 1, d_we), fname, 'def_dim west_east')
      call chk(nf90_def_dim(ncid, 'bottom_top', kte - kts + 1, d_bt), fname, 'def_dim bottom_top')
      call chk(nf90_def_dim(ncid, 'south_north', jte - jts + 1, d_sn), fname, 'def_dim south_north')
      call chk(nf90_def_dim(ncid, 'ldrog', ldrog, d_l), fname, 'def_dim ldrog')
      call common_globals(ncid, fname, 'radm2sorg_kpp', itimestep, dt, ids, ide, jds, jde, kds, kde, &
                          ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte, its, jts, kts, &
                          domain_id, rank, tile, num_tiles)
      call att_r(ncid, 'dtstepc', dtstepc, fname)
      call att_i(ncid, 'p_nu0', p_nu0, fname)
      ! the solver controls of WRF's generated radm2sorg_interface (kpp_ctrl_default.inc)
      call att_s(ncid, 'method', 'ros3', fname)
      call att_r(ncid, 'atol', 1.0_wp, fname)
      call att_r(ncid, 'rtol', 1.0e-3_wp, fname)
      call att_s(ncid, 'hstart', '0.01*dtstepc', fname)
    else
      call chk(nf90_open(trim(fname), nf90_write, ncid), fname, 'open for outputs')
      call chk(nf90_inq_dimid(ncid, 'west_east', d_we), fname, 'inq_dimid west_east')
      call chk(nf90_inq_dimid(ncid, 'bottom_top', d_bt), fname, 'inq_dimid bottom_top')
      call chk(nf90_inq_dimid(ncid, 'south_north', d_sn), fname, 'inq_dimid south_north')
      call chk(nf90_inq_dimid(ncid, 'ldrog', d_l), fname, 'inq_dimid ldrog')
      call chk(nf90_redef(ncid), fname, 'redef')
    end if
    d3 = (/ d_we, d_bt, d_sn /)
    d4 = (/ d_we, d_bt, d_sn, d_l /)
    do q = 1, 41
      vid = defvar(ncid, trim(RADM2SORG_CHEM(q))//trim(sfx), rt, d3, 'ppmv', &
                   'chem species '//trim(RADM2SORG_CHEM(q))//' '//trim(when)// &
                   ' kpp_mechanism_driver', fname)
    end do
    do q = 1, 17
      vid = defvar(ncid, trim(RADM2SORG_RAD(q))//trim(sfx), rt, d3, 'ppm', &
                   'radical grid%'//trim(RADM2SORG_RAD(q))//' '//trim(when)// &
                   ' kpp_mechanism_driver', fname)
    end do
    if (.not. after) then
      vid = defvar(ncid, 'qv', rt, d3, 'kg kg-1', 'water vapor mixing ratio moist(:,:,:,p_qv)', fname)
      vid = defvar(ncid, 't_phy', rt, d3, 'K', 'temperature', fname)
      vid = defvar(ncid, 'p_phy', rt, d3, 'Pa', 'pressure', fname)
      vid = defvar(ncid, 'rho_phy', rt, d3, 'kg m-3', 'density (rho of chem_driver)', fname)
      do q = 1, 21
        vid = defvar(ncid, trim(RADM2SORG_PH(q)), rt, d3, 'min-1', 'photolysis rate grid%'// &
                     trim(RADM2SORG_PH(q)), fname)
      end do
    else
      vid = defvar(ncid, 'vdrog3_out', rt, d4, 'ppm', &
                   'SOA precursor production over dtstepc (vdrog3) after kpp_mechanism_driver', fname)
    end if
    call chk(nf90_enddef(ncid), fname, 'enddef')

    do q = 1, 41
      call put3(ncid, fname, trim(RADM2SORG_CHEM(q))//trim(sfx), chem(:, :, :, p_chem(q)), &
                ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    end do
    call put3(ncid, fname, 'o1d'//trim(sfx),  o1d,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'o3p'//trim(sfx),  o3p,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'xno2'//trim(sfx), xno2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'tolp'//trim(sfx), tolp, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'xylp'//trim(sfx), xylp, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'oltp'//trim(sfx), oltp, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'oln'//trim(sfx),  oln,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'xo2'//trim(sfx),  xo2,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'ol2p'//trim(sfx), ol2p, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'hc5p'//trim(sfx), hc5p, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'hc8p'//trim(sfx), hc8p, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'tco3'//trim(sfx), tco3, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'olip'//trim(sfx), olip, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'ketp'//trim(sfx), ketp, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'mo2'//trim(sfx),  mo2,  ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'hc3p'//trim(sfx), hc3p, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    call put3(ncid, fname, 'ethp'//trim(sfx), ethp, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    if (.not. after) then
      call put3(ncid, fname, 'qv', qv, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 't_phy', t_phy, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'p_phy', p_phy, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'rho_phy', rho_phy, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_no2', ph_no2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_o31d', ph_o31d, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_o33p', ph_o33p, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hno2', ph_hno2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hno3', ph_hno3, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hno4', ph_hno4, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_no3o2', ph_no3o2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_no3o', ph_no3o, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_h2o2', ph_h2o2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch2om', ph_ch2om, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch2or', ph_ch2or, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3cho', ph_ch3cho, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3o2h', ph_ch3o2h, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3coch3', ph_ch3coch3, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3coo2h', ph_ch3coo2h, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3coc2h5', ph_ch3coc2h5, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hcocho', ph_hcocho, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hcochob', ph_hcochob, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3cocho', ph_ch3cocho, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_hcochest', ph_hcochest, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
      call put3(ncid, fname, 'ph_ch3ono2', ph_ch3ono2, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    else
      call chk(nf90_inq_varid(ncid, 'vdrog3_out', vid), fname, 'inq_varid vdrog3_out')
      call chk(nf90_put_var(ncid, vid, vdrog3(its:ite, kts:kte, jts:jte, 1:ldrog)), fname, 'put_var vdrog3_out')
    end if
    call chk(nf90_close(ncid), fname, 'close')
  end subroutine wrfgpu_capture_radm2sorg

end module module_wrfgpu_capture
