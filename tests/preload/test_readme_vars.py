"""README.md carries exactly the variable table that the code parses by
(`chakrashim vars --markdown`, printed from config_vars.h)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from chakra_test import CLI, SOURCE_DIR, clean_env, run  # noqa: E402


class ReadmeVariableTable(unittest.TestCase):
    def test_readme_holds_the_table_of_config_vars(self):
        r = run([CLI, "vars", "--markdown"], clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        table = r.stdout.strip()
        self.assertGreater(len(table.splitlines()), 10)
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            readme = f.read()
        self.assertIn(table, readme,
                      "README.md's variable table differs from `chakrashim vars --markdown`; "
                      "paste that output into README.md")

    def test_help_and_version_work(self):
        for args in (["--help"], ["vars", "--help"], ["--version"]):
            r = run([CLI] + args, clean_env())
            self.assertEqual(r.returncode, 0, args)
            self.assertTrue(r.stdout)

    def test_usage_errors_exit_2(self):
        for args in ([], ["frobnicate"], ["vars", "--bogus"]):
            r = run([CLI] + args, clean_env())
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr)


if __name__ == "__main__":
    unittest.main()
