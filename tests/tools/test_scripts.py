"""The scripts a new user runs first: their --help ends with the help, and
setup.sh's summary names every installed program (issue #23). CI's report
of its slowest tests (issue #39)."""
import os
import re
import subprocess
import tempfile
import time
import unittest

SOURCE_DIR = os.environ.get("CHAKRASHIM_TEST_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPTS = os.path.join(SOURCE_DIR, "scripts")


class ScriptHelp(unittest.TestCase):
    def test_help_is_the_header_comment_without_code(self):
        for script in ("setup.sh", "demo.sh"):
            r = subprocess.run([os.path.join(SCRIPTS, script), "--help"], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("scripts/%s [--build DIR]" % script, r.stdout)
            self.assertNotIn("set -euo pipefail", r.stdout)
            self.assertFalse(re.search(r"^(here|root)=", r.stdout, re.M), r.stdout)

    def test_setup_names_every_installed_program(self):
        with open(os.path.join(SCRIPTS, "setup.sh")) as f:
            text = f.read()
        for program in ("bin/chakrashim", "bin/chakra-run", "lib/libchakrashim.so"):
            self.assertIn('$prefix/' + program + '"', text)



def last_test_log(build_dir, times):
    """A LastTest.log as CTest writes it, one entry per (name, seconds)."""
    folder = os.path.join(build_dir, "Testing", "Temporary")
    os.makedirs(folder)
    n = len(times)
    with open(os.path.join(folder, "LastTest.log"), "w") as f:
        f.write("Start testing: Dec 03 09:24 UTC\n" + "-" * 58 + "\n")
        for i, (name, seconds) in enumerate(times, 1):
            f.write(f"{i}/{n} Testing: {name}\n{i}/{n} Test: {name}\n"
                    f'Command: "/usr/bin/python3" "test_{name}.py" "-v"\nDirectory: /x\n"{name}" start time: now\n'
                    "Output:\n" + "-" * 58 + "\nTest time = 1.00 sec (in the output, not the entry's)\n"
                    f"<end of output>\nTest time = {seconds:7.2f} sec\n" + "-" * 58 +
                    f'\nTest Passed.\n"{name}" end time: now\n' + "-" * 58 + "\n\n")
        f.write("End testing: Dec 03 09:25 UTC\n")


class SlowestTests(unittest.TestCase):
    def run_times(self, *args):
        r = subprocess.run([os.path.join(SCRIPTS, "test-times.sh"), *args],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()

    def test_the_slowest_of_every_folder_first_with_the_variant_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            main, asan, tsan = (os.path.join(tmp, d) for d in ("build", "build-asan", "build-tsan"))
            last_test_log(main, [(f"unit.t{i}", i / 10) for i in range(20)] + [("e2e.signals", 612.5)])
            last_test_log(asan, [("e2e.cupti", 700.25), ("unit.a", 0.5)])
            lines = self.run_times(main, asan, tsan)  # tsan: no log, left out
            self.assertEqual(len(lines), 10, lines)
            self.assertEqual([l.split()[2:] for l in lines[:3]],
                             [["e2e.cupti", "[asan]"], ["e2e.signals"], ["unit.t19"]])
            self.assertEqual(lines[0].split()[:2], ["700.2", "s"])
            self.assertEqual(self.run_times("-n", "1", asan), ["   700.2 s  e2e.cupti"])
            # A log older than the run is not this run's.
            old = time.time() - 3600
            os.utime(os.path.join(asan, "Testing", "Temporary", "LastTest.log"), (old, old))
            # Halfway between the old log and main's, written in this test
            # (now - 60 s was a race with a slow test on a loaded machine).
            lines = self.run_times("-n", "3", "--since", str(int(old) + 1800), main, asan)
            self.assertEqual([l.split()[2] for l in lines], ["e2e.signals", "unit.t19", "unit.t18"])


if __name__ == "__main__":
    unittest.main()
