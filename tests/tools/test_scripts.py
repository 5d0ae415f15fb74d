"""The scripts a new user runs first: their --help ends with the help, and
setup.sh's summary names every installed program (issue #23)."""
import os
import re
import subprocess
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


if __name__ == "__main__":
    unittest.main()
