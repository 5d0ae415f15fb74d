#!/usr/bin/env python3
"""Are two Execution Traces the same, node for node? Names the first difference.

  et_parity.py A.json B.json [--by-thread] [--loose-threads-without PREFIX]
                              [--skip-under PREFIX] [--common-steps]

For CHAKRA_ET_RECORDER's parity suite (docs/et-recorder.md): the same job and
steps captured once by torch's ExecutionTraceObserver and once by
chakrashim's recorder must give equal ETs once ids are mapped consistently.

What is compared: every key of the document and of every node, in the
nodes' file order: names, ctrl_deps, inputs and outputs (values, shapes,
types, strides), and every attr with its name, type and value.

Ids are matched, not compared: node ids, ctrl_deps, fw_parent, and the
tensor and storage ids inside tensor values (torch takes them all from one
counter) must map one to one between the files (A's 17 is B's 17 everywhere
or B's 23 everywhere, and no two of A's map to one of B's); so must rf_id
(RecordFunction handles) and tid (torch's thread numbers).

Excluded by name, because they change from run to run of the same job
whoever records: the document's pid (the process), time (wall clock at the
window's start), start_ts and finish_ts (steady clock, ms). Nothing in the
nodes is excluded.

chakrashim's deliberate differences from torch's observer
(docs/et-recorder.md) are taken out first: its top-level "chakrashim"
object, and the nodes it lists there as "closed_at_edge" (ops open where
recording stopped, which torch's observer leaves out: their children then
name a parent that is not in its file, matched like any other id).

--by-thread compares the nodes of each thread in order, threads matched by
what they ran (torch numbers threads in the order they first ran an op,
which threads starting together race for; tid is then matched one to one
like the ids): for jobs whose threads interleave differently
from run to run (the order of nodes across threads, and ids, then differ
between two runs of torch's own observer too; ids are matched per thread).

--loose-threads-without PREFIX (with --by-thread): a thread with no node
whose name starts with PREFIX (no optimizer step: a user's side thread that
runs ops in a loop) is compared by what it ran, not how often: how many
loops fit in the window depends on timing, and torch's observer, which
serializes every thread on one lock, lets such a thread run far fewer than
chakrashim's recorder. Every kind of node (name, schema, input types and
shapes) of the thread with fewer nodes must appear in the other's.

--async PREFIXES (comma-separated, e.g. gloo:,nccl:) takes the records that
start on one thread and end on another out of the order: where they appear
and under which op depends on when the communication thread reached them,
and whether the last one ended inside the window is a race. They are
compared by kind (name, inputs); the run with fewer must have no kind the
other lacks. torch's observer pushes such a record on its starting thread's
stack and pops that stack from the communication thread at its end, taking
off whatever op is on top then: the ops after it may get a parent that has
already ended (one written before them) or the thread node, by timing; two
runs of torch's own observer differ there too. So ctrl_deps is compared
only for the nodes that began before the first async record (by id); all
else about the later nodes still is.

--common-steps compares the nodes up to the end of the last step both files
completed (the n-th Optimizer.step# node, n the smaller count; nested
markers count once): for a window ended by a signal, where how far the
partial step got is a race.

--skip-under PREFIX leaves out the nodes nested under a node whose name
starts with PREFIX (the node itself is kept): for work whose place depends
on timing, such as a DataLoader's __next__, which unpickles the batches that
its workers delivered so far, a different number from run to run.
"""
import collections
import json
import re
import sys

EXCLUDED_TOP = ("pid", "time", "start_ts", "finish_ts")
THREAD = "[pytorch|profiler|execution_trace|thread]"


def load(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        # torch's observer writes op names unescaped: a name with a quote
        # (a user annotation) makes its file invalid JSON. Escape those.
        fixed = re.sub(r'("name": ")(.*?)(", "ctrl_deps")',
                       lambda m: m.group(1) + m.group(2).replace('\\', '\\\\').replace('"', '\\"')
                       + m.group(3), text)
        return json.loads(fixed)


# The attrs chakrashim's ET recorder adds to a c10d op: its process group.
GROUP_ATTRS = ("pg_name", "pg_desc", "pg_size")

class Mismatch(Exception):
    pass


class Bijection:
    """One-to-one mapping of ids between the two files.

    With rebind (tensor and storage ids): torch keys them by TensorImpl and
    storage data addresses, so a new tensor at a freed one's address gets
    the old id. Which freed addresses malloc hands out again differs from
    run to run (two runs of torch's own observer on the same job differ
    there), so one file may reuse an old id where the other takes a new or
    another old one. A binding may therefore change from one node to the
    next; within a node it must hold (an in-place op's output is its input
    in both files, two inputs share a storage in both), and the values
    other than ids (offset, numel, itemsize, device) must be equal. Rebound
    bindings are counted and reported."""

    def __init__(self, what, fixed=(), rebind=False):
        self.what = what
        self.rebind = rebind
        self.rebound = 0
        self.ab, self.ba = {}, {}
        for v in fixed:
            self.ab[v] = v
            self.ba[v] = v

    def match(self, a, b, where):
        if self.rebind and (self.ab.get(a, b) != b or self.ba.get(b, a) != a):
            if a in self.ab:
                self.ba.pop(self.ab[a], None)
            if b in self.ba:
                self.ab.pop(self.ba[b], None)
            self.ab[a], self.ba[b] = b, a
            self.rebound += 1
            return
        if self.ab.setdefault(a, b) != b:
            raise Mismatch(f"{where}: {self.what} {a} in A is {self.ab[a]} elsewhere in B, here {b}")
        if self.ba.setdefault(b, a) != a:
            raise Mismatch(f"{where}: {self.what} {b} in B is {self.ba[b]} elsewhere in A, here {a}")


class Ids:
    """Node ids (strict) and tensor/storage ids (with rebinding): one counter
    in torch, so their values never collide."""

    def __init__(self, first_async=None):
        # --async: the ids of the first async record in A and in B
        self.first_async = first_async
        self.stale_ok = first_async is not None
        self.nodes = Bijection("id", fixed=(0, 1))
        self.objects = Bijection("tensor/storage id", fixed=(0,), rebind=True)

    def stale_parent(self, a, b):
        # After the first async record began, a thread's stack may hold stale
        # entries in one file and not the other, or others; the parent then
        # follows from when the async ends came.
        return a["id"] > self.first_async[0] or b["id"] > self.first_async[1]

    def match(self, a, b, where):
        self.nodes.match(a, b, where)

    def new_node(self):
        self.in_node = Bijection("tensor/storage id within the node", fixed=(0,))


def is_tensor_value(v):
    return (isinstance(v, list) and len(v) == 6 and all(isinstance(x, int) for x in v[:5])
            and isinstance(v[5], str))


def compare_values(a, b, ids, where):
    """Values of inputs/outputs: tensor ids matched, the rest equal."""
    if is_tensor_value(a) and is_tensor_value(b):
        for i, what in ((0, " tensor id"), (1, " storage id")):
            ids.in_node.match(a[i], b[i], where + what)
            ids.objects.match(a[i], b[i], where + what)
        if a[2:] != b[2:]:
            raise Mismatch(f"{where}: tensor {a} != {b} (offset, numel, itemsize, device)")
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise Mismatch(f"{where}: {len(a)} items in A, {len(b)} in B: {a} != {b}")
        for i, (x, y) in enumerate(zip(a, b)):
            compare_values(x, y, ids, f"{where}[{i}]")
        return
    if type(a) is not type(b) or a != b:
        raise Mismatch(f"{where}: {json.dumps(a)} != {json.dumps(b)}")


def compare_node(a, b, maps, where):
    ids, rf, tids = maps
    ids.new_node()
    if set(a) != set(b):
        raise Mismatch(f"{where}: keys {sorted(a)} != {sorted(b)}")
    if a["name"] != b["name"]:
        raise Mismatch(f"{where}: name {a['name']!r} != {b['name']!r}")
    where = f"{where} ({a['name']})"
    ids.match(a["id"], b["id"], where + " id")
    if ids.stale_ok and ids.stale_parent(a, b):
        pass  # see --async: a parent left on the stack by an async record's end
    else:
        ids.match(a["ctrl_deps"], b["ctrl_deps"], where + " ctrl_deps")
    for side in ("inputs", "outputs"):
        if set(a[side]) != set(b[side]):
            raise Mismatch(f"{where} {side}: keys {sorted(a[side])} != {sorted(b[side])}")
        for key in a[side]:
            if key == "values":
                compare_values(a[side][key], b[side][key], ids, f"{where} {side}.values")
            elif a[side][key] != b[side][key]:
                raise Mismatch(f"{where} {side}.{key}: {json.dumps(a[side][key])} != "
                               f"{json.dumps(b[side][key])}")
    names_a = [x["name"] for x in a["attrs"]]
    names_b = [x["name"] for x in b["attrs"]]
    # chakrashim's recorder also names a c10d op's process group (issue
    # #50; torch's writes the group as "<Object>" only): the one superset
    # allowed, on the second ET, after torch's own attrs.
    if (a["name"].startswith("c10d::") and names_b[len(names_a):] == list(GROUP_ATTRS)
            and names_b[:len(names_a)] == names_a):
        names_b = names_a
    if names_a != names_b:
        raise Mismatch(f"{where}: attrs {names_a} != {names_b}")
    for x, y in zip(a["attrs"], b["attrs"]):
        at = f"{where} attr {x['name']}"
        if x.get("type") != y.get("type"):
            raise Mismatch(f"{at}: type {x.get('type')} != {y.get('type')}")
        if x["name"] in ("fw_parent",):
            ids.match(x["value"], y["value"], at)
        elif x["name"] == "rf_id":
            rf.match(x["value"], y["value"], at)
        elif x["name"] in ("tid", "fw_tid"):
            tids.match(x["value"], y["value"], at)
        elif x["value"] != y["value"]:
            raise Mismatch(f"{at}: {json.dumps(x['value'])} != {json.dumps(y['value'])}")


def by_thread(nodes):
    """Nodes per thread (torch's tid), in file order."""
    groups = {}
    for n in nodes:
        tid = next((x["value"] for x in n["attrs"] if x["name"] == "tid"), None)
        groups.setdefault(tid, []).append(n)
    return groups


def pair_threads(ta, tb):
    """A's threads with B's: torch numbers threads in the order they first
    ran an op, which two threads starting together race for; so each of A's
    is paired with the unpaired B thread whose kinds of nodes overlap its
    own most (ties: the same number)."""
    kinds_b = {t: {kind(n) for n in ns} for t, ns in tb.items()}
    left = set(tb)
    pairs = []
    for t in sorted(ta, key=lambda t: -len(ta[t])):
        mine = {kind(n) for n in ta[t]}

        def score(u):
            both = len(mine & kinds_b[u]) / max(1, len(mine | kinds_b[u]))
            return (both, u == t)
        best = max(sorted(left, key=str), key=score)
        left.discard(best)
        pairs.append((t, best))
    return pairs


def skip_under(nodes, prefix):
    """The nodes without those nested under a node named PREFIX*."""
    by_id = {n["id"]: n for n in nodes}

    def under(n):
        seen = set()
        parent = by_id.get(n["ctrl_deps"])
        while parent is not None and parent["id"] not in seen and parent["id"] != parent["ctrl_deps"]:
            if parent["name"].startswith(prefix):
                return True
            seen.add(parent["id"])
            parent = by_id.get(parent["ctrl_deps"])
        return False

    return [n for n in nodes if not under(n)]


def kind(n):
    attrs = {x["name"]: x["value"] for x in n["attrs"]}
    return (n["name"], attrs.get("op_schema"), json.dumps(n["inputs"]["types"]),
            json.dumps(n["inputs"]["shapes"]))


def split_async(nodes, prefixes):
    """(the other nodes, the async ones): records that start on one thread
    and end on another (gloo:*, nccl:*), whose place in the file and parent
    depend on when the communication thread got to them."""
    keep, moved = [], []
    for n in nodes:
        (moved if n["name"].startswith(prefixes) else keep).append(n)
    return keep, moved


def outermost_step_ends(nodes):
    """File positions of the outermost Optimizer.step# nodes."""
    by_id = {n["id"]: n for n in nodes}
    ends = []
    for i, n in enumerate(nodes):
        if not n["name"].startswith("Optimizer.step#"):
            continue
        parent, nested = by_id.get(n["ctrl_deps"]), False
        while parent is not None and parent["id"] != parent["ctrl_deps"]:
            if parent["name"].startswith("Optimizer.step#"):
                nested = True
                break
            parent = by_id.get(parent["ctrl_deps"])
        if not nested:
            ends.append(i)
    return ends


def without_chakrashims_own(doc):
    """The document without chakrashim's metadata and the nodes it says it
    closed at an edge (see the top of this file)."""
    meta = doc.get("chakrashim")
    if meta is None:
        return doc
    closed = set(meta.get("closed_at_edge", []))
    out = {k: v for k, v in doc.items() if k != "chakrashim"}
    out["nodes"] = [n for n in doc["nodes"] if n["id"] not in closed]
    return out


def compare(a, b, per_thread=False, loose_prefix=None, skip_prefix=None, async_prefixes=None,
            common_steps=False):
    """(None, rebound ids) when equal, else (the first difference as one line, 0)."""
    try:
        a, b = without_chakrashims_own(a), without_chakrashims_own(b)
        keys_a = set(a) - set(EXCLUDED_TOP)
        keys_b = set(b) - set(EXCLUDED_TOP)
        if keys_a != keys_b:
            raise Mismatch(f"document keys {sorted(keys_a)} != {sorted(keys_b)}")
        for k in keys_a - {"nodes"}:
            if a[k] != b[k]:
                raise Mismatch(f"document {k}: {a[k]!r} != {b[k]!r}")
        na, nb = a["nodes"], b["nodes"]
        if common_steps:
            ea, eb = outermost_step_ends(na), outermost_step_ends(nb)
            n = min(len(ea), len(eb))
            if n == 0:
                raise Mismatch(f"no completed step in {'A' if not ea else 'B'}")
            na, nb = na[:ea[n - 1] + 1], nb[:eb[n - 1] + 1]
        if skip_prefix:
            na, nb = skip_under(na, skip_prefix), skip_under(nb, skip_prefix)
        first_async = None
        if async_prefixes:
            na, async_a = split_async(na, async_prefixes)
            nb, async_b = split_async(nb, async_prefixes)
            # Whether the last ones ended before the window did is a race:
            # the fewer must all be among the more.
            big = float("inf")
            first_async = (min((n["id"] for n in async_a), default=big),
                           min((n["id"] for n in async_b), default=big))
            ka = collections.Counter(map(kind, async_a))
            kb = collections.Counter(map(kind, async_b))
            small, large = (ka, kb) if sum(ka.values()) <= sum(kb.values()) else (kb, ka)
            if small - large:
                raise Mismatch(f"async records of one run missing from the other: "
                               f"{sorted(small - large)[:2]}")
        if not per_thread:
            maps = (Ids(first_async), Bijection("rf_id", fixed=(0,)), Bijection("tid", fixed=(0,)))
            for i, (x, y) in enumerate(zip(na, nb)):
                compare_node(x, y, maps, f"node #{i}")
            if len(na) != len(nb):
                i = min(len(na), len(nb))
                extra = (na if len(na) > len(nb) else nb)[i]
                raise Mismatch(f"{len(na)} nodes in A, {len(nb)} in B; the first unmatched is "
                               f"node #{i} ({extra['name']}) of {'A' if len(na) > len(nb) else 'B'}")
            return None, maps[0].objects.rebound
        ta, tb = by_thread(na), by_thread(nb)
        if len(ta) != len(tb):
            raise Mismatch(f"{len(ta)} threads (tid) in A, {len(tb)} in B")
        tids = Bijection("tid", fixed=(0,))
        rf = Bijection("rf_id", fixed=(0,))
        rebound = 0
        for tid_a, tid_b in pair_threads(ta, tb):
            xs, ys = ta[tid_a], tb[tid_b]
            if loose_prefix is not None and not any(
                    n["name"].startswith(loose_prefix) for n in xs + ys):
                small, large = (xs, ys) if len(xs) <= len(ys) else (ys, xs)
                missing = {kind(n) for n in small} - {kind(n) for n in large}
                if missing:
                    raise Mismatch(f"thread {tid_a}: node kinds of one run missing from the "
                                   f"other: {sorted(missing)[:3]}")
                continue
            # Node ids and tensor ids share torch's counter, which threads
            # interleave: matched per thread.
            ids = Ids(first_async)
            for i, (x, y) in enumerate(zip(xs, ys)):
                compare_node(x, y, (ids, rf, tids), f"thread {tid_a} node #{i}")
            if len(xs) != len(ys):
                raise Mismatch(f"thread {tid_a}: {len(xs)} nodes in A, {len(ys)} in B")
            rebound += ids.objects.rebound
        return None, rebound
    except Mismatch as m:
        return str(m), 0


def main(argv):
    args, options, rest = [], {}, list(argv[1:])
    while rest:
        x = rest.pop(0)
        if x == "--by-thread":
            options["per_thread"] = True
        elif x == "--common-steps":
            options["common_steps"] = True
        elif x in ("--loose-threads-without", "--skip-under") and rest:
            options["loose_prefix" if x == "--loose-threads-without" else "skip_prefix"] = rest.pop(0)
        elif x == "--async" and rest:
            options["async_prefixes"] = tuple(rest.pop(0).split(","))
        elif x.startswith("--"):
            args = None
            break
        else:
            args.append(x)
    if args is None or len(args) != 2:
        sys.stderr.write("et_parity.py: expected two ET files; see the top of this file for usage\n")
        return 2
    a, b = load(args[0]), load(args[1])
    diff, rebound = compare(a, b, **options)
    if diff:
        print(f"different: {diff}")
        return 1
    print(f"same: {len(a['nodes'])} nodes ({rebound} tensor/storage ids bound anew where one "
          f"run reused a freed address and the other did not)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
