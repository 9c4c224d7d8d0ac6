! wrfgpu_test_gpu.F90 - for the Fortran test programs: whether the CUDA runtime in this process
! reports a device, which is what WRFGPU_BACKEND=auto goes by. The runtime is looked up with
! dlsym(RTLD_DEFAULT = NULL, name): it is found wherever libwrfgpu brought it in, and not at
! all in a build without CUDA (then 'auto' can only mean the CPU).
module wrfgpu_test_gpu
  use iso_c_binding, only: c_ptr, c_funptr, c_char, c_int, c_null_ptr, c_null_char, &
                           c_associated, c_f_procpointer
  implicit none
  private
  public :: gpu_visible
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
end module wrfgpu_test_gpu
