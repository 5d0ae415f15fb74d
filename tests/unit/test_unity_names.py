"""The unit tests compile as unity builds (tests/CMakeLists.txt): CMake
pastes eight test sources into one translation unit, so two files that open
the same namespace share its anonymous namespace too. A helper defined in
two of them with different parameters is then an overload set, and a call
may silently pick the other file's helper (it happened: linked_join_test's
`doc` lost to et_plus_reader_test's, whose document its tests then read).
This check fails when two test sources of one target define a helper of the
same name in the same namespace, whatever the batches are today."""
import collections
import glob
import os
import re
import unittest

UNIT = os.path.dirname(os.path.abspath(__file__))
# One target each: tests/CMakeLists.txt globs these.
TARGETS = {"chakrashim_unit_tests": "*_test.cpp", "chakrashim_tools_unit_tests": "tools/*_test.cpp",
           "chakrashim_convert_tests": "convert/*_test.cpp"}
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{")
# A definition at column 0 (helpers sit at namespace scope, unindented):
# a return type, a name, an opening parenthesis, no ';' before the '{'.
HELPER = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:static\s+|inline\s+|constexpr\s+)*"
                    r"[\w:<>,*&\s]*?[\w>*&]\s+[*&]?(\w+)\s*\(")
NOT_HELPERS = {"TEST", "TEST_F", "TEST_P", "INSTANTIATE_TEST_SUITE_P", "TYPED_TEST"}


def helpers(path):
    """(namespace, name) of each helper defined at namespace scope."""
    namespace, found = "", set()
    with open(path) as f:
        for line in f:
            m = NAMESPACE.match(line)
            if m:
                namespace = m.group(1)
                continue
            if line[:1] in (" ", "\t", "#", "/", "}", "{", "\n") or line.startswith(("class ", "struct ", "using ")):
                continue
            m = HELPER.match(line)
            if m and m.group(1) not in NOT_HELPERS and not line.rstrip().endswith(";"):
                found.add((namespace, m.group(1)))
    return found


class UnityNames(unittest.TestCase):
    def test_the_parser_sees_helpers(self):
        # A check that finds nothing would pass forever.
        found = helpers(os.path.join(UNIT, "tools", "timeline_test.cpp"))
        self.assertIn(("chakrashim::tools::report", "timeline_event"), found)

    def test_no_helper_name_is_defined_twice_in_one_namespace_of_a_target(self):
        for target, pattern in TARGETS.items():
            where = collections.defaultdict(list)
            for path in sorted(glob.glob(os.path.join(UNIT, pattern))):
                for key in helpers(path):
                    where[key].append(os.path.relpath(path, UNIT))
            twice = {"%s::%s" % k: files for k, files in where.items() if len(files) > 1}
            self.assertEqual(twice, {}, "%s: rename one of each (a unity build merges them)" % target)


if __name__ == "__main__":
    unittest.main()
