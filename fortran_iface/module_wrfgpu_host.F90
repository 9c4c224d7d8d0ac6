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
!
! solve_em's previous time level of the 4-D arrays (moist_old, scalar_old, tracer_old,
! chem_old) are automatic arrays there (Registry i1), allocated again at every call, so they
! cannot be registered. With wrf_patch 0005 solve_em uses this module's arrays under those
! names instead (USE module_wrfgpu_host, ONLY : moist_old => wrfgpu_moist_old, ...), and
! calls, before it uses them,
!   CALL wrfgpu_host_keep_old(grid%id, grid%sm31, grid%em31, grid%sm32, grid%em32,
!                             grid%sm33, grid%em33, num_moist, num_scalar, num_tracer, num_chem)
! which makes them domain grid%id's arrays: each domain has its own four, allocated at its
! first call with the bounds of its automatic arrays and kept for the run (MOVE_ALLOC in and
! out, so they stay where they are and are registered once). They are allocatable, not
! pointers, because WRF passes their elements to explicit-shape dummies (sequence
! association). Their values are whatever the domain's last step left; an automatic array's
! are undefined, and solve_em writes these arrays before it reads them. The memory is one more
! copy of each 4-D array per domain, held between steps (WRF's automatic arrays exist only
! during the step, one domain at a time).
!-------------------------------------------------------------------------------
MODULE module_wrfgpu_host
  USE, INTRINSIC :: ISO_C_BINDING
  IMPLICIT NONE
  PRIVATE
  PUBLIC :: wrfgpu_host_register, wrfgpu_host_unregister, wrfgpu_host_keep_old
  ! (fortran_iface/bridge.cpp) the Fortran wrappers' way to stop the run: with `status` and
  ! this thread's last failure line, or with `message` (n characters) when n > 0
  PUBLIC :: wrfgpu_bridge_stop

  ! The arrays of the domain whose solve_em runs (wrfgpu_host_keep_old)
  REAL, ALLOCATABLE, SAVE, PUBLIC :: wrfgpu_moist_old(:,:,:,:), wrfgpu_scalar_old(:,:,:,:), &
                                     wrfgpu_tracer_old(:,:,:,:), wrfgpu_chem_old(:,:,:,:)
  ! Every other domain's, while another one runs
  TYPE old_set
    INTEGER :: id = 0                    ! 0: an unused slot
    REAL, ALLOCATABLE :: moist(:,:,:,:), scalar(:,:,:,:), tracer(:,:,:,:), chem(:,:,:,:)
  END TYPE old_set
  INTEGER, PARAMETER :: max_domains = 64
  TYPE(old_set), SAVE :: held(max_domains)
  INTEGER, SAVE :: active_id = 0          ! the domain whose arrays are wrfgpu_*_old now

  INTERFACE
    SUBROUTINE wrfgpu_bridge_stop(status, message, n) BIND(C, NAME='wrfgpu_bridge_stop')
      IMPORT :: C_INT, C_CHAR
      INTEGER(C_INT), VALUE :: status, n
      CHARACTER(KIND=C_CHAR), INTENT(IN) :: message(*)
    END SUBROUTINE wrfgpu_bridge_stop
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

  ! wrfgpu_*_old := domain id's arrays with bounds (i1:i2, k1:k2, j1:j2, 1:n_*) (header).
  SUBROUTINE wrfgpu_host_keep_old(id, i1, i2, k1, k2, j1, j2, n_moist, n_scalar, n_tracer, n_chem)
    INTEGER, INTENT(IN) :: id, i1, i2, k1, k2, j1, j2, n_moist, n_scalar, n_tracer, n_chem
    INTEGER :: s
    IF (id /= active_id) THEN
      IF (active_id /= 0) THEN          ! the last domain's arrays back to its slot
        s = slot(active_id)
        CALL MOVE_ALLOC(wrfgpu_moist_old, held(s)%moist)
        CALL MOVE_ALLOC(wrfgpu_scalar_old, held(s)%scalar)
        CALL MOVE_ALLOC(wrfgpu_tracer_old, held(s)%tracer)
        CALL MOVE_ALLOC(wrfgpu_chem_old, held(s)%chem)
      END IF
      s = slot(id)
      CALL MOVE_ALLOC(held(s)%moist, wrfgpu_moist_old)
      CALL MOVE_ALLOC(held(s)%scalar, wrfgpu_scalar_old)
      CALL MOVE_ALLOC(held(s)%tracer, wrfgpu_tracer_old)
      CALL MOVE_ALLOC(held(s)%chem, wrfgpu_chem_old)
      active_id = id
    END IF
    CALL fit(wrfgpu_moist_old, n_moist)
    CALL fit(wrfgpu_scalar_old, n_scalar)
    CALL fit(wrfgpu_tracer_old, n_tracer)
    CALL fit(wrfgpu_chem_old, n_chem)
  CONTAINS
    ! a with exactly these bounds: kept if it has them, else allocated (again)
    SUBROUTINE fit(a, n4)
      REAL, ALLOCATABLE, INTENT(INOUT) :: a(:,:,:,:)
      INTEGER, INTENT(IN) :: n4
      IF (ALLOCATED(a)) THEN
        IF (ALL(LBOUND(a) == (/ i1, k1, j1, 1 /)) .AND. ALL(UBOUND(a) == (/ i2, k2, j2, n4 /))) RETURN
        IF (SIZE(a) > 0) CALL wrfgpu_host_unregister(a)
        DEALLOCATE(a)
      END IF
      ALLOCATE(a(i1:i2, k1:k2, j1:j2, n4))
    END SUBROUTINE fit
  END SUBROUTINE wrfgpu_host_keep_old

  ! The slot of domain id in held (a free one the first time); more than max_domains domains
  ! stop the run.
  INTEGER FUNCTION slot(id)
    INTEGER, INTENT(IN) :: id
    CHARACTER(LEN=96) :: m
    DO slot = 1, max_domains
      IF (held(slot)%id == id) RETURN
    END DO
    DO slot = 1, max_domains
      IF (held(slot)%id == 0) THEN
        held(slot)%id = id
        RETURN
      END IF
    END DO
    WRITE (m, '(A,I0,A,I0,A)') 'wrfgpu_host_keep_old: domain ', id, ': more than ', max_domains, ' domains'
    CALL wrfgpu_bridge_stop(1_C_INT, TRIM(m), INT(LEN_TRIM(m), C_INT))
  END FUNCTION slot

END MODULE module_wrfgpu_host
