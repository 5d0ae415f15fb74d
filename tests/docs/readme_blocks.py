"""The shell blocks of a Markdown file, each with what the README test must
do with it. Pure: text in, blocks or errors out.

A shell block is a fenced block whose info string is sh, bash, shell or
console. The line right before its opening fence must be one of:

  <!-- readme-test: run -->            run it for real, in README order
  <!-- readme-test: shape -->          too heavy to run: check that each
                                       command's script exists and takes the
                                       options given
  <!-- readme-test: skip: REASON -->   not run here, for the reason given

so that no command can be added to the README without a decision about it.
Fences without a language (sample output, file layouts) are not commands.
"""
import re
from dataclasses import dataclass

SHELL_LANGS = {"sh", "bash", "shell", "console"}
_MARK = re.compile(r"^<!--\s*readme-test:\s*(run|shape|skip)\s*(?::\s*(.*?))?\s*-->$")
_FENCE = re.compile(r"^(```+|~~~+)\s*([A-Za-z0-9_+-]*)")


@dataclass
class Block:
    line: int    # 1-based line of the opening fence
    lang: str
    mode: str    # run, shape or skip
    reason: str  # skip only
    text: str    # the block's lines, without the fences


def shell_blocks(markdown):
    """Returns (blocks, errors): every shell block with its mode, and one
    line per block that has no valid mark."""
    lines = markdown.split("\n")
    blocks, errors = [], []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        if lang not in SHELL_LANGS:
            continue
        prev = lines[start - 1].strip() if start > 0 else ""
        mark = _MARK.match(prev)
        where = "line %d" % (start + 1)
        if not mark:
            errors.append("%s: a %s block without a <!-- readme-test: run|shape|skip: REASON --> "
                          "line right before it" % (where, lang))
            continue
        mode, reason = mark.group(1), (mark.group(2) or "").strip()
        if mode == "skip" and not reason:
            errors.append("%s: 'skip' needs a reason: <!-- readme-test: skip: REASON -->" % where)
            continue
        if mode != "skip" and reason:
            errors.append("%s: only 'skip' takes a reason" % where)
            continue
        blocks.append(Block(start + 1, lang, mode, reason, "\n".join(body)))
    return blocks, errors


_ASSIGNMENT = re.compile(r"^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=\S*(\s+#.*)?$")


def assignments(text):
    """The lines of a block that only set a shell variable (`PREFIX=...`,
    `export X=...`): what stays set in a user's terminal for the next block."""
    return [l for l in text.split("\n") if _ASSIGNMENT.match(l.strip())]


def commands(text):
    """The block's commands, one per logical line: comments and blank lines
    dropped, backslash continuations joined."""
    out, cur = [], ""
    for line in text.split("\n"):
        stripped = line.strip()
        if not cur and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            cur += stripped[:-1].rstrip() + " "
            continue
        cur += stripped
        out.append(re.sub(r"\s+#.*$", "", cur).strip())
        cur = ""
    if cur:
        out.append(cur.strip())
    return out


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(markdown):
    """(target, anchor) of every link that is not a URL, outside code."""
    out, fence = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fence = not fence
            continue
        if fence:
            continue
        for target in _LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            out.append((path, anchor))
    return out


def anchors(markdown):
    """GitHub's anchors for the headings of a Markdown file."""
    out, fence = set(), False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fence = not fence
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m and not fence:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            out.add(slug)
    return out
