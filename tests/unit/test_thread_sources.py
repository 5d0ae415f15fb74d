"""unit.thread_sources: the TSan variant's unit sources are every one that
starts a thread or forks, and no other.

TSan judges the orderings between threads; a single-threaded unit test gives
it nothing to judge. So the TSan variant (scripts/test-variants.sh) builds
only the unit sources named in CHAKRA_THREAD_UNIT_SOURCES
(tests/CMakeLists.txt), a fifth of chakrashim_unit_tests' build (issue #53).
This test keeps that list true: it runs each suite of the main build's
chakrashim_unit_tests under libchakra_thread_starts.so (which says each
pthread_create and fork on stderr) and fails on a suite that starts one
from a file the list leaves out, or on a listed file none of whose suites
starts one.

    test_thread_sources.py UNIT_TESTS THREAD_STARTS_LIB UNIT_DIR SOURCE...
"""
import os
import re
import subprocess
import sys
import unittest

BINARY, SEAM, UNIT_DIR, *LISTED = sys.argv[1:] or [None, None, None]
sys.argv[1:] = []
TEST = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*(\w+)\s*,", re.M)


def suites_by_file():
    """{suite: file name} over tests/unit/*_test.cpp."""
    found = {}
    for name in sorted(os.listdir(UNIT_DIR)):
        if name.endswith("_test.cpp"):
            with open(os.path.join(UNIT_DIR, name)) as f:
                for suite in TEST.findall(f.read()):
                    found.setdefault(suite, name)
    return found


def listed_suites():
    out = subprocess.run([BINARY, "--gtest_list_tests"], capture_output=True, text=True, check=True).stdout
    return [line[:-1] for line in out.splitlines() if line and not line.startswith(" ") and line.endswith(".")]


def starts(suite):
    """The thread starts and forks the suite's tests make, as said by the seam."""
    env = dict(os.environ, LD_PRELOAD=SEAM)
    r = subprocess.run([BINARY, "--gtest_filter=%s.*" % suite, "--gtest_brief=1"], env=env,
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise AssertionError("%s failed under the seam:\n%s%s" % (suite, r.stdout[-2000:], r.stderr[-2000:]))
    return sorted(set(l for l in r.stderr.splitlines() if l.startswith("thread_starts: ")))


class ThreadSources(unittest.TestCase):
    def test_the_tsan_list_is_exactly_the_sources_that_start_threads(self):
        by_file = suites_by_file()
        suites = listed_suites()
        self.assertGreater(len(suites), 20, suites)
        threaded = {}
        for suite in suites:
            self.assertIn(suite, by_file, "no tests/unit/*_test.cpp defines suite %s" % suite)
            s = starts(suite)
            if s:
                threaded.setdefault(by_file[suite], []).append("%s (%s)" % (suite, ", ".join(s)))
        # The seam must be seen to work: the collector's pool starts threads.
        self.assertTrue(threaded, "no suite started a thread: is the seam preloaded?")
        missing = sorted(set(threaded) - set(LISTED))
        self.assertEqual(missing, [], "sources whose tests start threads or fork, not in "
                         "CHAKRA_THREAD_UNIT_SOURCES (tests/CMakeLists.txt), so never run under TSan: %s"
                         % {f: threaded[f] for f in missing})
        idle = sorted(set(LISTED) - set(threaded))
        self.assertEqual(idle, [], "listed in CHAKRA_THREAD_UNIT_SOURCES, but none of their tests "
                         "starts a thread or forks (TSan builds them for nothing): %s" % idle)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
