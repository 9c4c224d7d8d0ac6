"""tools/perf_kernel_frames.py on a perf script excerpt of the form perf 6.1 prints."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import perf_kernel_frames as pk  # noqa: E402

SAMPLE = """gpu_wrf.exe
\tffffffffa1e0c2d0 clear_page_erms ([kernel.kallsyms])
\tffffffffa1c4a111 do_anonymous_page ([kernel.kallsyms])
\tffffffffa1e0a0b0 exc_page_fault ([kernel.kallsyms])
\tffffffffa2000b26 asm_exc_page_fault ([kernel.kallsyms])
\t7f1c2a3b4c5d [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)

gpu_wrf.exe
\tffffffffa1c10000 unmap_page_range ([kernel.kallsyms])
\tffffffffa2000100 entry_SYSCALL_64 ([kernel.kallsyms])
\t7f1c2a3b0000 __munmap (/usr/lib/x86_64-linux-gnu/libc.so.6)

gpu_wrf.exe
\t55d0c0a1b2c3 __module_optical_averaging_MOD_mieaer (/tmp/chem/x/bin/gpu_wrf.exe)

gpu_wrf.exe
\t55d0c0a1b2c3 __module_optical_averaging_MOD_mieaer (/tmp/chem/x/bin/gpu_wrf.exe)
"""


class Tally(unittest.TestCase):
    def test_kernel_samples_charged_to_first_user_frame(self):
        total, kern, fault = pk.tally(SAMPLE.splitlines(True))
        self.assertEqual(total, 4)
        self.assertEqual(sum(kern.values()), 2)
        self.assertEqual(kern["[unknown]  [libc.so.6]"], 1)
        self.assertEqual(kern["__munmap  [libc.so.6]"], 1)
        self.assertEqual(dict(fault), {"[unknown]  [libc.so.6]": 1})


if __name__ == "__main__":
    unittest.main()
