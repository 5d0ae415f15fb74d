"""The shape of the tree (issue #35), checked so that it stays:

- The include arrows point down. common/ is the bottom layer; shim/ and
  collector/ build on it; tools/ builds on common/ and on collector's public
  header only. tools/ never includes shim/src or collector/src, shim/ never
  includes collector/src, collector/ never includes shim/, and common/
  includes nothing above it. The CMake targets enforce most of this by their
  include paths (tools' do not name shim/src); this check also catches a
  relative path ("../../shim/src/...") or an include path added later.
- No source file outside tests/ is over 600 lines, and the capture's wiring
  (shim/src/bridge/capture.cpp) stays at most 400: a file that grows past
  that is doing more than one job.
"""
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_ENDINGS = (".c", ".cc", ".cpp", ".h", ".hpp", ".S")

# Where each part's quoted includes may resolve, besides the including
# file's own folder: its own roots and the layers below it.
COMMON = ["common", "common/include"]
ALLOWED = {
    "common": COMMON,
    "collector": ["collector/src", "collector/include"] + COMMON,
    "shim": ["shim/src", "shim/include", "collector/include"] + COMMON,
    "tools": ["tools", "collector/include"] + COMMON,
}
# Every root an include could resolve in: a resolution outside the part's
# allowed roots is an arrow the wrong way.
ALL_ROOTS = ["tools", "shim/src", "shim/include", "collector/src", "collector/include"] + COMMON
MAX_LINES = 600
LIMITS = {"shim/src/bridge/capture.cpp": 400}


def sources(part):
    for folder, _, files in os.walk(os.path.join(ROOT, part)):
        for name in sorted(files):
            if name.endswith(SOURCE_ENDINGS):
                yield os.path.join(folder, name)


def resolve(path, target):
    """Every root folder (relative to ROOT) where `target` exists, and the
    including file's own folder when it resolves there."""
    found = []
    here = os.path.normpath(os.path.join(os.path.dirname(path), target))
    if os.path.exists(here):
        found.append(os.path.relpath(here, ROOT))
    for root in ALL_ROOTS:
        if os.path.exists(os.path.join(ROOT, root, target)):
            found.append(os.path.join(root, target))
    return found


def arrows(part):
    """(file, line, include, where it resolves) for each include of `part`
    that reaches a folder the part may not use."""
    allowed = [os.path.join(r, "") for r in ALLOWED[part]]
    bad = []
    for path in sources(part):
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                where = resolve(path, m.group(1))
                wrong = [w for w in where if not any(w.startswith(a) for a in allowed)]
                if wrong:
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: #include \"{m.group(1)}\" "
                               f"reaches {', '.join(wrong)}")
    return bad


class IncludeArrows(unittest.TestCase):
    def test_each_part_includes_only_itself_and_the_layers_below(self):
        for part in ALLOWED:
            with self.subTest(part=part):
                self.assertEqual(arrows(part), [])

    def test_the_check_sees_a_wrong_arrow(self):
        # A tool that reached into shim/src would be caught: the resolver
        # finds the shim's header for a name only shim/src has.
        self.assertIn("shim/src/bridge/capture.h",
                      resolve(os.path.join(ROOT, "tools", "main.cpp"), "bridge/capture.h"))
        self.assertIn("shim/src/bridge/capture.h",
                      resolve(os.path.join(ROOT, "tools", "main.cpp"), "../shim/src/bridge/capture.h"))


class FileSizes(unittest.TestCase):
    def test_no_source_file_does_more_than_one_job(self):
        over = []
        for part in ("common", "shim", "collector", "tools"):
            for path in sources(part):
                rel = os.path.relpath(path, ROOT)
                with open(path, errors="replace") as f:
                    lines = sum(1 for _ in f)
                limit = LIMITS.get(rel, MAX_LINES)
                if lines > limit:
                    over.append(f"{rel}: {lines} lines (at most {limit})")
        self.assertEqual(over, [])


if __name__ == "__main__":
    unittest.main()
