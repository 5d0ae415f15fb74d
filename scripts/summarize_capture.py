"""A one-screen summary of a capture folder: per rank, the captured steps
with their times, and the ops with the most self time.

  python scripts/summarize_capture.py TRACE_DIR [--top N]
"""
import argparse
import collections
import glob
import json
import os


def self_times(events):
    """Self time per op name: duration minus the children on the same thread."""
    by_thread = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") \
                and not e["name"].startswith("ProfilerStep#"):
            by_thread[e["tid"]].append(e)
    totals = collections.Counter()
    for spans in by_thread.values():
        spans.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in spans:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            if stack:
                totals[stack[-1]["name"]] -= e["dur"]
            totals[e["name"]] += e["dur"]
            stack.append(e)
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace_dir")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.trace_dir, "*_kineto*", "rank-*.json")))
    if not files:
        print(f"no device traces under {args.trace_dir}")
        return 1
    for path in files:
        with open(path) as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        steps = sorted((e for e in events if e.get("name", "").startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        rank = trace.get("distributedInfo", {}).get("rank", "?")
        print(f"rank {rank}: {os.path.relpath(path, args.trace_dir)}")
        for s in steps:
            print(f"  {s['name']:<18} {s['dur'] / 1000:9.3f} ms")
        total = sum(s["dur"] for s in steps) or 1
        print(f"  top {args.top} ops by self time (share of the captured steps):")
        for name, t in self_times(events).most_common(args.top):
            print(f"    {t / 1000:9.3f} ms {100 * t / total:5.1f}%  {name[:70]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
