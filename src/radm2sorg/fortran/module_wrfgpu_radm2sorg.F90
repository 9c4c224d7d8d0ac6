! module_wrfgpu_radm2sorg.F90 - Fortran binding of the wrfgpu RADM2SORG KPP chemistry
! (chem_opt=106), for a hook in chem/chem_driver.F next to CALL kpp_mechanism_driver
! (docs/wrf_reference.md D.3). One call integrates the tile its:ite,kts:kte,jts:jte exactly as
! radm2sorg_interface does (docs/radm2sorg.md); arrays are passed in place (no copies).
!
! Hook sketch (chem_driver.F, inside the tile loop, RADM2SORG_KPP only):
!   p_chem = (/ p_sulf, p_ora1, ... /)   ! order: wrfgpu_radm2sorg_chem_name(q), q=1..41
!   CALL wrfgpu_radm2sorg(chem, p_chem, grid%o1d, grid%o3p, ..., moist(:,:,:,P_QV), t_phy, p_phy,
!        rho, grid%ph_no2, ..., vdrog3, dtstepc, p_nu0, ids,ide,jds,jde,kds,kde,
!        ims,ime,jms,jme,kms,kme, its,ite,jts,jte,kts,kte)
MODULE module_wrfgpu_radm2sorg
  USE, INTRINSIC :: ISO_C_BINDING
  USE module_wrfgpu_host, ONLY : wrfgpu_bridge_stop
  IMPLICIT NONE
  PRIVATE
  PUBLIC :: wrfgpu_radm2sorg, wrfgpu_radm2sorg_chem_name, wrfgpu_radm2sorg_ph_name, &
            wrfgpu_radm2sorg_on


  INTEGER, PARAMETER, PUBLIC :: wrfgpu_radm2sorg_nchem = 41, wrfgpu_radm2sorg_nrad = 17, &
                                wrfgpu_radm2sorg_nph = 21, wrfgpu_radm2sorg_ldrog = 17

  INTERFACE
    ! config_bridge.cpp: a WRFGPU_* flag through the library's settings table (1/0, dflt
    ! when unset; a value that is not a flag stops the program naming it)
    INTEGER(C_INT) FUNCTION wrfgpu_config_flag(name, dflt) BIND(C, NAME='wrfgpu_config_flag')
      IMPORT :: C_CHAR, C_INT
      CHARACTER(KIND=C_CHAR), INTENT(IN) :: name(*)
      INTEGER(C_INT), VALUE :: dflt
    END FUNCTION wrfgpu_config_flag
    SUBROUTINE c_run(chem, num_chem, p_chem, rad, qv, t_phy, p_phy, rho, ph, dtstepc, vdrog3, &
                     ldrog, p_nu0, dims, backend, stats, ierr) BIND(C, NAME='wrfgpu_radm2sorg_run')
      IMPORT :: C_PTR, C_INT, C_FLOAT, C_LONG_LONG
      TYPE(C_PTR), VALUE :: chem, qv, t_phy, p_phy, rho, vdrog3
      INTEGER(C_INT), INTENT(IN) :: num_chem, p_chem(*), ldrog, p_nu0, dims(18), backend
      TYPE(C_PTR), INTENT(IN) :: rad(*), ph(*)
      REAL(C_FLOAT), INTENT(IN) :: dtstepc
      INTEGER(C_LONG_LONG), INTENT(OUT) :: stats(4)
      INTEGER(C_INT), INTENT(OUT) :: ierr
    END SUBROUTINE
    SUBROUTINE c_name(kind, q, name, len) BIND(C, NAME='wrfgpu_radm2sorg_name')
      IMPORT :: C_INT, C_CHAR
      INTEGER(C_INT), INTENT(IN) :: kind, q, len
      CHARACTER(KIND=C_CHAR), INTENT(OUT) :: name(*)
    END SUBROUTINE
  END INTERFACE

CONTAINS

  ! .TRUE. unless the environment sets WRFGPU_RADM2SORG=0, which leaves RADM2SORG_KPP to WRF's
  ! own kpp_mechanism_driver in the same wrf.exe (an A/B run against WRF's chemistry, with
  ! everything else unchanged). Read at each call, as every setting (src/common/config.h).
  LOGICAL FUNCTION wrfgpu_radm2sorg_on()
    wrfgpu_radm2sorg_on = wrfgpu_config_flag('WRFGPU_RADM2SORG' // C_NULL_CHAR, 1_C_INT) == 1
  END FUNCTION wrfgpu_radm2sorg_on

  ! WRF name of state chem field q (1..41) or radical (42..58): the order p_chem must follow.
  FUNCTION wrfgpu_radm2sorg_chem_name(q) RESULT(nm)
    INTEGER, INTENT(IN) :: q
    CHARACTER(LEN=16) :: nm
    CHARACTER(KIND=C_CHAR) :: buf(16)
    INTEGER :: n
    CALL c_name(0_C_INT, INT(q, C_INT), buf, 16_C_INT)
    DO n = 1, 16
      nm(n:n) = buf(n)
    END DO
  END FUNCTION

  ! Photolysis rate q (1..21) in the argument order below: 'no2' for ph_no2, ...
  FUNCTION wrfgpu_radm2sorg_ph_name(q) RESULT(nm)
    INTEGER, INTENT(IN) :: q
    CHARACTER(LEN=16) :: nm
    CHARACTER(KIND=C_CHAR) :: buf(16)
    INTEGER :: n
    CALL c_name(1_C_INT, INT(q, C_INT), buf, 16_C_INT)
    DO n = 1, 16
      nm(n:n) = buf(n)
    END DO
  END FUNCTION

  SUBROUTINE wrfgpu_radm2sorg(chem, p_chem,                                              &
      o1d, o3p, xno2, tolp, xylp, oltp, oln, xo2, ol2p, hc5p, hc8p, tco3, olip, ketp, mo2,  &
      hc3p, ethp, qv, t_phy, p_phy, rho,                                                    &
      ph_no2, ph_o31d, ph_o33p, ph_hno2, ph_hno3, ph_hno4, ph_no3o2, ph_no3o, ph_h2o2,      &
      ph_ch2om, ph_ch2or, ph_ch3cho, ph_ch3o2h, ph_ch3coch3, ph_ch3coo2h, ph_ch3coc2h5,     &
      ph_hcocho, ph_hcochob, ph_ch3cocho, ph_hcochest, ph_ch3ono2,                          &
      vdrog3, dtstepc, p_nu0,                                                               &
      ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme,                           &
      its, ite, jts, jte, kts, kte, backend, nfailed, stat)
    INTEGER, INTENT(IN) :: ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
                           its, ite, jts, jte, kts, kte
    REAL, DIMENSION(ims:, kms:, jms:, :), INTENT(INOUT), TARGET, CONTIGUOUS :: chem
    INTEGER, INTENT(IN) :: p_chem(wrfgpu_radm2sorg_nchem)
    REAL, DIMENSION(ims:ime, kms:kme, jms:jme), INTENT(INOUT), TARGET :: &
      o1d, o3p, xno2, tolp, xylp, oltp, oln, xo2, ol2p, hc5p, hc8p, tco3, olip, ketp, mo2, hc3p, ethp
    REAL, DIMENSION(ims:ime, kms:kme, jms:jme), INTENT(IN), TARGET :: qv, t_phy, p_phy, rho,  &
      ph_no2, ph_o31d, ph_o33p, ph_hno2, ph_hno3, ph_hno4, ph_no3o2, ph_no3o, ph_h2o2,          &
      ph_ch2om, ph_ch2or, ph_ch3cho, ph_ch3o2h, ph_ch3coch3, ph_ch3coo2h, ph_ch3coc2h5,         &
      ph_hcocho, ph_hcochob, ph_ch3cocho, ph_hcochest, ph_ch3ono2
    REAL, DIMENSION(ims:, kms:, jms:, :), INTENT(INOUT), TARGET, CONTIGUOUS :: vdrog3
    REAL, INTENT(IN) :: dtstepc
    INTEGER, INTENT(IN) :: p_nu0
    INTEGER, INTENT(IN), OPTIONAL :: backend   ! 0 WRFGPU_BACKEND, else gpu (default); 1 cpu,
                                               ! 2 gpu, 3 both, 4 auto
    INTEGER, INTENT(OUT), OPTIONAL :: nfailed  ! cells whose integration failed (else a stop)
    INTEGER, INTENT(OUT), OPTIONAL :: stat     ! 0, 1 or 2 (bridge.h); absent: a failure stops

    TYPE(C_PTR) :: rad(wrfgpu_radm2sorg_nrad), ph(wrfgpu_radm2sorg_nph)
    INTEGER(C_INT) :: dims(18), p(wrfgpu_radm2sorg_nchem), be, ierr
    INTEGER(C_LONG_LONG) :: stats(4)
    INTEGER :: q
    CHARACTER(LEN=*), PARAMETER :: not_dimensioned = &
      'wrfgpu: wrfgpu_radm2sorg: chem/vdrog3 are not dimensioned (ims:ime,kms:kme,jms:jme,:)'

    rad = (/ C_LOC(o1d), C_LOC(o3p), C_LOC(xno2), C_LOC(tolp), C_LOC(xylp), C_LOC(oltp),     &
             C_LOC(oln), C_LOC(xo2), C_LOC(ol2p), C_LOC(hc5p), C_LOC(hc8p), C_LOC(tco3),       &
             C_LOC(olip), C_LOC(ketp), C_LOC(mo2), C_LOC(hc3p), C_LOC(ethp) /)
    ph = (/ C_LOC(ph_no2), C_LOC(ph_o31d), C_LOC(ph_o33p), C_LOC(ph_hno2), C_LOC(ph_hno3),   &
            C_LOC(ph_hno4), C_LOC(ph_no3o2), C_LOC(ph_no3o), C_LOC(ph_h2o2), C_LOC(ph_ch2om), &
            C_LOC(ph_ch2or), C_LOC(ph_ch3cho), C_LOC(ph_ch3o2h), C_LOC(ph_ch3coch3),          &
            C_LOC(ph_ch3coo2h), C_LOC(ph_ch3coc2h5), C_LOC(ph_hcocho), C_LOC(ph_hcochob),     &
            C_LOC(ph_ch3cocho), C_LOC(ph_hcochest), C_LOC(ph_ch3ono2) /)
    dims = (/ ids, ide, jds, jde, kds, kde, ims, ime, jms, jme, kms, kme, &
              its, ite, jts, jte, kts, kte /)
    DO q = 1, wrfgpu_radm2sorg_nchem
      p(q) = p_chem(q)
    END DO
    IF (SIZE(chem,1) /= ime-ims+1 .OR. SIZE(chem,2) /= kme-kms+1 .OR. SIZE(chem,3) /= jme-jms+1 .OR. &
        SIZE(vdrog3,1) /= ime-ims+1 .OR. SIZE(vdrog3,2) /= kme-kms+1 .OR. SIZE(vdrog3,3) /= jme-jms+1) THEN
      IF (PRESENT(stat)) THEN
        WRITE(0, '(A)') not_dimensioned
        stat = 2
        RETURN
      END IF
      CALL wrfgpu_bridge_stop(2_C_INT, not_dimensioned, LEN(not_dimensioned, C_INT))
    END IF
    be = 0
    IF (PRESENT(backend)) be = backend
    stats = 0   ! not written by a call that fails before the integration
    CALL c_run(C_LOC(chem), INT(SIZE(chem, 4), C_INT), p, rad, C_LOC(qv), C_LOC(t_phy), &
               C_LOC(p_phy), C_LOC(rho), ph, REAL(dtstepc, C_FLOAT), C_LOC(vdrog3),    &
               INT(SIZE(vdrog3, 4), C_INT), INT(p_nu0, C_INT), dims, be, stats, ierr)
    IF (PRESENT(nfailed)) THEN
      nfailed = INT(stats(4))
      IF (ierr == 1 .AND. stats(4) > 0) ierr = 0   ! failed cells are counted, not an error
    END IF
    IF (PRESENT(stat)) THEN
      stat = ierr
    ELSE IF (ierr /= 0) THEN
      CALL wrfgpu_bridge_stop(ierr, '', 0_C_INT)   ! inside WRF: wrf_error_fatal (bridge.h)
    END IF
  END SUBROUTINE wrfgpu_radm2sorg

END MODULE module_wrfgpu_radm2sorg
