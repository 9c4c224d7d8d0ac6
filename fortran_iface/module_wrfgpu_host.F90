!-------------------------------------------------------------------------------
! module_wrfgpu_host: page-locks WRF's own long-lived arrays for the GPU hooks.
!
! A hook copies a page-locked array straight to and from the GPU; a pageable one goes through
! the library's page-locked staging buffers (one more host copy each way). WRF allocates its
! grid state once per domain, so wrf_patch registers the arrays the batched advection reads
! (solve_em.F, before the Runge-Kutta loop):
!   CALL wrfgpu_host_register('moist', moist, SIZE(moist))
! The first call page-locks the array (cudaHostRegister); later calls for the same array are
! a lookup. Registrations are released when the run ends.
!
! Only for arrays that are neither freed nor moved while the run uses them: pass a contiguous
! array (an explicit-shape dummy, an allocatable, or a whole contiguous pointer array), never an
! array section or an automatic array that is allocated again in every call (WRF's i1 arrays),
! because the pages a freed array leaves would stay pinned in its place. Call
! wrfgpu_host_unregister before deallocating a registered array.
!
! Under WRFGPU_BACKEND=cpu, or with WRFGPU_HOST_REGISTER=0, nothing is registered. A failed registration (e.g. the memlock
! limit, `ulimit -l`) is said once on stderr, naming the array, and its copies stay staged.
!-------------------------------------------------------------------------------
MODULE module_wrfgpu_host
  USE, INTRINSIC :: ISO_C_BINDING
  IMPLICIT NONE
  PRIVATE
  PUBLIC :: wrfgpu_host_register, wrfgpu_host_unregister

  INTERFACE
    SUBROUTINE wrfgpu_host_register_c(a, bytes, what, nwhat, backend) &
         BIND(C, NAME='wrfgpu_host_register')
      IMPORT :: C_FLOAT, C_SIZE_T, C_CHAR, C_INT
      REAL(C_FLOAT), INTENT(IN) :: a(*)
      INTEGER(C_SIZE_T), VALUE :: bytes
      CHARACTER(KIND=C_CHAR), INTENT(IN) :: what(*)
      INTEGER(C_INT), VALUE :: nwhat, backend
    END SUBROUTINE wrfgpu_host_register_c
    SUBROUTINE wrfgpu_host_unregister_c(a) BIND(C, NAME='wrfgpu_host_unregister')
      IMPORT :: C_FLOAT
      REAL(C_FLOAT), INTENT(IN) :: a(*)
    END SUBROUTINE wrfgpu_host_unregister_c
  END INTERFACE

CONTAINS

  ! a: the array (its first element), n: its number of elements, what: its name for messages.
  ! backend: as the hooks' (0 or absent: WRFGPU_BACKEND, else gpu; 1 cpu: nothing is done).
  ! (One specific routine, not a generic: a generic would not take WRF's 4-D arrays for a(*).)
  SUBROUTINE wrfgpu_host_register(what, a, n, backend)
    CHARACTER(LEN=*), INTENT(IN) :: what
    REAL, INTENT(IN) :: a(*)
    INTEGER, INTENT(IN) :: n
    INTEGER, INTENT(IN), OPTIONAL :: backend
    INTEGER(C_INT) :: b
    IF (n <= 0) RETURN
    b = 0
    IF (PRESENT(backend)) b = backend
    CALL wrfgpu_host_register_c(a, INT(n, C_SIZE_T) * C_SIZEOF(a(1)), what, &
                                INT(LEN(what), C_INT), b)
  END SUBROUTINE wrfgpu_host_register

  ! Before a registered array is deallocated (nothing happens for one that is not registered).
  SUBROUTINE wrfgpu_host_unregister(a)
    REAL, INTENT(IN) :: a(*)
    CALL wrfgpu_host_unregister_c(a)
  END SUBROUTINE wrfgpu_host_unregister

END MODULE module_wrfgpu_host
