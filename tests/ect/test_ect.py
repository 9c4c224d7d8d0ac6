"""Tests of tools/ect on a synthetic ensemble: WRF-shaped NetCDF files whose domain means
follow a known correlated distribution (4 latent factors plus noise), written by this test.

A candidate drawn from the same distribution must PASS; one with a shift of a few ensemble
deviations in T must FAIL and name T; bad input must exit 2 with a message naming the file,
the variable or the value; the perturbation must change the field WRF reads.
Run: tools/ect/ect's python -m unittest tests/ect/test_ect.py (tests/run_tests.sh does).
"""

import os
import subprocess
import sys
import tempfile
import unittest

import netCDF4
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "ect"))

from wrfect import members, stats  # noqa: E402

ECT = os.path.join(ROOT, "tools", "ect", "ect")
NX, NY, NK, NT = 6, 5, 8, 3
FIELDS3 = {"T": 10.0, "QVAPOR": 5e-3, "QCLOUD": 2e-5, "QRAIN": 1e-5, "W": 0.01, "U": 12.0}
FIELDS2 = {"RAINNC": 0.02, "MU": 40.0}


def write_wrfout(path, anomalies, nx=NX, ny=NY, drop=None, nan=False, thm=False, fmt="NETCDF4"):
    """A wrfout-shaped file; anomalies[name] (NT,) adds to every cell of that field."""
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        for d, n in (("Time", None), ("DateStrLen", 19), ("west_east", nx), ("west_east_stag", nx + 1),
                     ("south_north", ny), ("south_north_stag", ny + 1), ("bottom_top", NK),
                     ("bottom_top_stag", NK + 1)):
            nc.createDimension(d, n)
        for a, v in (("WEST-EAST_GRID_DIMENSION", nx + 1), ("SOUTH-NORTH_GRID_DIMENSION", ny + 1),
                     ("BOTTOM-TOP_GRID_DIMENSION", NK + 1), ("DX", 2000.0), ("DY", 2000.0)):
            nc.setncattr(a, v)
        t = nc.createVariable("Times", "S1", ("Time", "DateStrLen"))
        for i in range(NT):
            t[i] = np.array(list(f"0001-01-01_00:{2 * (i + 1):02d}:00"), dtype="S1")
        for name, dims in (("MAPFAC_MX", ("south_north", "west_east")),
                           ("MAPFAC_MY", ("south_north", "west_east")),
                           ("MAPFAC_UX", ("south_north", "west_east_stag")),
                           ("MAPFAC_UY", ("south_north", "west_east_stag")),
                           ("MAPFAC_VX", ("south_north_stag", "west_east")),
                           ("MAPFAC_VY", ("south_north_stag", "west_east"))):
            v = nc.createVariable(name, "f4", ("Time",) + dims)
            shape = [nc.dimensions[d].size for d in dims]
            v[:] = np.broadcast_to(1.0 + 0.01 * np.arange(shape[0])[:, None], [NT] + shape)
        dnw = nc.createVariable("DNW", "f4", ("Time", "bottom_top"))
        dnw[:] = np.broadcast_to(-np.linspace(0.2, 0.05, NK) / np.linspace(0.2, 0.05, NK).sum(), (NT, NK))
        hgt = nc.createVariable("HGT", "f4", ("Time", "south_north", "west_east"))
        hgt[:] = 0.0
        pattern = np.linspace(0.5, 1.5, ny * nx).reshape(ny, nx)
        for name, scale in FIELDS3.items():
            if name == drop:
                continue
            dims = ("Time", "bottom_top_stag" if name == "W" else "bottom_top", "south_north",
                    "west_east_stag" if name == "U" else "west_east")
            shape = [NT] + [nc.dimensions[d].size for d in dims[1:]]
            base = scale * (1 + np.arange(shape[1]) / shape[1])[None, :, None, None]
            pat = np.resize(pattern, shape[2:])
            val = base * pat + scale * anomalies[name][:, None, None, None] * np.ones(shape)
            if nan and name == "QRAIN":
                val[1, 3, 2, 1] = np.nan
            nc.createVariable(name, "f4", dims)[:] = val
        for name, scale in FIELDS2.items():
            v = nc.createVariable(name, "f4", ("Time", "south_north", "west_east"))
            v[:] = scale * pattern[None] + scale * anomalies[name][:, None, None]
        if thm:
            nc.createVariable("THM", "f4", ("Time", "bottom_top", "south_north", "west_east"))[:] = 5.0


def draw(rng, load, shift=None):
    """One member's anomalies: correlated through 4 latent factors, growing in time."""
    f = rng.standard_normal(4)
    out = {}
    for i, name in enumerate(list(FIELDS3) + list(FIELDS2)):
        series = (load[i] @ f + 0.5 * rng.standard_normal()) * 1e-3 * np.arange(1, NT + 1)
        if shift and name in shift:
            series = series + shift[name] * 1e-3 * np.arange(1, NT + 1)
        out[name] = series
    return out


def ect(*args):
    p = subprocess.run([ECT, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class SyntheticEnsemble(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.d = cls.tmp.name
        rng = np.random.default_rng(7)
        cls.load = rng.standard_normal((len(FIELDS3) + len(FIELDS2), 4))
        ens = os.path.join(d, "ens")
        for m in range(60):
            md = os.path.join(ens, f"m{m:04d}")
            os.makedirs(md)
            write_wrfout(os.path.join(md, "wrfout_d01_0001-01-01_00:00:00"), draw(rng, cls.load))
            if m == 0:   # the command line once, the library for the rest (quicker)
                rc, out = ect("stats", os.path.join(md, "wrfout_d01_0001-01-01_00:00:00"),
                              "-o", os.path.join(md, "stats.npz"))
                assert rc == 0, out
            else:
                stats.save(stats.read_wrfout([os.path.join(md, "wrfout_d01_0001-01-01_00:00:00")]),
                           os.path.join(md, "stats.npz"))
        rc, out = ect("ensemble", "--collect-only", "--members", "0-59", "--out", ens)
        assert rc == 0, out
        cls.summary = os.path.join(ens, "ensemble.npz")

        def runs(tag, shift=None, **kw):
            paths = []
            for r in range(3):
                p = os.path.join(d, f"{tag}{r}.nc")
                write_wrfout(p, draw(rng, cls.load, shift), **kw)
                paths.append(p)
            return paths
        cls.good = runs("good")
        cls.biased = runs("bias", shift={"T": 8.0})
        cls.other_grid = runs("grid", nx=NX + 1)
        cls.missing = runs("missing", drop="QRAIN")
        cls.nan = runs("nan", nan=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ect_test(self, runs, *extra):
        return ect("test", "--ensemble", self.summary, "--npc", "6", "--layers", "2", *extra,
                   "--runs", *runs)

    def test_consistent_runs_pass(self):
        rc, out = self.ect_test(self.good)
        self.assertEqual(rc, 0, out)
        self.assertIn("ECT verdict: PASS", out)

    def test_biased_runs_fail_and_name_the_field(self):
        rc, out = self.ect_test(self.biased)
        self.assertEqual(rc, 1, out)
        self.assertIn("ECT verdict: FAIL", out)
        self.assertRegex(out, r"largest standardised departures[^\n]*: T\[")

    def test_statistics_are_area_weighted_level_means(self):
        st = stats.read_wrfout([self.good[0]])
        with netCDF4.Dataset(self.good[0]) as nc:
            q = np.asarray(nc.variables["QRAIN"][1], dtype=np.float64)
            area = 1.0 / (np.asarray(nc.variables["MAPFAC_MX"][0], dtype=np.float64) *
                          np.asarray(nc.variables["MAPFAC_MY"][0], dtype=np.float64))
        want = (q * area).sum((1, 2)) / area.sum()
        np.testing.assert_allclose(st["levels"]["QRAIN"][1], want, rtol=1e-12)
        self.assertNotIn("HGT", st["surface"])   # a static coordinate field, never a statistic
        two = stats.layer_means(st["levels"]["T"], st["vweights"]["T"], 2)
        self.assertEqual(two.shape, (NT, 2))

    def test_classic_files_read_without_netcdf4(self):
        # A GPU host's Python may lack netCDF4: WRF's classic output (use_netcdf_classic)
        # is then read through scipy, with the same statistics.
        rng = np.random.default_rng(11)
        an = draw(rng, self.load)
        p4, p3 = os.path.join(self.d, "n4.nc"), os.path.join(self.d, "n3.nc")
        write_wrfout(p4, an)
        write_wrfout(p3, an, fmt="NETCDF3_64BIT_OFFSET")
        want = stats.read_wrfout([p4])
        saved, stats.netCDF4 = stats.netCDF4, None
        try:
            got = stats.read_wrfout([p3])
        finally:
            stats.netCDF4 = saved
        self.assertEqual(want["times"], got["times"])
        for k in want["levels"]:
            np.testing.assert_array_equal(want["levels"][k], got["levels"][k])
        for k in want["surface"]:
            np.testing.assert_array_equal(want["surface"][k], got["surface"][k])

    def test_other_grid_is_refused(self):
        rc, out = self.ect_test(self.other_grid)
        self.assertEqual(rc, 2, out)
        self.assertIn("grid (nx, ny, nz, dx, dy)", out)
        self.assertIn("grid0.nc", out)

    def test_missing_variable_is_named(self):
        rc, out = self.ect_test(self.missing)
        self.assertEqual(rc, 2, out)
        self.assertIn("variable QRAIN missing", out)

    def test_nan_is_named_with_its_cell(self):
        rc, out = self.ect_test(self.nan)
        self.assertEqual(rc, 2, out)
        self.assertIn("variable QRAIN at 0001-01-01_00:04:00 is nan at (i,k,j)=(2,4,3)", out)

    def test_fewer_than_three_runs_are_refused(self):
        rc, out = self.ect_test(self.good[:2])
        self.assertEqual(rc, 2, out)
        self.assertIn("2 candidate runs given; the test needs 3", out)
        rc, out = self.ect_test(self.good + self.biased[:1])
        self.assertEqual(rc, 2, out)
        self.assertIn("4 candidate runs given", out)

    def test_too_many_pcs_for_the_ensemble_are_refused(self):
        rc, out = ect("test", "--ensemble", self.summary, "--npc", "40", "--layers", "1",
                      "--runs", *self.good)
        self.assertEqual(rc, 2, out)
        self.assertIn("nPC = 40", out)

    def test_time_not_in_ensemble_is_refused(self):
        rc, out = self.ect_test(self.good, "--time", "00:30:00")
        self.assertEqual(rc, 2, out)
        self.assertIn("test time '00:30:00'", out)

    def test_calibration_reports_rates_and_writes_settings(self):
        import shutil
        s = os.path.join(self.d, "calib.npz")
        shutil.copyfile(self.summary, s)
        rc, out = ect("calibrate", "--ensemble", s, "--layers", "2", "--npc-list", "4,6",
                      "--sigma-list", "2,3", "--folds", "4", "--sizes", "30", "--write")
        self.assertEqual(rc, 0, out)
        self.assertIn("share normal", out)
        rates = [float(x) for x in __import__("re").findall(r"\| ([0-9.]+)% \(", out)]
        self.assertEqual(len(rates), 4)
        self.assertTrue(all(0.0 <= r < 10.0 for r in rates), out)   # stock members mostly pass
        rc, out = ect("test", "--ensemble", s, "--runs", *self.biased)
        self.assertEqual(rc, 1, out)                                  # settings read back
        self.assertIn("of the first 4 PCs fail", out)

    def test_picture_is_written(self):
        png = os.path.join(self.d, "band.png")
        rc, out = self.ect_test(self.good, "--plot", png)
        self.assertEqual(rc, 0, out)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


class WrfEnsembles(unittest.TestCase):
    """The verdicts of docs/validation.md, "Ensemble consistency", from the committed
    statistics of real WRF runs (test_data/ect/README.md): 90 stock members per case, test
    settings as calibrated, candidate runs made on the build machine and on an H100."""

    CASES = {"quarter_ss": {"gpu_strict": 0, "patched_cpu": 0, "gpu_fast": 1, "wsm5_qc0": 1},
             "conus": {"gpu_strict": 0, "patched_cpu": 0, "gpu_fast": 1, "wsm5_qc0": 1}}

    def test_verdicts(self):
        for case, want in self.CASES.items():
            d = os.path.join(ROOT, "test_data", "ect", case)
            for cand, rc_want in want.items():
                with self.subTest(case=case, candidate=cand):
                    runs = [os.path.join(d, cand, f"m{m}.npz") for m in (1000, 1001, 1002)]
                    rc, out = ect("test", "--ensemble", os.path.join(d, "ensemble.npz"), "--runs", *runs)
                    self.assertEqual(rc, rc_want, out)

    def test_fast_mode_moves_theta(self):
        # GPU fast mode's failure is a warm bias in potential temperature (docs/validation.md):
        # the column-mean T and THM of all three runs lie over 50 ensemble deviations out.
        rc, out = ect("test", "--ensemble", os.path.join(ROOT, "test_data/ect/quarter_ss/ensemble.npz"),
                      "--runs", *[os.path.join(ROOT, f"test_data/ect/quarter_ss/gpu_fast/m{m}.npz")
                                  for m in (1000, 1001, 1002)])
        self.assertEqual(rc, 1, out)
        dep = dict((n, float(z)) for n, z in __import__("re").findall(r"(\w+) ([0-9.]+)", out.split(
            "largest standardised departures (smallest |z| of the runs): ")[1].splitlines()[0]))
        self.assertGreater(dep["THM"], 50)
        self.assertGreater(dep["T"], 50)


class Perturbation(unittest.TestCase):
    def test_theta_m_is_perturbed_by_one_ulp(self):
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "in.nc"), os.path.join(d, "out.nc")
            rng = np.random.default_rng(1)
            write_wrfout(src, draw(rng, np.ones((8, 4))), thm=True)
            changed = members.perturb_wrfinput(src, dst, member=3, seed=1, theta_m=1)
            self.assertGreater(changed["THM"], 0)
            with netCDF4.Dataset(src) as a, netCDF4.Dataset(dst) as b:
                old = np.asarray(a["THM"][:], dtype=np.float64) + 300
                new = np.asarray(b["THM"][:], dtype=np.float64) + 300
            rel = np.abs(new / old - 1)
            self.assertLess(rel.max(), 2.5 * 2.0 ** -23)
            self.assertAlmostEqual(float(rel.max()), 2.0 ** -23, delta=0.3 * 2.0 ** -23)
            # The same member and seed give the same file; another member another one.
            dst2 = os.path.join(d, "out2.nc")
            members.perturb_wrfinput(src, dst2, member=3, seed=1, theta_m=1)
            with netCDF4.Dataset(dst) as b, netCDF4.Dataset(dst2) as c:
                np.testing.assert_array_equal(b["THM"][:], c["THM"][:])

    def test_missing_thm_with_theta_m_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "in.nc")
            write_wrfout(src, draw(np.random.default_rng(2), np.ones((8, 4))))
            with self.assertRaisesRegex(stats.EctInputError, "THM missing but use_theta_m = 1"):
                members.perturb_wrfinput(src, os.path.join(d, "o.nc"), 0, 1, theta_m=1)


if __name__ == "__main__":
    unittest.main()
