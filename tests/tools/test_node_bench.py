"""Tests of tools/wrf_node_bench.py (the whole-node WRF benchmark) and tools/mps.sh on files
from real runs: rsl.error files of em_quarter_ss at 425x300x35 on an H100 host
(test_data/node/, docs/performance.md "WRF on a node")."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import wrf_node_bench as nb  # noqa: E402

DATA = os.path.join(ROOT, "test_data", "node")


def rundir_with(files):
    d = tempfile.mkdtemp()
    for name, src in files.items():
        with open(os.path.join(DATA, src)) as f, open(os.path.join(d, name), "w") as g:
            g.write(f.read())
    return d


class StepTimes(unittest.TestCase):
    def test_stock_run(self):
        st = nb.step_times(rundir_with({"rsl.error.0000": "stock16.rsl.error.0000"}))
        self.assertEqual(len(st), 30)                  # 6 model minutes of 12 s steps
        self.assertAlmostEqual(st[0], 0.78977, places=5)
        self.assertAlmostEqual(st[-1], 0.81467, places=5)

    def test_no_log(self):
        self.assertEqual(nb.step_times(tempfile.mkdtemp()), [])


class LibraryTimes(unittest.TestCase):
    def test_patched_run_on_16_ranks_through_mps(self):
        d = rundir_with({"rsl.error.0000": "gpu16mps.rsl.error.0000",
                         "rsl.error.0015": "gpu16mps.rsl.error.0015"})
        lib = nb.library_times(d)
        self.assertEqual(len(lib), 2)
        r0 = lib[os.path.join(d, "rsl.error.0000")]
        # 30 steps: WSM5 once, PD advection once (RK3: moist + TKE), unlimited twice (RK1, RK2)
        self.assertEqual([r0[k][0] for k in ("wsm5", "advect_pd", "advect")], [30, 60, 120])
        self.assertAlmostEqual(r0["wsm5"][4], 170.0)      # call_ms
        self.assertAlmostEqual(r0["wsm5"][5], 18.5)       # first_ms
        self.assertAlmostEqual(r0["advect"][2], 56.3)     # h2d_ms
        self.assertEqual(nb.step_times(d)[:1], [0.82866])

    def test_first_call_kernels_and_copies(self):
        # libraries since first_kc_ms: the first call's kernels + transfers, an eighth column
        d = rundir_with({"rsl.error.0000": "gpu16mps_steady.rsl.error.0000"})
        r0 = nb.library_times(d)[os.path.join(d, "rsl.error.0000")]
        self.assertEqual(r0["wsm5"], (25, 3.5, 24.7, 5.5, 37.7, 3.2, 2.6))
        self.assertAlmostEqual(r0["advect_pd"][6], 0.7)

    def test_older_log_has_no_first_kc(self):
        d = rundir_with({"rsl.error.0000": "gpu16mps.rsl.error.0000"})
        self.assertIsNone(nb.library_times(d)[os.path.join(d, "rsl.error.0000")]["wsm5"][6])

    def test_stock_run_has_none(self):
        self.assertEqual(nb.library_times(rundir_with({"rsl.error.0000": "stock16.rsl.error.0000"})), {})


class SteadyCalls(unittest.TestCase):
    """Calls after the first, both columns without it: 425x300x35 em_quarter_ss, H100 host,
    25 steps (16 ranks through MPS) and 15 steps (one rank with 16 threads)."""
    def test_16_ranks_through_mps(self):
        d = rundir_with({"rsl.error.0000": "gpu16mps_steady.rsl.error.0000",
                         "rsl.error.0015": "gpu16mps_steady.rsl.error.0015"})
        st = nb.steady_calls(nb.library_times(d))
        self.assertEqual(sorted(st), ["advect", "advect_pd", "wsm5"])
        n, call, kc, ratio, worst = st["advect"]
        self.assertEqual(n, 99)
        self.assertAlmostEqual(call, (175.6 - 15.9) / 99)           # rank 0, first call out
        self.assertAlmostEqual(kc, (5.9 + 123.0 + 14.9 - 1.4) / 99)  # its kernels + copies too
        self.assertAlmostEqual(ratio, 159.7 / 142.4)
        self.assertAlmostEqual(worst, (129.6 - 16.3) / (5.7 + 79.9 + 12.7 - 0.5))  # rank 15
        self.assertAlmostEqual(st["wsm5"][3], (37.7 - 3.2) / (3.5 + 24.7 + 5.5 - 2.6))

    def test_one_rank(self):
        st = nb.steady_calls(nb.library_times(rundir_with({"rsl.error.0000": "gpu1x16.rsl.error.0000"})))
        self.assertEqual({k: v[0] for k, v in st.items()}, {"advect": 59, "advect_pd": 29, "wsm5": 14})
        self.assertAlmostEqual(st["advect_pd"][3], (167.4 - 29.2) / (17.8 + 100.9 + 30.3 - 7.3))
        self.assertEqual(st["advect_pd"][3], st["advect_pd"][4])  # one rank: it is the highest

    def test_library_column(self):
        d = rundir_with({"rsl.error.0000": "gpu16mps_steady.rsl.error.0000",
                         "rsl.error.0015": "gpu16mps_steady.rsl.error.0015"})
        lib = nb.library_times(d)
        # 25 steps; of these two ranks rank 0 is the slower: (175.6-15.9 + 111.4-9.6 + 37.7-3.2)
        # / 25 = 11.84 ms of calls, (5.9+123.0+14.9-1.4 + 6.2+78.5+6.5-0.7 + 3.5+24.7+5.5-2.6) / 25
        # = 10.56 of kernels + copies; per call the slower rank's, first call out
        self.assertEqual(nb.library_column(lib, 25),
                         "11.8 / 10.6 (advect 1.61, advect_pd 2.08, wsm5 1.44)")

    def test_older_log_gives_none(self):
        # without first_kc_ms the first call cannot be taken out of the kernels + copies
        d = rundir_with({"rsl.error.0000": "gpu16mps.rsl.error.0000"})
        self.assertEqual(nb.steady_calls(nb.library_times(d)), {})


class Symbols(unittest.TestCase):
    def test_fortran_module_routine(self):
        self.assertEqual(nb.pretty_symbol("__module_mp_wsm5_MOD_wsm52d"), "module_mp_wsm5::wsm52d")

    def test_cpp_template_arguments_dropped(self):
        s = ("wrfgpu::advection::strict::pd_cell_tendency_q<wrfgpu::advection::strict::"
             "tile_tendencies<T>(A const&, int)::{lambda(int)#1}>")
        self.assertEqual(nb.pretty_symbol(s), "wrfgpu::advection::strict::pd_cell_tendency_q")

    def test_cpp_anonymous_namespace_kept(self):
        s = "wrfgpu::advection::strict::(anonymous namespace)::pack_group(wrfgpu::advection::View const&, int)"
        self.assertEqual(nb.pretty_symbol(s), "wrfgpu::advection::strict::(anonymous namespace)::pack_group")

    def test_unnamed(self):
        self.assertEqual(nb.pretty_symbol("0x00000000000878b5"), "(no symbol)")


class RunSpecs(unittest.TestCase):
    def check_refused(self, spec, words):
        d = tempfile.mkdtemp()
        with open(os.path.join(ROOT, "test_data", "namelists", "namelist.input.quarter_ss_node_timed")) as f, \
                open(os.path.join(d, "namelist.input"), "w") as g:
            g.write(f.read())
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "wrf_node_bench.py"),
                            "--rundir", d, "--out", tempfile.mkdtemp(), "--run", spec],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        for w in words:
            self.assertIn(w, p.stderr)

    def test_bad_shape(self):
        self.check_refused("a /bin/true 16", ["RANKSxTHREADS"])

    def test_not_executable(self):
        self.check_refused("a /no/such/wrf.exe 16x1", ["/no/such/wrf.exe", "not an executable"])

    def test_unknown_word(self):
        self.check_refused("a /bin/true 16x1 fast", ["'fast'", "mps, perf nor VAR=VALUE"])

    def test_no_namelist(self):
        d = tempfile.mkdtemp()
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "wrf_node_bench.py"),
                            "--rundir", d, "--out", tempfile.mkdtemp(), "--run", "a /bin/true 1x1"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("namelist.input not found", p.stderr)


class Mps(unittest.TestCase):
    def test_without_the_driver_tool(self):
        # a machine without the NVIDIA driver (CI): a clear message and exit 1, not a shell error
        env = dict(os.environ, PATH="/usr/bin:/bin")
        if subprocess.run(["sh", "-c", "command -v nvidia-cuda-mps-control"], env=env,
                          capture_output=True).returncode == 0:
            self.skipTest("nvidia-cuda-mps-control is installed here")
        p = subprocess.run(["sh", os.path.join(ROOT, "tools", "mps.sh"), "start"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("nvidia-cuda-mps-control not found", p.stderr)

    def test_usage(self):
        p = subprocess.run(["sh", os.path.join(ROOT, "tools", "mps.sh")], capture_output=True, text=True)
        self.assertIn(p.returncode, (1, 2))


if __name__ == "__main__":
    unittest.main()
