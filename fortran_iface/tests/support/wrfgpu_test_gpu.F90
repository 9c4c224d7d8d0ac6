! wrfgpu_test_gpu.F90 - for the Fortran test programs: whether the CUDA runtime in this process
! reports a device, which is what WRFGPU_BACKEND=auto goes by. The runtime is looked up with
! dlsym(RTLD_DEFAULT = NULL, name): it is found wherever libwrfgpu brought it in, and not at
! all in a build without CUDA (then 'auto' can only mean the CPU).
! host_locked(a): whether the CUDA runtime sees the host array a as page-locked
! (cudaHostGetFlags succeeds); false without CUDA.
module wrfgpu_test_gpu
  use iso_c_binding, only: c_ptr, c_funptr, c_char, c_int, c_null_ptr, c_null_char, &
                           c_associated, c_f_procpointer, c_loc
  implicit none
  private
  public :: gpu_visible, host_locked
  interface
    function c_dlsym(handle, symbol) bind(C, name='dlsym') result(f)
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: symbol(*)
      type(c_funptr) :: f
    end function c_dlsym
  end interface
  abstract interface
    function device_count_fn(n) bind(C) result(err)
      import :: c_int
      integer(c_int), intent(out) :: n
      integer(c_int) :: err
    end function device_count_fn
    function host_get_flags_fn(flags, host) bind(C) result(err)
      import :: c_int, c_ptr
      integer(c_int), intent(out) :: flags
      type(c_ptr), value :: host
      integer(c_int) :: err
    end function host_get_flags_fn
  end interface
contains
  logical function gpu_visible()
    type(c_funptr) :: f
    procedure(device_count_fn), pointer :: device_count
    integer(c_int) :: n
    gpu_visible = .false.
    f = c_dlsym(c_null_ptr, 'cudaGetDeviceCount' // c_null_char)
    if (.not. c_associated(f)) return
    call c_f_procpointer(f, device_count)
    n = 0
    if (device_count(n) /= 0) return  ! not cudaSuccess: gpu_count() counts no GPU either
    gpu_visible = n > 0
  end function gpu_visible

  logical function host_locked(a)
    real, intent(in), target :: a(*)
    type(c_funptr) :: f
    procedure(host_get_flags_fn), pointer :: get_flags
    integer(c_int) :: flags
    host_locked = .false.
    f = c_dlsym(c_null_ptr, 'cudaHostGetFlags' // c_null_char)
    if (.not. c_associated(f)) return
    call c_f_procpointer(f, get_flags)
    host_locked = get_flags(flags, c_loc(a(1))) == 0
  end function host_locked
end module wrfgpu_test_gpu
