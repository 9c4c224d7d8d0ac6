"""tools/split_proto on the CPU: the whole Ros3 step that gen_step.py writes (RADM2SORG, 32
cells split over 8 warps by matrix rows) gives the bits of the library's own generated fun,
jac_ghimj, kpp_decomp and kpp_solve, in program order and split over 256 threads run three
ways (step_check.cpp). It guards the reader of the generated code that the prototype, and the
kernel to be built from it, depend on: a change of the generated code's form fails here."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class SplitStep(unittest.TestCase):
    def test_split_step_gives_the_library_functions_bits(self):
        with tempfile.TemporaryDirectory() as d:
            header = os.path.join(d, "step_8.h")
            gen = subprocess.run([sys.executable, "tools/split_proto/gen_step.py", "8", header], cwd=ROOT,
                                 capture_output=True, text=True)
            self.assertEqual(gen.returncode, 0, gen.stderr)
            self.assertRegex(gen.stdout, r"P=8: \d+ statements, \d+ levels, \d+ barriers")
            exe = os.path.join(d, "step_check")
            cc = subprocess.run(["g++", "-std=c++20", "-pthread", "-O1", "-ffp-contract=off",
                                 "-DWRFGPU_MODE_NS=strict", "-Isrc/common", "-Isrc/radm2sorg/generated",
                                 f'-DSTEP_HEADER="{header}"', "tools/split_proto/step_check.cpp", "-o", exe],
                                cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(cc.returncode, 0, cc.stderr[-2000:])
            run = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            m = re.search(r"of (\d+) values, the statements in order differ from the library's functions in (\d+), "
                          r"the split run by 256 threads in (\d+), with the warps taking turns in (\d+) and in "
                          r"reverse in (\d+)", run.stdout)
            self.assertIsNotNone(m, run.stdout)
            self.assertGreater(int(m.group(1)), 40000)
            self.assertEqual([int(m.group(k)) for k in range(2, 6)], [0, 0, 0, 0], run.stdout)


if __name__ == "__main__":
    unittest.main()
