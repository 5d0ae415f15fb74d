"""The README's commands, run as a user would paste them, so that the README
cannot drift from the tools (issue 23).

Every shell block of README.md carries a mark (readme_blocks.py says which):
- `run` blocks run for real, in README order, each in a fresh bash with
  `set -eo pipefail`, from a folder laid out like a checkout after
  `scripts/setup.sh`: build/prefix is this build, installed there by
  `cmake --install`; examples/ is the source's; `python` is the build's
  interpreter; hta/ is the HTA environment scripts/setup.sh makes. Variables that a block only sets (`PREFIX=...`) stay set for
  the next blocks, as in a terminal. A block passes when it exits 0, prints no
  `[chakrashim ...] error:`/`warning:` line, and, when it runs a capture
  (CHAKRA_PROFILE=1 or chakra-run), prints the `captured steps` line.
- `shape` blocks (the two top commands build and test everything, far too
  heavy to rerun inside the suite): each command's script exists, is
  executable, parses (`bash -n`), answers `--help` with exit 0, and names
  every option the block gives it.
- `skip` blocks need what this machine lacks; the mark says what.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import chakra_test as ct  # noqa: E402
import readme_blocks as rb  # noqa: E402

README = os.path.join(ct.SOURCE_DIR or os.path.join(HERE, "..", ".."), "README.md")
CMAKE = os.environ.get("CHAKRASHIM_TEST_CMAKE", "cmake")
BUILD_DIR = os.environ.get("CHAKRASHIM_TEST_BUILD_DIR", "")
LOG_PROBLEM = re.compile(r"^\[chakrashim[^\]]*\] (error|warning): .*$", re.M)


def read_readme():
    with open(README) as f:
        return f.read()


class WhatANewUserLooksFor(unittest.TestCase):
    """Issue #38: a new user, README only, missed CHAKRA_STEP_MARKER in a
    GAN-style loop, and the contents named neither convert, trigger nor
    repeated and on-demand capture. The README stays short enough to read."""

    def test_the_configuration_section_runs_the_gan_case_with_the_step_marker(self):
        text = read_readme()
        section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
        self.assertIn("GAN", section)
        blocks, _ = rb.shell_blocks(section)
        runs = [b for b in blocks if b.mode == "run" and "CHAKRA_STEP_MARKER=" in b.text]
        self.assertEqual(len(runs), 1, "a run block with CHAKRA_STEP_MARKER in Configuration")
        self.assertIn("examples/train_gan.py", runs[0].text)

    def test_the_contents_name_every_command_and_way_to_capture(self):
        text = read_readme()
        contents = text.split("**Contents:**", 1)[1].split("\n\n", 1)[0]
        for word in ("convert", "trigger", "Repeated", "on-demand", "step marker"):
            self.assertIn(word, contents)
        self.assertLessEqual(text.count("\n"), 205, "the README grew past about 200 lines")


class GuaranteesNameRealTests(unittest.TestCase):
    """docs/guarantees.md says which test proves each promise: every CTest
    name it gives must be a test of the suite, and every test it names in
    parentheses (or after `unit`) must be in that suite's sources. A renamed
    or moved test otherwise leaves the page naming one that no longer runs
    (it named e2e.on_demand for tests that had moved to e2e.control_folder)."""

    ROOT = ct.SOURCE_DIR or os.path.join(HERE, "..", "..")
    SUITE = re.compile(r"`((?:e2e|tools|preload|soak|install|layout|bench|docs|unit)\.[a-z0-9_]+)`"
                       r"(?:\s*\(([^)]*)\))?")
    UNIT = re.compile(r"unit ((?:`[A-Za-z0-9_.*]+`(?:, )?)+)")  # unit `A.*`, `B.C`

    def sources(self, folder, suffixes):
        text = []
        for root, _, files in os.walk(os.path.join(self.ROOT, "tests", folder)):
            for f in files:
                if f.endswith(suffixes):
                    with open(os.path.join(root, f), errors="replace") as src:
                        text.append(src.read())
        return "\n".join(text)

    def test_every_test_the_guarantees_name_exists(self):
        with open(os.path.join(self.ROOT, "docs", "guarantees.md")) as f:
            page = f.read()
        cmake = self.sources("", ("CMakeLists.txt",))
        unit = self.sources("unit", (".cpp", ".h"))
        seen = 0
        for suite, inner in self.SUITE.findall(page):
            seen += 1
            prefix, name = suite.split(".", 1)
            registered = (re.search(rf"NAME {re.escape(suite)}\b", cmake)
                          or re.search(rf"foreach\(_t [^)]*\b{name}\b[^)]*\)\s*add_test\(NAME {prefix}\.\$\{{_t\}}",
                                       cmake)
                          or re.search(rf"chakra_{prefix}_test\({name} ", cmake))
            self.assertTrue(registered, f"docs/guarantees.md names {suite}: no such CTest test")
            if prefix in ("e2e", "tools"):
                # The file its add_test runs (e2e.signals_awkward runs
                # test_signals.py), else test_NAME.py (the foreach loops).
                command = re.search(rf"NAME {re.escape(suite)}\s+COMMAND [^)]*?\b(test_\w+)\.py", cmake)
                script = command.group(1) if command else f"test_{name}"
                path = os.path.join(self.ROOT, "tests", prefix, f"{script}.py")
                self.assertTrue(os.path.exists(path), f"docs/guarantees.md names {suite}: no {path}")
                with open(path) as f:
                    body = f.read()
            else:
                body = self.sources(prefix, (".py", ".cpp", ".sh"))
            # `test_x` names a test exactly; `test_x_*`, `test_x_...`,
            # `Class.*` and `Class` a group by its start or its class.
            for ident, wild in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(\*|\.\.\.|\.\*)?`", inner or ""):
                if ident.startswith("CHAKRA_") or not (ident.startswith("test_") or ident[0].isupper()):
                    continue  # a variable the test sets, a function it refuses: not a test
                end = r"\w*" if wild == "*" or wild == "..." else r"\b"
                self.assertTrue(re.search(rf"^\s*(def|class) {ident}{end}", body, re.M),
                                f"docs/guarantees.md: {suite} has no test {ident}{wild}")
        self.assertGreater(seen, 30, "the guarantees table's test cells were not read")
        for names in self.UNIT.findall(page):
            # `Suite.Name` exactly; `Suite.*`, `Suite.Start*` and `Start*` by
            # their start.
            for suite_name, wild in re.findall(r"`([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?)(\*|\.\*)?`", names):
                suite, _, name = suite_name.partition(".")
                if name:
                    pattern = rf"TEST(_F|_P)?\(\s*{suite},\s*{name}" + (r"\w*\)" if wild else r"\)")
                elif wild == ".*":
                    pattern = rf"TEST(_F|_P)?\(\s*{suite},"
                else:
                    pattern = rf"TEST(_F|_P)?\(\s*{suite}\w*,"
                self.assertTrue(re.search(pattern, unit), f"docs/guarantees.md names unit {suite_name}{wild}")


class Marks(unittest.TestCase):
    """Every shell block of the README is run, shape-checked or skipped with
    a reason; the extractor itself refuses what it should."""

    def test_every_readme_block_is_marked(self):
        blocks, errors = rb.shell_blocks(read_readme())
        self.assertEqual(errors, [], "README.md: " + "; ".join(errors))
        modes = [b.mode for b in blocks]
        self.assertGreaterEqual(modes.count("run"), 5, "the README's commands are not run")
        self.assertEqual(modes[0], "shape", "the README must open with the two commands")

    def test_the_extractor_refuses_unmarked_and_unexplained_blocks(self):
        text = "\n".join([
            "intro", "```sh", "echo unmarked", "```",
            "<!-- readme-test: skip -->", "```bash", "echo no reason", "```",
            "<!-- readme-test: run -->", "```sh", "X=1", "echo $X", "```",
            "<!-- readme-test: skip: needs a GPU -->", "```sh", "nvidia-smi", "```",
            "```", "not a command: output", "```",
            "<!-- readme-test: walk -->", "```console", "echo unknown mark", "```"])
        blocks, errors = rb.shell_blocks(text)
        self.assertEqual([(b.mode, b.reason) for b in blocks], [("run", ""), ("skip", "needs a GPU")])
        self.assertEqual(len(errors), 3, errors)
        self.assertIn("line 2", errors[0])
        self.assertIn("needs a reason", errors[1])

    def test_commands_and_assignments(self):
        text = "# a comment\nPREFIX=$PWD/build/prefix      # where\nA=1 B=2 \\\n  run --x y\n\nexport Z=3"
        self.assertEqual(rb.commands(text), ["PREFIX=$PWD/build/prefix", "A=1 B=2 run --x y", "export Z=3"])
        self.assertEqual([l.split("=")[0] for l in rb.assignments(text)], ["PREFIX", "export Z"])


# Pages the README links to that other work is writing (issue 23's tools
# items, issues 16 and 19). Remove a name once its page is in docs/.
PENDING_PAGES = set()


class Links(unittest.TestCase):
    """Every relative link of README.md and docs/*.md leads to a file of the
    repository, and to a heading of it when it names one."""

    def test_relative_links_and_anchors(self):
        root = os.path.dirname(README)
        pages = ["README.md"] + sorted(
            os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
        broken = []
        for page in pages:
            with open(os.path.join(root, page)) as f:
                text = f.read()
            for path, anchor in rb.relative_links(text):
                target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if target in PENDING_PAGES:
                    continue
                full = os.path.join(root, target)
                if not os.path.exists(full):
                    broken.append("%s: %s does not exist" % (page, target))
                elif anchor and target.endswith(".md"):
                    with open(full) as f:
                        if anchor not in rb.anchors(f.read()):
                            broken.append("%s: %s has no heading #%s" % (page, target, anchor))
        self.assertEqual(broken, [])


class Shapes(unittest.TestCase):
    """The blocks too heavy to run: scripts exist and take their options."""

    def test_shape_blocks(self):
        blocks, _ = rb.shell_blocks(read_readme())
        shapes = [b for b in blocks if b.mode == "shape"]
        self.assertTrue(shapes)
        for block in shapes:
            for cmd in rb.commands(block.text):
                with self.subTest(line=block.line, cmd=cmd):
                    self.check_script_command(cmd)

    def check_script_command(self, cmd):
        words = shlex.split(cmd)
        script = os.path.join(ct.SOURCE_DIR, words[0])
        self.assertTrue(os.path.isfile(script), "%s: no such script in the repository" % words[0])
        self.assertTrue(os.access(script, os.X_OK), "%s is not executable" % words[0])
        r = ct.run(["bash", "-n", script], ct.clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        r = ct.run([script, "--help"], ct.clean_env(), timeout=30)
        self.assertEqual(r.returncode, 0, "%s --help: %s" % (words[0], r.stderr))
        self.assertTrue(r.stdout.strip(), "%s --help printed nothing" % words[0])
        for w in words[1:]:
            if w.startswith("-"):
                self.assertIn(w.split("=")[0], r.stdout, "%s --help does not know %s" % (words[0], w))

    def test_ci_runs_the_second_command(self):
        with open(os.path.join(ct.SOURCE_DIR, ".ci", "run")) as f:
            self.assertRegex(f.read(), r"(?m)^exec scripts/test\.sh\s*$",
                             "the README says CI runs exactly scripts/test.sh")


@unittest.skipUnless(ct.WITH_TORCH, "the README's captures need the torch bridge")
class RunBlocks(unittest.TestCase):
    """The README's runnable blocks, in order, in one checkout-like folder."""

    @classmethod
    def setUpClass(cls):
        if ct.SANITIZE:
            raise unittest.SkipTest("not in sanitizer variants: the README's commands use the plain install")
        if not (ct.SOURCE_DIR and BUILD_DIR):
            raise unittest.SkipTest("run by CTest: CHAKRASHIM_TEST_SOURCE_DIR and _BUILD_DIR")
        tmp = tempfile.TemporaryDirectory(prefix="chakra-readme-")
        cls.addClassCleanup(tmp.cleanup)
        cls.root = tmp.name
        prefix = os.path.join(cls.root, "build", "prefix")
        r = subprocess.run([CMAKE, "--install", BUILD_DIR, "--prefix", prefix],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError("cmake --install %s failed (build everything first): %s"
                                 % (BUILD_DIR, r.stderr[-2000:]))
        os.symlink(os.path.join(ct.SOURCE_DIR, "examples"), os.path.join(cls.root, "examples"))
        bin_dir = os.path.join(cls.root, "bin")
        os.mkdir(bin_dir)
        os.symlink(ct.PYTHON, os.path.join(bin_dir, "python"))
        # hta/: the README's own HTA environment, as the user made it; here
        # the one scripts/setup.sh makes (.deps/hta, HolisticTraceAnalysis 0.5.0).
        hta_python = os.environ.get("CHAKRASHIM_TEST_HTA_PYTHON", "")
        if os.path.exists(hta_python):
            os.symlink(os.path.dirname(os.path.dirname(hta_python)), os.path.join(cls.root, "hta"))
        cls.env = ct.clean_env(PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))

    def test_run_blocks_in_order(self):
        blocks, errors = rb.shell_blocks(read_readme())
        self.assertEqual(errors, [])
        carried = []
        for block in (b for b in blocks if b.mode == "run"):
            with self.subTest(line=block.line):
                self.run_block(block, carried)
            carried += rb.assignments(block.text)

    def run_block(self, block, carried):
        script = "\n".join(["set -eo pipefail"] + carried + [block.text])
        r = subprocess.run(["bash", "-c", script], cwd=self.root, env=self.env,
                           capture_output=True, text=True, timeout=600)
        shown = "README.md line %d:\n%s\n--- stdout:\n%s\n--- stderr:\n%s" % (
            block.line, block.text, r.stdout[-3000:], r.stderr[-3000:])
        self.assertEqual(r.returncode, 0, shown)
        self.assertIsNone(LOG_PROBLEM.search(r.stderr), shown)
        captures = ("CHAKRA_PROFILE=1" in block.text and "LD_PRELOAD" in block.text) \
            or "chakra-run" in block.text
        if captures:
            self.assertIn("captured steps", r.stderr, "no capture: " + shown)


if __name__ == "__main__":
    unittest.main()
