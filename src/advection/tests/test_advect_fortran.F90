!-------------------------------------------------------------------------------
! test_advect_fortran: the scalar advection through module_wrfgpu_advect, as wrf_patch calls
! it inside WRF, on a real capture (em_quarter_ss, moist species, last RK step: WRF's own
! advect_scalar_pd tendencies in tendency_out):
!   A  batched: wrfgpu_advect_batch over the patch (solve_em.F), then wrfgpu_advect_take for
!      each species on each of 2x2 tiles (rk_scalar_tend) -> equals WRF bit for bit
!   B  per species and tile: wrfgpu_advect (the minimal hook)   -> equals A bit for bit
!   C  the same on the CPU backend explicitly                   -> equals WRF bit for bit
!   D  RK1/RK2 (advect_scalar): batched+take equals per-species calls bit for bit
!   E  nothing held after wrfgpu_advect_batch_end, for another kind of step, for a species
!      outside the batch or a tile outside its patch; tenddec is refused with stat 2.
!   F  batches of other species ranges in turn (WRF-Chem's moist, then chem, every RK step),
!      each taken as WRF computes it                           -> equals WRF bit for bit
!   G  the arrays registered in place (module_wrfgpu_host), released, allocated again and
!      registered again: batched + take                        -> equals WRF bit for bit
!   H  field_old kept for the run (wrfgpu_host_keep_old: solve_em's moist_old with wrf_patch
!      0005): the bounds asked for, the same storage and values for a domain's next step,
!      one set per domain, new storage when a domain's bounds change, page-locked once
!      registered: batched + take == WRF each time
!   I  a NaN in a batch: status 2, and no species is taken afterwards; a NaN in a 3-D pair
!      batched as TKE is (what_old): status 2 (the message, tke_1(i,k,j), and a name over 32
!      characters in full, are checked by tests/driver/advect_batch_message.sh)
! Cells outside each tile keep their sentinel. Prints PASS/FAIL lines; exit 1 on failure.
! Arguments: captures (default: quarter_ss step 120, then squall2d_x step 800, a 2-D case
! whose 2x2 tiling has a tile on the staggered end row only).
!-------------------------------------------------------------------------------
program test_advect_fortran
  use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_associated
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use netcdf
  use module_wrfgpu_advect
  use module_wrfgpu_host
  use wrfgpu_test_gpu, only: gpu_visible, host_locked
  implicit none
  real, parameter :: sentinel = -777.
  character(len=*), parameter :: default_file = 'test_data/quarter_ss_advect_scalar_pd_d01_step0120_rank0.nc'
  character(len=512) :: path
  integer :: ifile, nfiles
  integer :: ncid, nspec, nx, nz, ny
  integer :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme
  integer :: its, ite, jts, jte, kts, kte, time_step, flags(16), nfail, stat
  real :: rdx, rdy, dt
  real, allocatable :: field(:,:,:,:), field_old(:,:,:,:), ref(:,:,:,:)
  real, allocatable :: ta(:,:,:,:), tb(:,:,:,:), tc(:,:,:,:), td(:,:,:,:), te(:,:,:,:)
  real, allocatable :: ru(:,:,:), rv(:,:,:), rom(:,:,:), work(:,:,:)
  real, allocatable :: mut(:,:), mub(:,:), mu_old(:,:), msftx(:,:), msfty(:,:)
  real, allocatable :: c1(:), c2(:), fzm(:), fzp(:), rdzw(:)
  integer :: tiles(4, 4), t, s, round
  logical :: took, all_took
  type(c_ptr) :: at1

  nfail = 0
  nfiles = max(1, command_argument_count())
  do ifile = 1, nfiles
    if (command_argument_count() == 0) then
      path = default_file
    else
      call get_command_argument(ifile, path)
    end if
    call test_file()
  end do
  ! WRF's OpenMP tiling of a 2-D (y-periodic, jde = 3) case makes a tile on the staggered end
  ! row only: that tile must be taken as zeros and written nowhere else
  if (command_argument_count() == 0) then
    path = 'test_data/squall2d_x_advect_scalar_pd_d01_step0800_rank0.nc'
    call test_file()
  end if

  if (nfail > 0) then
    write(*, '(I0,A)') nfail, ' check(s) FAILED'
    stop 1
  end if
  write(*, '(A)') 'all checks passed'

contains

  subroutine test_file()
  call read_capture()
  ! 2x2 tiles of the patch, as WRF's OpenMP tiling makes them
  tiles(:, 1) = (/ its, (its + ite) / 2, jts, (jts + jte) / 2 /)
  tiles(:, 2) = (/ (its + ite) / 2 + 1, ite, jts, (jts + jte) / 2 /)
  tiles(:, 3) = (/ its, (its + ite) / 2, (jts + jte) / 2 + 1, jte /)
  tiles(:, 4) = (/ (its + ite) / 2 + 1, ite, (jts + jte) / 2 + 1, jte /)
  allocate(ta, tb, tc, td, te, mold=field)
  allocate(work(ims:ime, kms:kme, jms:jme))

  ! ---- A: batched (auto backend: the GPU when one is visible)
  call batch(1, 4)
  ta = sentinel
  all_took = .true.
  call take_range(1, nspec, ta)
  call check(all_took, 'A: every species taken on every tile after wrfgpu_advect_batch')
  call check(same(ta, ref, .true.), 'A: batched + take == WRF advect_scalar_pd (bitwise, patch)')
  call check(untouched(ta), 'A: nothing written outside the tiles')
  call check(maxval(abs(ta(its:ite, kts:kte, jts:jte, :))) > 0., 'A: tendencies are not all zero')

  ! ---- B: per species and tile, the minimal hook (WRF's call passes no backend: the GPU,
  ! fortran_iface/bridge.h; here auto, so that the test runs without one too)
  tb = sentinel
  do t = 1, 4
    do s = 1, nspec
      call zero_tend(t)
      call wrfgpu_advect(1, 1, field(:,:,:,s), field_old(:,:,:,s), work, work, work, ru, rv, rom, &
           mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,      &
           flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                      &
           tiles(1,t), tiles(2,t), tiles(3,t), tiles(4,t), kts, kte, backend=4)
      call keep_tile(work, tb(:,:,:,s), t)
    end do
  end do
  call check(same(ta, tb, .false.), 'B: per-species wrfgpu_advect == batched (bitwise, with sentinels)')
  ! The same call without a backend, as WRF makes it: WRFGPU_BACKEND, else the GPU; without a
  ! usable one it fails with status 1 and writes nothing (never a silent CPU run).
  call get_environment_variable('WRFGPU_BACKEND', path)
  if (len_trim(path) == 0 .and. .not. gpu_visible()) then
    work = sentinel
    call wrfgpu_advect(1, 1, field(:,:,:,1), field_old(:,:,:,1), work, work, work, ru, rv, rom, &
         mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,      &
         flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                      &
         its, ite, jts, jte, kts, kte, stat=stat)
    call check(stat == 1 .and. all(work == sentinel), &
               'B: no backend and no usable GPU: status 1, nothing written')
  end if

  ! ---- C: CPU backend, batched
  call batch(1, 1)
  tc = sentinel
  call take_range(1, nspec, tc)
  call check(same(tc, ref, .true.), 'C: CPU backend batched == WRF (bitwise)')

  ! ---- D: RK1/RK2 (advect_scalar on field)
  call batch(0, 4)
  td = sentinel
  te = sentinel
  do t = 1, 4
    do s = 1, nspec
      work = sentinel
      call wrfgpu_advect_take(s, 0, work, took, ims, ime, kms, kme, jms, jme, &
                              tiles(1,t), tiles(2,t), kts, kte, tiles(3,t), tiles(4,t))
      call keep_tile(work, td(:,:,:,s), t)
      call zero_tend(t)
      call wrfgpu_advect(0, 1, field(:,:,:,s), field(:,:,:,s), work, work, work, ru, rv, rom, &
           mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step,  &
           flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                  &
           tiles(1,t), tiles(2,t), tiles(3,t), tiles(4,t), kts, kte, backend=4)
      call keep_tile(work, te(:,:,:,s), t)
    end do
  end do
  call check(same(td, te, .false.), 'D: RK1/RK2 batched + take == per-species advect_scalar (bitwise)')
  call check(any(td(its:ite, kts:kte, jts:jte, :) /= ta(its:ite, kts:kte, jts:jte, :)), &
             'D: advect_scalar differs from advect_scalar_pd here (limiter active)')

  ! ---- E: when nothing may be taken
  work = sentinel
  call wrfgpu_advect_take(1, 1, work, took, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
  call check(.not. took .and. all(work == sentinel), 'E: a batch of RK1/RK2 is not taken by the last RK step')
  call wrfgpu_advect_take(nspec + 1, 0, work, took, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
  call check(.not. took .and. all(work == sentinel), 'E: a species outside the batch is not taken')
  call wrfgpu_advect_take(1, 0, work, took, ims, ime, kms, kme, jms, jme, its, ite + 1, kts, kte, jts, jte)
  call check(.not. took .and. all(work == sentinel), 'E: a tile outside the batch patch is not taken')
  call wrfgpu_advect_batch_end()
  call wrfgpu_advect_take(1, 0, work, took, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
  call check(.not. took .and. all(work == sentinel), 'E: nothing is taken after wrfgpu_advect_batch_end')
  flags(16) = 1
  call wrfgpu_advect_batch('moist', 1, 1, nspec, field, field_old, ru, rv, rom, mut, mub, mu_old, &
       msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt, time_step, flags,                     &
       ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, its, ite, jts, jte, kts, kte,  &
       stat=stat)
  flags(16) = 0
  call wrfgpu_advect_take(1, 1, work, took, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
  call check(stat == 2 .and. .not. took, 'E: tenddec refused with stat 2, nothing held')
  ! ---- F: batches of other species ranges in turn, as WRF-Chem makes them (moist, then chem,
  ! in every Runge-Kutta step; the held tendencies are one store that grows, viewed with each
  ! batch's bounds): a larger batch, a smaller one, twice over
  if (nspec >= 2) then
    tb = sentinel
    all_took = .true.
    do round = 1, 2
      call batch_range(2, nspec, 1, 4)
      call take_range(2, nspec, tb)
      call batch_range(1, 1, 1, 4)
      call take_range(1, 1, tb)
    end do
    call check(all_took, 'F: every species taken from batches of other ranges in turn')
    call check(same(tb, ref, .true.), 'F: batches of other species ranges in turn == WRF (bitwise, patch)')
  end if

  ! ---- G: the arrays page-locked in place, as solve_em.F registers WRF's grid state
  ! (module_wrfgpu_host; the auto backend: with a GPU they are registered); then released,
  ! allocated again with the same values (other pages, maybe at the same addresses) and
  ! registered again. Batched + take == WRF each time: no stale mapping.
  do round = 1, 2
    call wrfgpu_host_register('field', field, size(field), backend=4)
    call wrfgpu_host_register('field_old', field_old, size(field_old), backend=4)
    call wrfgpu_host_register('ru', ru, size(ru), backend=4)
    call wrfgpu_host_register('rv', rv, size(rv), backend=4)
    call wrfgpu_host_register('rom', rom, size(rom), backend=4)
    tb = sentinel
    all_took = .true.
    call batch(1, 4)
    call take_range(1, nspec, tb)
    call check(all_took, 'G: every species taken from a batch of registered arrays')
    call check(same(tb, ref, .true.), 'G: registered arrays: batched + take == WRF (bitwise, patch)')
    call wrfgpu_host_unregister(field)
    call wrfgpu_host_unregister(ru)
    te = field
    deallocate(field)
    allocate(field(ims:ime, kms:kme, jms:jme, nspec))
    field = te
    work = ru
    deallocate(ru)
    allocate(ru(ims:ime, kms:kme, jms:jme))
    ru = work
  end do

  ! ---- H: field_old kept for the run, as solve_em's moist_old with wrf_patch 0005
  ! (wrfgpu_host_keep_old at the start of the step, wrfgpu_host_register at the batch)
  call wrfgpu_host_keep_old(1, ims, ime, kms, kme, jms, jme, nspec, 1, 1, 1)
  call check(all(lbound(wrfgpu_moist_old) == (/ ims, kms, jms, 1 /)) .and. &
             all(ubound(wrfgpu_moist_old) == (/ ime, kme, jme, nspec /)) .and. &
             size(wrfgpu_chem_old, 4) == 1, 'H: the kept arrays have the bounds asked for')
  at1 = address(wrfgpu_moist_old)
  wrfgpu_moist_old = field_old
  do round = 1, 3
    ! round 1: the next step of the same domain; round 2: another domain (larger) runs in
    ! between; round 3: this domain's bounds change and change back (new storage, the old one
    ! unregistered and freed: no stale mapping)
    if (round == 2) then
      call wrfgpu_host_keep_old(2, ims, ime + 8, kms, kme, jms, jme, nspec, 1, 1, 1)
      call check(.not. c_associated(address(wrfgpu_moist_old), at1), 'H: each domain has its own arrays')
      wrfgpu_moist_old = 0.
    end if
    if (round == 3) call wrfgpu_host_keep_old(1, ims, ime + 8, kms, kme, jms, jme, nspec, 1, 1, 1)
    call wrfgpu_host_keep_old(1, ims, ime, kms, kme, jms, jme, nspec, 1, 1, 1)
    if (round < 3) call check(c_associated(address(wrfgpu_moist_old), at1) .and. &
                              all(wrfgpu_moist_old == field_old), &
                              'H: the same storage and values for the same domain and bounds')
    wrfgpu_moist_old = field_old
    call wrfgpu_host_register('moist_old', wrfgpu_moist_old, size(wrfgpu_moist_old), backend=4)
    if (gpu_visible()) call check(host_locked(wrfgpu_moist_old), 'H: the kept array is page-locked once registered')
    tb = sentinel
    all_took = .true.
    call batch_range(1, nspec, 1, 4, wrfgpu_moist_old)
    call take_range(1, nspec, tb)
    call check(all_took, 'H: every species taken from a batch with a kept field_old')
    call check(same(tb, ref, .true.), 'H: kept field_old: batched + take == WRF (bitwise, patch)')
  end do
  ! leave domain 1 for the next capture, whose bounds may differ: a third domain
  call wrfgpu_host_keep_old(3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)

  ! ---- I: a NaN in the last species of a batch: stat 2 and nothing held, so nothing of the
  ! store (the call's scratch, written before every group has passed the check) is taken
  te = field
  field(its + 1, kts + 1, jts + 1, nspec) = ieee_value(1., ieee_quiet_nan)
  call wrfgpu_advect_batch('moist', 1, 1, nspec, field(ims,kms,jms,1), field_old(ims,kms,jms,1), &
       ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt,         &
       time_step, flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,              &
       its, ite, jts, jte, kts, kte, backend=4, stat=stat)
  call check(stat == 2, 'I: a NaN in a batch: status 2')
  work = sentinel
  all_took = .false.
  do s = 1, nspec
    call wrfgpu_advect_take(s, 1, work, took, ims, ime, kms, kme, jms, jme, its, ite, kts, kte, jts, jte)
    all_took = all_took .or. took
  end do
  call check(.not. all_took .and. all(work == sentinel), 'I: nothing taken after a failed batch')
  field = te
  ! a 3-D pair as wrf_patch 0002 batches TKE (tke_2 advected from tke_1): a NaN in the old one
  ! is named tke_1(i,k,j); what_old with more than one species is refused
  te(:, :, :, 1) = field_old(:, :, :, 1)
  field_old(its + 1, kts + 1, jts + 1, 1) = ieee_value(1., ieee_quiet_nan)
  call wrfgpu_advect_batch('tke_2', 1, 1, 1, field(ims,kms,jms,1), field_old(ims,kms,jms,1),     &
       ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt,         &
       time_step, flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,              &
       its, ite, jts, jte, kts, kte, backend=4, stat=stat, what_old='tke_1')
  call check(stat == 2, 'I: a NaN in a 3-D pair (tke_2 from tke_1): status 2')
  ! the same with a name longer than 32 characters: named in full (was cut at 32)
  call wrfgpu_advect_batch('tke_2', 1, 1, 1, field(ims,kms,jms,1), field_old(ims,kms,jms,1),     &
       ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt,         &
       time_step, flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,              &
       its, ite, jts, jte, kts, kte, backend=4, stat=stat,                                        &
       what_old='tke_1_of_the_nested_domain_with_a_long_name')
  call check(stat == 2, 'I: a NaN in a 3-D pair with a long old name: status 2')
  field_old(:, :, :, 1) = te(:, :, :, 1)
  call wrfgpu_advect_batch('tke_2', 1, 1, 2, field(ims,kms,jms,1), field_old(ims,kms,jms,1),     &
       ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw, rdx, rdy, dt,         &
       time_step, flags, ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,              &
       its, ite, jts, jte, kts, kte, backend=4, stat=stat, what_old='tke_1')
  call check(stat == 2, 'I: what_old with two species refused with status 2')

  deallocate(field, field_old, ref, ta, tb, tc, td, te, ru, rv, rom, work)
  deallocate(mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw)
  end subroutine test_file

  subroutine batch(pd, backend)
    integer, intent(in) :: pd, backend
    call batch_range(1, nspec, pd, backend)
  end subroutine batch

  ! A batch of species first..last (pd as wrfgpu_advect_batch's), passed as WRF passes them:
  ! the array element of the first species (sequence association), not a section
  ! (old: another field_old, e.g. a kept one; default: field_old)
  subroutine batch_range(first, last, pd, backend, old)
    integer, intent(in) :: first, last, pd, backend
    real, intent(in), optional :: old(ims:ime, kms:kme, jms:jme, *)
    if (present(old)) then
      call wrfgpu_advect_batch('moist', pd, first, last, field(ims,kms,jms,first),            &
           old(ims,kms,jms,first), ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2,         &
           fzm, fzp, rdzw, rdx, rdy, dt, time_step, flags,                                       &
           ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                           &
           its, ite, jts, jte, kts, kte, backend=backend)
      return
    end if
    call wrfgpu_advect_batch('moist', pd, first, last, field(ims,kms,jms,first),              &
         field_old(ims,kms,jms,first), ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2,     &
         fzm, fzp, rdzw, rdx, rdy, dt, time_step, flags,                                         &
         ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                             &
         its, ite, jts, jte, kts, kte, backend=backend)
  end subroutine batch_range

  ! wrfgpu_advect_take (last RK step) of species first..last on every tile into dst; all_took
  ! records whether every one was taken
  subroutine take_range(first, last, dst)
    integer, intent(in) :: first, last
    real, intent(inout) :: dst(ims:ime, kms:kme, jms:jme, nspec)
    do t = 1, 4
      do s = first, last
        work = sentinel
        call wrfgpu_advect_take(s, 1, work, took, ims, ime, kms, kme, jms, jme, &
                                tiles(1,t), tiles(2,t), kts, kte, tiles(3,t), tiles(4,t))
        all_took = all_took .and. took
        call keep_tile(work, dst(:,:,:,s), t)
      end do
    end do
  end subroutine take_range

  ! rk_scalar_tend's zero_tend(advect_tend) on tile t, before the per-species call
  subroutine zero_tend(t)
    integer, intent(in) :: t
    work = sentinel
    work(tiles(1,t):tiles(2,t), kts:kte, tiles(3,t):tiles(4,t)) = 0.
  end subroutine zero_tend

  ! copy tile t of a = one species' tendency into b (the rest of b keeps what it had)
  subroutine keep_tile(a, b, t)
    real, intent(in) :: a(ims:ime, kms:kme, jms:jme)
    real, intent(inout) :: b(ims:ime, kms:kme, jms:jme)
    integer, intent(in) :: t
    logical :: outside(ims:ime, kms:kme, jms:jme)
    integer :: i, j
    b(tiles(1,t):tiles(2,t), :, tiles(3,t):tiles(4,t)) = a(tiles(1,t):tiles(2,t), :, tiles(3,t):tiles(4,t))
    ! anything written outside the tile is a defect: mark it in b
    outside = .true.
    outside(tiles(1,t):tiles(2,t), kts:kte, tiles(3,t):tiles(4,t)) = .false.
    do j = jms, jme
      do i = ims, ime
        if (any(outside(i, :, j) .and. a(i, :, j) /= sentinel)) b(i, kms, j) = huge(1.)
      end do
    end do
  end subroutine keep_tile

  ! a == b cell by cell (0 == -0); patch_only: compare the patch only (b has no sentinels)
  logical function same(a, b, patch_only)
    real, intent(in) :: a(ims:ime, kms:kme, jms:jme, nspec), b(ims:ime, kms:kme, jms:jme, nspec)
    logical, intent(in) :: patch_only
    integer :: n
    if (patch_only) then
      n = count(a(its:ite, kts:kte, jts:jte, :) /= b(its:ite, kts:kte, jts:jte, :))
    else
      n = count(a /= b)
    end if
    if (n > 0) write(*, '(A,I0,A,ES10.3)') '  differing cells: ', n, ', max abs diff ', &
         maxval(abs(a(its:ite, kts:kte, jts:jte, :) - b(its:ite, kts:kte, jts:jte, :)))
    same = n == 0
  end function same

  logical function untouched(a)
    real, intent(in) :: a(ims:ime, kms:kme, jms:jme, nspec)
    logical :: in_patch(ims:ime, kms:kme, jms:jme)
    integer :: s2
    in_patch = .false.
    in_patch(its:ite, kts:kte, jts:jte) = .true.
    untouched = .true.
    do s2 = 1, nspec
      untouched = untouched .and. all(in_patch .or. a(:,:,:,s2) == sentinel)
    end do
  end function untouched

  ! the address of an array's first element (c_loc needs a target)
  type(c_ptr) function address(a)
    real, intent(in), target :: a(*)
    address = c_loc(a(1))
  end function address

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*, '(A,A)') 'PASS ', what
    else
      write(*, '(A,A)') 'FAIL ', what
      nfail = nfail + 1
    end if
  end subroutine check

  subroutine nc(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= nf90_noerr) then
      write(0, '(5A)') trim(path), ': ', what, ': ', trim(nf90_strerror(status))
      stop 2
    end if
  end subroutine nc

  integer function iatt(name)
    character(len=*), intent(in) :: name
    integer :: v
    call nc(nf90_get_att(ncid, nf90_global, name, v), 'attribute '//name)
    iatt = v
  end function iatt

  real function ratt(name)
    character(len=*), intent(in) :: name
    real :: v
    call nc(nf90_get_att(ncid, nf90_global, name, v), 'attribute '//name)
    ratt = v
  end function ratt

  integer function dimlen(name)
    character(len=*), intent(in) :: name
    integer :: id, status, n
    status = nf90_inq_dimid(ncid, name, id)
    if (status == nf90_noerr) status = nf90_inquire_dimension(ncid, id, len=n)
    call nc(status, 'dimension '//name)
    dimlen = n
  end function dimlen

  subroutine get4(name, a)
    character(len=*), intent(in) :: name
    real, intent(out) :: a(:,:,:,:)
    integer :: id, status
    status = nf90_inq_varid(ncid, name, id)
    if (status == nf90_noerr) status = nf90_get_var(ncid, id, a)
    call nc(status, 'variable '//name)
  end subroutine get4

  subroutine get3(name, a)
    character(len=*), intent(in) :: name
    real, intent(out) :: a(:,:,:)
    integer :: id, status
    status = nf90_inq_varid(ncid, name, id)
    if (status == nf90_noerr) status = nf90_get_var(ncid, id, a)
    call nc(status, 'variable '//name)
  end subroutine get3

  subroutine get2(name, a)
    character(len=*), intent(in) :: name
    real, intent(out) :: a(:,:)
    integer :: id, status
    status = nf90_inq_varid(ncid, name, id)
    if (status == nf90_noerr) status = nf90_get_var(ncid, id, a)
    call nc(status, 'variable '//name)
  end subroutine get2

  subroutine get1(name, a)
    character(len=*), intent(in) :: name
    real, intent(out) :: a(:)
    integer :: id, status
    status = nf90_inq_varid(ncid, name, id)
    if (status == nf90_noerr) status = nf90_get_var(ncid, id, a)
    call nc(status, 'variable '//name)
  end subroutine get1

  subroutine read_capture()
    character(len=64) :: kernel
    call nc(nf90_open(trim(path), nf90_nowrite, ncid), 'open')
    call nc(nf90_get_att(ncid, nf90_global, 'kernel', kernel), 'attribute kernel')
    if (trim(kernel) /= 'advect_scalar_pd') then
      write(0, '(3A)') trim(path), ': kernel is ', trim(kernel)//', not advect_scalar_pd'
      stop 2
    end if
    nspec = dimlen('scalar'); nx = dimlen('west_east'); nz = dimlen('bottom_top_stag')
    ny = dimlen('south_north')
    ids = iatt('ids'); ide = iatt('ide'); jds = iatt('jds'); jde = iatt('jde')
    kds = iatt('kds'); kde = iatt('kde')
    its = iatt('its'); ite = iatt('ite'); jts = iatt('jts'); jte = iatt('jte')
    kts = iatt('kts'); kte = iatt('kte')
    ims = iatt('region_i0'); jms = iatt('region_j0'); kms = iatt('region_k0')
    ime = ims + nx - 1; jme = jms + ny - 1; kme = kms + nz - 1
    rdx = ratt('rdx'); rdy = ratt('rdy'); dt = ratt('dt_rk'); time_step = iatt('time_step')
    call wrfgpu_advect_flags(flags, iatt('h_sca_adv_order'), iatt('v_sca_adv_order'),           &
         iatt('periodic_x') /= 0, iatt('periodic_y') /= 0, iatt('symmetric_xs') /= 0,           &
         iatt('symmetric_xe') /= 0, iatt('symmetric_ys') /= 0, iatt('symmetric_ye') /= 0,       &
         iatt('open_xs') /= 0, iatt('open_xe') /= 0, iatt('open_ys') /= 0, iatt('open_ye') /= 0, &
         iatt('specified') /= 0, iatt('nested') /= 0, iatt('polar') /= 0, .false.)
    ! tenddec off: the batch holds advect_tend only (h/z tendencies need per-species calls)
    allocate(field(ims:ime, kms:kme, jms:jme, nspec), field_old(ims:ime, kms:kme, jms:jme, nspec))
    allocate(ref(ims:ime, kms:kme, jms:jme, nspec))
    allocate(ru(ims:ime, kms:kme, jms:jme), rv(ims:ime, kms:kme, jms:jme), rom(ims:ime, kms:kme, jms:jme))
    allocate(mut(ims:ime, jms:jme), mub(ims:ime, jms:jme), mu_old(ims:ime, jms:jme))
    allocate(msftx(ims:ime, jms:jme), msfty(ims:ime, jms:jme))
    allocate(c1(kms:kme), c2(kms:kme), fzm(kms:kme), fzp(kms:kme), rdzw(kms:kme))
    call get4('field', field); call get4('field_old', field_old); call get4('tendency_out', ref)
    call get3('ru', ru); call get3('rv', rv); call get3('rom', rom)
    call get2('mut', mut); call get2('mub', mub); call get2('mu_old', mu_old)
    call get2('msftx', msftx); call get2('msfty', msfty)
    call get1('c1', c1); call get1('c2', c2); call get1('fzm', fzm); call get1('fzp', fzp)
    call get1('rdzw', rdzw)
    call nc(nf90_close(ncid), 'close')
    write(*, '(3A,I0,A,6(I0,1X))') 'capture ', trim(path), ': ', nspec, ' species, tile ', &
         its, ite, jts, jte, kts, kte
  end subroutine read_capture

end program test_advect_fortran
