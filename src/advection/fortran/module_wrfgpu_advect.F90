!-------------------------------------------------------------------------------
! module_wrfgpu_advect: Fortran binding of wrfgpu's scalar advection
! (WRF's advect_scalar_pd for the last Runge-Kutta step, advect_scalar for RK1/RK2,
! h_sca_adv_order=5, v_sca_adv_order=3), for all species of a WRF 4-D array at once.
!
! No copies: the 4-D arrays are passed by their first element, so
!   CALL wrfgpu_advect(1, num_3d_m-PARAM_FIRST_SCALAR+1,                      &
!        moist(ims,kms,jms,PARAM_FIRST_SCALAR), moist_old(ims,kms,jms,PARAM_FIRST_SCALAR), &
!        advect_tend4(ims,kms,jms,1), ...)
! advects every moist species in one call (solve_em.F, before moist_variable_loop), and
!   CALL wrfgpu_advect(1, 1, scalar(ims,kms,jms,im), scalar_old(ims,kms,jms,im),  &
!        advect_tend(ims,kms,jms), h_tendency, z_tendency, ...)
! replaces the advect_scalar_pd call of rk_scalar_tend for one species. wrf_patch uses the
! batched form: wrfgpu_advect_batch in solve_em.F before each variable loop, then
! wrfgpu_advect_take in rk_scalar_tend (per-species wrfgpu_advect where nothing is held).
! flags(16) and dims(18) as in src/advection/fortran/advect_bridge.cpp; wrfgpu_advect_flags builds
! flags from the config_flags members, so WRF's derived type never enters this module.
! On error (fortran_iface/bridge.h, the same for every bridge): with stat present, stat = 2
! (bad input) / 1 (runtime) after the message is printed; without it the run stops (inside
! WRF through wrf_error_fatal, else with that exit status).
!-------------------------------------------------------------------------------
MODULE module_wrfgpu_advect
  USE, INTRINSIC :: ISO_C_BINDING
  USE module_wrfgpu_host, ONLY : wrfgpu_host_register, wrfgpu_host_unregister, wrfgpu_bridge_stop
  IMPLICIT NONE
  PRIVATE
  PUBLIC :: wrfgpu_advect, wrfgpu_advect_flags
  PUBLIC :: wrfgpu_advect_batch, wrfgpu_advect_take, wrfgpu_advect_batch_end

  ! Batched mode (wrf_patch/gpu: solve_em.F, once per Runge-Kutta step and 4-D array, before
  ! its *_variable_loop). One library call advects species first..last over the whole patch;
  ! the tendencies wait here until rk_scalar_tend, tile by tile and species by species, takes
  ! them (wrfgpu_advect_take) in place of calling advect_scalar_pd / advect_scalar. A species'
  ! advection reads only that species and the met fields, which the variable loop does not
  ! change before the species' own turn, so the result is the one the loop would compute.
  ! The held tendencies: batch_tend(ims:ime, kms:kme, jms:jme, first:last) is a view of
  ! batch_store, which only grows. (Allocating batch_tend with each call's bounds freed and
  ! allocated it again whenever the array changed, moist then chem in every Runge-Kutta step:
  ! in WRF-Chem that was a fresh mmap, page faults as it was zeroed, and a munmap, 6 times a
  ! step; docs/performance.md.) It is page-locked (module_wrfgpu_host: cudaHostRegister)
  ! under a GPU backend, so the tendencies come back from the GPU straight into it.
  REAL, ALLOCATABLE, TARGET, SAVE :: batch_store(:)
  REAL, POINTER, SAVE :: batch_tend(:,:,:,:) => NULL()
  INTEGER, SAVE :: batch_first = 1, batch_last = 0, batch_pd = -1
  INTEGER, SAVE :: batch_box(6) = 0        ! ips, ipe, jps, jpe, kps, kpe of the held batch
  ! The box the library wrote: ips..MIN(ipe,ide-1), jps..MIN(jpe,jde-1), kps..MIN(kpe,kde-1),
  ! advect_scalar_pd's its..itf, jts..jtf, kts..ktf. The rest of the patch (the staggered end
  ! rows, level kde) is zero, as zero_tend leaves it: take writes those zeros itself, so the
  ! store is never cleared (clearing it was a pass over every species of the batch, each step).
  INTEGER, SAVE :: batch_written(6) = 0
  CHARACTER(LEN=16), SAVE :: batch_said(8) = ''   ! arrays whose batching was announced

  INTERFACE
    SUBROUTINE wrfgpu_advect_run(pd, nspec, field, field_old, tend, h_tend, z_tend, ru, rv, rom, &
         mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,        &
         flags, dims, accumulate, backend, array_name, array_name_len, old_name, old_name_len, &
         first_index, times, ierr)                                                              &
         BIND(C, name='wrfgpu_advect_run')
      IMPORT :: C_INT, C_FLOAT, C_DOUBLE, C_CHAR
      INTEGER(C_INT), INTENT(IN) :: pd, nspec, time_step, flags(16), dims(18), accumulate, backend
      ! the 4-D array field is a species of, and field's 4th subscript there, for messages;
      ! field_old's array when it is not array_name//'_old' (len 0: that one); first_index 0:
      ! 3-D arrays named without a species subscript (TKE: tke_2, tke_1)
      CHARACTER(KIND=C_CHAR), INTENT(IN) :: array_name(*), old_name(*)
      INTEGER(C_INT), INTENT(IN) :: array_name_len, old_name_len, first_index
      REAL(C_FLOAT), INTENT(IN) :: field(*), field_old(*), ru(*), rv(*), rom(*)
      REAL(C_FLOAT), INTENT(INOUT) :: tend(*), h_tend(*), z_tend(*)
      REAL(C_FLOAT), INTENT(IN) :: mut(*), mub(*), mu_old(*), msftx(*), msfty(*)
      REAL(C_FLOAT), INTENT(IN) :: c1(*), c2(*), fzm(*), fzp(*), rdzw(*)
      REAL(C_FLOAT), INTENT(IN) :: rdx, rdy, dt
      REAL(C_DOUBLE), INTENT(OUT) :: times(4)
      INTEGER(C_INT), INTENT(OUT) :: ierr
    END SUBROUTINE wrfgpu_advect_run
  END INTERFACE

CONTAINS

  ! flags(16) from the config_flags members advect_scalar_pd reads.
  SUBROUTINE wrfgpu_advect_flags(flags, h_order, v_order, periodic_x, periodic_y,       &
       symmetric_xs, symmetric_xe, symmetric_ys, symmetric_ye, open_xs, open_xe, open_ys, &
       open_ye, specified, nested, polar, tenddec)
    INTEGER, INTENT(OUT) :: flags(16)
    INTEGER, INTENT(IN) :: h_order, v_order
    LOGICAL, INTENT(IN) :: periodic_x, periodic_y, symmetric_xs, symmetric_xe, symmetric_ys, &
         symmetric_ye, open_xs, open_xe, open_ys, open_ye, specified, nested, polar, tenddec
    flags(1) = h_order
    flags(2) = v_order
    flags(3) = MERGE(1, 0, periodic_x);   flags(4) = MERGE(1, 0, periodic_y)
    flags(5) = MERGE(1, 0, symmetric_xs); flags(6) = MERGE(1, 0, symmetric_xe)
    flags(7) = MERGE(1, 0, symmetric_ys); flags(8) = MERGE(1, 0, symmetric_ye)
    flags(9) = MERGE(1, 0, open_xs);      flags(10) = MERGE(1, 0, open_xe)
    flags(11) = MERGE(1, 0, open_ys);     flags(12) = MERGE(1, 0, open_ye)
    flags(13) = MERGE(1, 0, specified);   flags(14) = MERGE(1, 0, nested)
    flags(15) = MERGE(1, 0, polar);       flags(16) = MERGE(1, 0, tenddec)
  END SUBROUTINE wrfgpu_advect_flags

  ! pd: 1 = advect_scalar_pd (rk_step == rk_order), 0 = advect_scalar.
  ! backend: 0 WRFGPU_BACKEND (else gpu), 1 cpu, 2 gpu, 3 both, 4 auto. accumulate: 0 = tendency starts at 0.
  SUBROUTINE wrfgpu_advect(pd, nspec, field, field_old, tend, h_tend, z_tend, ru, rv, rom,  &
       mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,      &
       flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                      &
       its, ite, jts, jte, kts, kte, backend, accumulate, times, stat)
    INTEGER, INTENT(IN) :: pd, nspec, time_step, flags(16)
    INTEGER, INTENT(IN) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    REAL, INTENT(IN) :: field(*), field_old(*)
    REAL, INTENT(INOUT) :: tend(*), h_tend(*), z_tend(*)
    REAL, INTENT(IN) :: ru(*), rv(*), rom(*), mut(*), mub(*), mu_old(*), msftx(*), msfty(*)
    REAL, INTENT(IN) :: c1(*), c2(*), fzm(*), fzp(*), rdzw(*)
    REAL, INTENT(IN) :: rdx, rdy, dt
    INTEGER, INTENT(IN), OPTIONAL :: backend, accumulate
    DOUBLE PRECISION, INTENT(OUT), OPTIONAL :: times(4)
    INTEGER, INTENT(OUT), OPTIONAL :: stat
    INTEGER(C_INT) :: dims(18), ierr, b, acc
    REAL(C_DOUBLE) :: t(4)
    dims = (/ ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte /)
    b = 0
    IF (PRESENT(backend)) b = backend
    acc = 0
    IF (PRESENT(accumulate)) acc = accumulate
    CALL wrfgpu_advect_run(INT(pd, C_INT), INT(nspec, C_INT), field, field_old, tend, h_tend, &
         z_tend, ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, &
         dt, INT(time_step, C_INT), INT(flags, C_INT), dims, acc, b, ' ', 0_C_INT, ' ', 0_C_INT,   &
         1_C_INT, t, ierr)
    IF (PRESENT(times)) times = t
    IF (PRESENT(stat)) THEN
      stat = ierr
    ELSE IF (ierr /= 0) THEN
      CALL wrfgpu_bridge_stop(ierr, '', 0_C_INT)   ! inside WRF: wrf_error_fatal (bridge.h)
    END IF
  END SUBROUTINE wrfgpu_advect

  ! One call for species first..last of a WRF 4-D array (field = array(ims,kms,jms,first)),
  ! patch ips..ipe x jps..jpe x kps..kpe. pd: 1 = advect_scalar_pd (last RK step, reads
  ! field_old), 0 = advect_scalar (field only). flags as wrfgpu_advect_flags; tenddec must be
  ! off (h/z tendencies are not held). what: the array's name, printed once and in messages
  ! (moist(i,k,j,im), field_old's as moist_old(i,k,j,im)). what_old: a 3-D array's pair, one
  ! species (TKE: 'tke_2' advected from 'tke_1'), named in messages as tke_1(i,k,j).
  SUBROUTINE wrfgpu_advect_batch(what, pd, first, last, field, field_old, ru, rv, rom, mut, mub, &
       mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step, flags,             &
       ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                               &
       ips, ipe, jps, jpe, kps, kpe, backend, stat, what_old)
    CHARACTER(LEN=*), INTENT(IN) :: what
    CHARACTER(LEN=*), INTENT(IN), OPTIONAL :: what_old
    INTEGER, INTENT(IN) :: pd, first, last, time_step, flags(16)
    INTEGER, INTENT(IN) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           ips, ipe, jps, jpe, kps, kpe
    REAL, INTENT(IN) :: field(*), field_old(*)
    REAL, INTENT(IN) :: ru(*), rv(*), rom(*), mut(*), mub(*), mu_old(*), msftx(*), msfty(*)
    REAL, INTENT(IN) :: c1(*), c2(*), fzm(*), fzp(*), rdzw(*)
    REAL, INTENT(IN) :: rdx, rdy, dt
    INTEGER, INTENT(IN), OPTIONAL :: backend
    INTEGER, INTENT(OUT), OPTIONAL :: stat
    INTEGER(C_INT) :: dims(18), ierr, b, f(16), first_index
    INTEGER(C_SIZE_T) :: n
    CHARACTER(LEN=:), ALLOCATABLE :: old_name   ! what_old as given (no length limit), or blank
    REAL(C_DOUBLE) :: t(4)
    REAL(C_FLOAT) :: unused(1)

    CALL wrfgpu_advect_batch_end()
    IF (flags(16) /= 0) THEN
      WRITE(0, '(A)') 'wrfgpu_advect_batch: tenddec (h/z tendency diagnostics) is not batched; '// &
                      'call wrfgpu_advect per species instead'
      ierr = 2
    ELSE IF (PRESENT(what_old) .AND. last /= first) THEN
      ! Also what a WRF object compiled against an older module_wrfgpu_advect (no what_old)
      ! shows when linked with this library: its absent argument reads as present.
      WRITE(0, '(A)') 'wrfgpu_advect_batch: what_old names a 3-D array: one species (first = last). '// &
                      'Inside WRF this also means that solve_em was compiled against an older '// &
                      'libwrfgpu: apply wrf_patch again and rebuild WRF'
      ierr = 2
    ELSE IF (last < first) THEN
      ierr = 0
    ELSE
      first_index = first
      old_name = ' '
      IF (PRESENT(what_old)) THEN
        first_index = 0
        old_name = what_old
      END IF
      n = INT(ime - ims + 1, C_SIZE_T) * INT(kme - kms + 1, C_SIZE_T) *                     &
          INT(jme - jms + 1, C_SIZE_T) * INT(last - first + 1, C_SIZE_T)
      b = 0
      IF (PRESENT(backend)) b = backend
      IF (ALLOCATED(batch_store)) THEN
        IF (SIZE(batch_store, KIND=C_SIZE_T) < n) THEN
          CALL wrfgpu_host_unregister(batch_store)
          DEALLOCATE(batch_store)
        END IF
      END IF
      IF (.NOT. ALLOCATED(batch_store)) THEN
        ALLOCATE(batch_store(n))
        IF (n <= HUGE(0)) CALL wrfgpu_host_register('advection tendencies', batch_store, INT(n), b)
      END IF
      batch_tend(ims:ime, kms:kme, jms:jme, first:last) => batch_store(1:n)
      dims = (/ ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                ips, ipe, jps, jpe, kps, kpe /)
      f = flags
      IF (pd /= 0) THEN
        CALL wrfgpu_advect_run(1_C_INT, INT(last - first + 1, C_INT), field, field_old, batch_store, &
             unused, unused, ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw,  &
             rdx, rdy, dt, INT(time_step, C_INT), f, dims, 0_C_INT, b,                           &
             what, INT(LEN_TRIM(what), C_INT), old_name, INT(LEN_TRIM(old_name), C_INT),           &
             first_index, t, ierr)
      ELSE   ! advect_scalar(scalar, scalar, ...): field_old is not read
        CALL wrfgpu_advect_run(0_C_INT, INT(last - first + 1, C_INT), field, field, batch_store,    &
             unused, unused, ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw,  &
             rdx, rdy, dt, INT(time_step, C_INT), f, dims, 0_C_INT, b,                           &
             what, INT(LEN_TRIM(what), C_INT), old_name, INT(LEN_TRIM(old_name), C_INT),           &
             first_index, t, ierr)
      END IF
      IF (ierr == 0) THEN
        batch_first = first; batch_last = last; batch_pd = MERGE(1, 0, pd /= 0)
        batch_box = (/ ips, ipe, jps, jpe, kps, kpe /)
        batch_written = (/ ips, MIN(ipe, ide - 1), jps, MIN(jpe, jde - 1), kps, MIN(kpe, kde - 1) /)
        IF (.NOT. ANY(batch_said == what)) THEN   ! once per array
          IF (ANY(batch_said == '')) batch_said(FINDLOC(batch_said, '', 1)) = what
          WRITE(*, '(A,A,A,I0,A)') 'wrfgpu: scalar advection of ', what, ' batched: ', &
               last - first + 1, ' species in one call per Runge-Kutta step'
        END IF
      END IF
    END IF
    IF (PRESENT(stat)) THEN
      stat = ierr
    ELSE IF (ierr /= 0) THEN
      CALL wrfgpu_bridge_stop(ierr, '', 0_C_INT)   ! inside WRF: wrf_error_fatal (bridge.h)
    END IF
  END SUBROUTINE wrfgpu_advect_batch

  ! rk_scalar_tend, species im, tile its..ite x jts..jte x kts..kte: took = .TRUE. and tend set
  ! from the held batch when it holds species im for this kind of step (pd as above) and the
  ! tile lies in its patch; otherwise took = .FALSE., tend untouched (compute it as before).
  SUBROUTINE wrfgpu_advect_take(im, pd, tend, took, ims, ime, kms, kme, jms, jme, &
                                its, ite, kts, kte, jts, jte)
    INTEGER, INTENT(IN) :: im, pd, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte
    REAL, INTENT(INOUT) :: tend(ims:ime, kms:kme, jms:jme)
    LOGICAL, INTENT(OUT) :: took
    INTEGER :: itf, ktf, jtf
    took = im >= batch_first .AND. im <= batch_last .AND. MERGE(1, 0, pd /= 0) == batch_pd
    IF (took) took = its >= batch_box(1) .AND. ite <= batch_box(2) .AND. &
                     jts >= batch_box(3) .AND. jte <= batch_box(4) .AND. &
                     kts >= batch_box(5) .AND. kte <= batch_box(6)
    IF (took) took = ASSOCIATED(batch_tend)
    IF (took) took = LBOUND(batch_tend, 1) == ims .AND. UBOUND(batch_tend, 1) == ime .AND. &
                     LBOUND(batch_tend, 2) == kms .AND. UBOUND(batch_tend, 2) == kme .AND. &
                     LBOUND(batch_tend, 3) == jms .AND. UBOUND(batch_tend, 3) == jme
    IF (.NOT. took) RETURN
    itf = MIN(ite, batch_written(2)); jtf = MIN(jte, batch_written(4)); ktf = MIN(kte, batch_written(6))
    IF (itf < ite) tend(itf+1:ite, kts:kte, jts:jte) = 0.
    IF (jtf < jte) tend(its:itf, kts:kte, jtf+1:jte) = 0.
    IF (ktf < kte) tend(its:itf, ktf+1:kte, jts:jtf) = 0.
    tend(its:itf, kts:ktf, jts:jtf) = batch_tend(its:itf, kts:ktf, jts:jtf, im)
  END SUBROUTINE wrfgpu_advect_take

  ! After the variable loop: nothing is held any more (the memory is kept for the next call).
  SUBROUTINE wrfgpu_advect_batch_end()
    batch_first = 1; batch_last = 0; batch_pd = -1
  END SUBROUTINE wrfgpu_advect_batch_end

END MODULE module_wrfgpu_advect
