"""docs/install.md's build without root or test packages, as a cluster user
runs it (issue 23): CMake directly, no scripts/setup.sh, no apt, no tests,
the header-only libraries from a folder of one's own.

Configures with CHAKRA_BUILD_TESTS=OFF, CHAKRA_HEADER_DEPS_DIR (a folder
holding nlohmann_json's headers and zlib's, nothing else), zlib's header from
that folder with the system's libz.so.1, and the minimal torch
config (what a CUDA torch without the toolkit falls back to), while
CMAKE_DISABLE_FIND_PACKAGE_* forbids finding GoogleTest, spdlog, fmt and
nlohmann_json: configure fails if any of them is still looked for. Then it
builds the preloaded core, whose writers compile nlohmann_json, and the
gzip sink the bridge links, which compiles zlib's header, and checks with `ninja -t deps` that they came from the folder and
that no spdlog, fmt, nlohmann or zlib header came from /usr/include. (The whole build with
these flags is e2e.gpu_check_dry's, scripts/gpu-check.sh --dry.)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import chakra_test as ct  # noqa: E402

CMAKE = os.environ.get("CHAKRASHIM_TEST_CMAKE", "cmake")
CUPTI_INCLUDE = os.environ.get("CHAKRASHIM_TEST_CUPTI_INCLUDE", "")
LAUNCHER = os.environ.get("CHAKRASHIM_TEST_CXX_LAUNCHER", "")
BUILD_DIR = os.environ.get("CHAKRASHIM_TEST_BUILD_DIR", "")
SYSTEM_HEADER = re.compile(r"^/usr/include/((spdlog|fmt|nlohmann)/|(zlib|zconf)\.h$)")


def system_libz():
    for pattern in ("/lib/*/libz.so.1", "/usr/lib/*/libz.so.1", "/lib64/libz.so.1", "/usr/lib64/libz.so.1"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return ""


class NoRootBuild(unittest.TestCase):
    def setUp(self):
        ct.require(self, ct.SOURCE_DIR and BUILD_DIR, "run by CTest")
        ct.require(self, not ct.SANITIZE, "a plain build, as a user makes it")
        ct.require(self, shutil.which("ninja"), "ninja is not on PATH")
        self.libz = system_libz()
        ct.require(self, self.libz, "no libz.so.1 on this system")
        # Under the build folder (not /tmp), so that ccache's base_dir covers
        # it and a second run is quick.
        os.makedirs(os.path.join(BUILD_DIR, "tests"), exist_ok=True)
        self.root = tempfile.mkdtemp(prefix="install-no-root-", dir=os.path.join(BUILD_DIR, "tests"))
        self.addCleanup(shutil.rmtree, self.root, True)

    def run_step(self, what, cmd, timeout):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=ct.clean_env(), cwd=self.root)
        self.assertEqual(r.returncode, 0, "%s failed: %s\n%s\n%s" % (
            what, " ".join(cmd), r.stdout[-4000:], r.stderr[-4000:]))
        return r.stdout + r.stderr

    def test_configure_and_build_the_core_without_tests_or_system_headers(self):
        # docs/install.md, step 1: a folder with nlohmann_json's headers and
        # zlib's, copied from a machine that has them (here: this one).
        deps = os.path.join(self.root, "deps")
        include = os.path.join(deps, "include")
        os.makedirs(include)
        ct.require(self, os.path.isdir("/usr/include/nlohmann"), "no nlohmann_json headers to copy")
        shutil.copytree("/usr/include/nlohmann", os.path.join(include, "nlohmann"))
        for h in ("zlib.h", "zconf.h"):
            found = [p for p in ("/usr/include/" + h, "/usr/include/%s-linux-gnu/%s" % (os.uname().machine, h))
                     if os.path.isfile(p)]
            ct.require(self, found, "no %s to copy" % h)
            shutil.copy(found[0], include)
        build = os.path.join(self.root, "build")
        cmd = [CMAKE, "-S", ct.SOURCE_DIR, "-B", build, "-G", "Ninja",
               "-DCMAKE_BUILD_TYPE=Release", "-DCHAKRA_BUILD_TESTS=OFF",
               "-DPython3_EXECUTABLE=" + ct.PYTHON,
               "-DCHAKRA_HEADER_DEPS_DIR=" + deps,
               "-DZLIB_INCLUDE_DIR=" + os.path.join(deps, "include"), "-DZLIB_LIBRARY=" + self.libz,
               "-DCHAKRA_TORCH_CONFIG=minimal"]
        cmd += ["-DCMAKE_DISABLE_FIND_PACKAGE_%s=ON" % p for p in ("GTest", "spdlog", "fmt", "nlohmann_json")]
        if CUPTI_INCLUDE:
            cmd.append("-DCHAKRA_CUPTI_INCLUDE_DIR=" + CUPTI_INCLUDE)
        if LAUNCHER:
            cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=" + LAUNCHER, "-DCMAKE_C_COMPILER_LAUNCHER=" + LAUNCHER]
        out = self.run_step("configure", cmd, 300)
        self.assertIn("(minimal config)", out)
        targets = self.run_step("listing targets", ["ninja", "-C", build, "-t", "targets", "all"], 60)
        self.assertNotIn("chakrashim_unit_tests", targets, "CHAKRA_BUILD_TESTS=OFF still builds tests")
        self.assertIn("libchakrashim_torch.so", targets)
        self.assertIn("libchakrashim_core.so", targets)
        self.run_step("build", ["ninja", "-C", build, "chakrashim", "chakrashim_gzip"], 900)
        deps_used = self.run_step("ninja -t deps", ["ninja", "-C", build, "-t", "deps"], 60)
        # ninja names headers relative to the build folder where it can.
        used = set(os.path.normpath(os.path.join(build, l.strip()))
                   for l in deps_used.splitlines() if l.startswith("    "))
        # The core's writers compile nlohmann_json; the gzip sink, zlib's
        # header (the core itself needs no libz: preload.exports).
        for header in ("nlohmann/json.hpp", "zlib.h"):
            self.assertIn(os.path.join(deps, "include", header), used,
                          "%s did not come from the deps folder" % header)
        leaked = sorted(h for h in used if SYSTEM_HEADER.match(h))
        self.assertEqual(leaked, [], "system headers used instead of the folder")

if __name__ == "__main__":
    unittest.main()
