!-------------------------------------------------------------------------------
! wrf_fatal_fortran: a stand-in for wrf.exe that fails inside wrfgpu, for
! tests/driver/wrf_fatal.sh. It defines wrf_error_fatal as serial WRF does
! (frame/module_wrf_error.F: the FATAL block on stdout, then wrf_abort, whose serial
! version ends with STOP, i.e. exit status 0), so the library's stops go through it.
!   wrf_fatal_fortran nan      wsm5_gpu without stat, NaN in qv(its,kts,jts)
!   wrf_fatal_fortran nanstat  the same with stat: no stop, stat printed
!   wrf_fatal_fortran init     wsm5_gpu_init, the symbol WRF's module_wrf_top.F calls
!-------------------------------------------------------------------------------
program wrf_fatal_fortran
  use module_wrfgpu_wsm5
  implicit none
  interface
    subroutine wsm5_gpu_init(myproc, nproc, mydevice)
      integer :: myproc, nproc, mydevice
    end subroutine wsm5_gpu_init
  end interface
  integer, parameter :: ni = 4, nj = 3, nk = 5
  real, dimension(ni, nk + 1, nj) :: th, qv, qc, qr, qi, qs, den, pii, p, dz, re, refl
  real, dimension(ni, nj) :: rain, rainncv, snow, snowncv, sr
  character(len=16) :: what
  integer :: st, myproc = 0, nproc = 1, mydevice = 0

  call get_command_argument(1, what)
  select case (trim(what))
  case ('init')
    call wsm5_gpu_init(myproc, nproc, mydevice)
    print '(a)', 'wsm5_gpu_init returned'
  case ('nan', 'nanstat')
    th = 300.; qv = 1.e-3; qc = 0.; qr = 0.; qi = 0.; qs = 0.; den = 1.; pii = 1.
    p = 9.e4; dz = 100.; re = 0.; refl = 0.; rain = 0.; rainncv = 0.; snow = 0.; snowncv = 0.
    sr = 0.
    qv(1, 1, 1) = ieee_nan()
    call wrfgpu_wsm5_backend('cpu')
    if (trim(what) == 'nan') then
      call run()
      print '(a)', 'wsm5_gpu returned'
    else
      call run(st)
      print '(a,i0)', 'wsm5_gpu returned stat = ', st
    end if
  case default
    print '(a)', 'usage: wrf_fatal_fortran nan|nanstat|init'
    error stop 3
  end select

contains

  subroutine run(stat)
    integer, optional, intent(out) :: stat
    call wsm5_gpu(th, qv, qc, qr, qi, qs, den, pii, p, dz, 60., 9.81, 1004.5, 1846.4, 287.,  &
                  461.6, 273.15, 0.608, 0.622, 1.e-15, 2.85e6, 2.5e6, 3.5e5, 1.28, 1000.,    &
                  4190., 2106., 610.78, rain, rainncv, snow, snowncv, sr, refl, .false., 0,   &
                  0, 0, 0, re, re, re, 1, ni + 1, 1, nj + 1, 1, nk + 1, 1, ni, 1, nj, 1, nk + 1, &
                  1, ni, 1, nj, 1, nk, stat)
  end subroutine run

  real function ieee_nan()
    use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
    ieee_nan = ieee_value(1., ieee_quiet_nan)
  end function ieee_nan

end program wrf_fatal_fortran

! As serial WRF v4.7.1: wrf_error_fatal -> wrf_error_fatal3 (the FATAL block) -> wrf_abort (STOP).
subroutine wrf_error_fatal(str)
  implicit none
  character(len=*) :: str
  print '(a)', '-------------- FATAL CALLED ---------------'
  print '(a)', str
  print '(a)', '-------------------------------------------'
  flush(6)
  stop
end subroutine wrf_error_fatal
