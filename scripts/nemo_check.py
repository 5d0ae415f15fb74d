#!/usr/bin/env python3
"""chakrashim on a real NeMo job (issue #51): scripts/nemo-check.sh runs this
with NeMo's Python; see there for the options.

Runs tests/e2e/jobs/nemo_job.py (a ModelPT tiny transformer LM, Lightning
Trainer, CPU) without the shim, then under it in each case below; judges
each capture by the job's own "batch gs=G" records (G: trainer.global_step
while the batch ran): every captured step N holds exactly the batches of
global step N, in the device trace and in the ET; the job's printed losses
are the plain run's; `chakrashim check`, `report` (forward and backward on
every captured step), `link` and `convert` accept the capture. Also runs
NeMo's own chakra_profile on the same job, and both at once through
`chakra-run --nemo-config`. Prints one table; exit 0 when every row passed.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "tests", "e2e", "jobs", "nemo_job.py")
STEP_LINE = re.compile(r"^global_step (\d+) loss (\S+) ms (\S+)$", re.M)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHAKRA_", "LD_PRELOAD"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(cmd, env, timeout=600):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def losses(stdout):
    return [(int(g), loss) for g, loss, _ in STEP_LINE.findall(stdout)]


def step_ms(stdout):
    return {int(g): float(ms) for g, _, ms in STEP_LINE.findall(stdout)}


class Capture:
    """One rank-0 capture folder (TRACE/JOB_chakra, TRACE/JOB_kineto)."""

    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "0_chakra", "rank-0.json")) as f:
            self.et = json.load(f)
        with open(os.path.join(root, "0_kineto", "rank-0.json")) as f:
            dev = json.load(f)
        self.events = dev["traceEvents"]
        # A step the job's exit cut (flagged in the metadata, the capture
        # line, check and report): no training batch need be in it.
        self.partial = dev.get("chakrashim", {}).get("steps", {}).get("partial_last_step")
        self.steps = sorted((e for e in self.events if e.get("name", "").startswith("ProfilerStep#")
                             and int(e["name"].split("#")[1]) != self.partial), key=lambda e: e["ts"])

    def step_numbers(self):
        return [int(e["name"].split("#")[1]) for e in self.steps]

    def step_of(self, ev):
        for s in self.steps:
            if s["ts"] <= ev["ts"] and ev["ts"] + ev["dur"] <= s["ts"] + s["dur"] + 1e-3:
                return int(s["name"].split("#")[1])
        return None

    def judge_global_steps(self, per_step):
        """Problems with 'step N holds the batches of global step N', in both files."""
        problems = []
        steps = self.step_numbers()
        batches = [e for e in self.events if e.get("name", "").startswith("batch gs=")]
        by_rf = {e["args"]["Record function id"]: e for e in self.events
                 if "Record function id" in e.get("args", {})}
        for e in batches:
            g = int(e["name"].split("=")[1])
            if self.step_of(e) != g:
                problems.append(f"device: batch of global step {g} in step {self.step_of(e)}")
        for n in steps:
            k = sum(1 for e in batches if int(e["name"].split("=")[1]) == n)
            if k != per_step:
                problems.append(f"device: step {n} holds {k} batches of global step {n}, not {per_step}")
        nodes = [n for n in self.et["nodes"] if n["name"].startswith("batch gs=")]
        et_steps = sorted({int(n["name"].split("=")[1]) for n in nodes})
        if et_steps != steps:
            problems.append(f"ET: batches of global steps {et_steps}, device trace steps {steps}")
        for n in nodes:
            rf = next((a["value"] for a in n["attrs"] if a["name"] == "rf_id"), None)
            ev = by_rf.get(rf)
            g = int(n["name"].split("=")[1])
            if ev is None or self.step_of(ev) != g:
                problems.append(f"ET: node of global step {g} joins step {None if ev is None else self.step_of(ev)}")
        return problems


def report_phases(text):
    """{step: (forward, backward)} of the first rank in `chakrashim report`."""
    out, on = {}, False
    for line in text.splitlines():
        if "phases on the stepping thread" in line:
            on = True
            continue
        if on:
            cols = line.split()
            if (cols and cols[0] == "step") or "(partial:" in line:
                continue
            if not cols or not cols[0].isdigit():
                if out:
                    break
                continue
            out[int(cols[0])] = (float(cols[1]), float(cols[2]))
    return out


def tools(cli, folder):
    """'ok', or what failed, for check, report (forward and backward), link, convert."""
    failed = []
    for sub in ("check", "report", "link", "convert"):
        r = run([cli, sub, folder], os.environ.copy())
        if r.returncode != 0:
            failed.append(f"{sub} exit {r.returncode}: {(r.stdout + r.stderr).strip().splitlines()[-1:]}")
        elif sub == "report":
            phases = report_phases(r.stdout)
            if not phases or any(f <= 0 or b <= 0 for f, b in phases.values()):
                failed.append(f"report: forward/backward {phases}")
    return failed


def in_window_ratio(stdout, steps):
    """Median in-window step over the median step after warm-up outside it."""
    ms = step_ms(stdout)
    # Step S's time is printed with global_step S+1 (the line after its optimizer step).
    inside = [ms[s + 1] for s in steps if s + 1 in ms]
    outside = [v for g, v in ms.items() if g >= 3 and g - 1 not in steps and g - 2 not in steps]
    if not inside or not outside:
        return None
    return statistics.median(inside) / statistics.median(outside)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preload", required=True, help="libchakrashim.so")
    ap.add_argument("--cli", required=True, help="the chakrashim command")
    ap.add_argument("--chakra-run", required=True, help="scripts/chakra-run")
    ap.add_argument("--keep", help="keep the captures in this folder")
    args = ap.parse_args()
    py = sys.executable
    work = args.keep or tempfile.mkdtemp(prefix="chakra-nemo-")
    os.makedirs(work, exist_ok=True)
    rows, ok = [], True
    plain = {}

    def plain_run(job_args):
        key = tuple(job_args)
        if key not in plain:
            r = run([py, JOB, *job_args], clean_env())
            if r.returncode != 0:
                raise SystemExit(f"nemo-check: the job fails without the shim:\n{r.stderr[-2000:]}")
            plain[key] = r.stdout
        return plain[key]

    def shim_env(trace, **settings):
        return clean_env(LD_PRELOAD=args.preload, CHAKRA_PROFILE=1, CHAKRA_TRACE_DIR=trace, **settings)

    def judge(name, r, job_args, folder, expect, per_step):
        nonlocal ok
        base = plain_run(job_args)
        notes = []
        if r.returncode != 0:
            notes.append(f"exit {r.returncode}")
        if losses(r.stdout) != losses(base):
            notes.append("losses differ from the plain run")
        steps, gs, tool = "-", "-", "-"
        if os.path.isdir(os.path.join(folder, "0_chakra")):
            cap = Capture(folder)
            got = cap.step_numbers()
            steps = (f"{got[0]}-{got[-1]}" if got else "none") + (f" + partial {cap.partial}" if cap.partial else "")
            if expect is not None and got != expect:
                notes.append(f"steps {got}, expected {expect}")
            problems = cap.judge_global_steps(per_step)
            gs = "yes" if not problems else "NO"
            notes += problems[:3]
            failed = tools(args.cli, folder)
            tool = "ok" if not failed else "FAIL"
            notes += failed
            ratio = in_window_ratio(r.stdout, got)
        else:
            notes.append("nothing captured")
            ratio = None
        passed = not notes
        ok = ok and passed
        rows.append((name, steps, gs, tool, f"{ratio:.2f}" if ratio else "-", "pass" if passed else "FAIL",
                     "; ".join(notes)))

    # 1-3: fixed windows, with and without accumulation, one past the job's end.
    for name, job_args, start, end, expect, per_step in (
            ("window 4-6", ["--steps", "12"], 4, 6, [4, 5, 6], 1),
            ("accumulate 2, window 4-6", ["--steps", "12", "--accumulate", "2"], 4, 6, [4, 5, 6], 2),
            ("window 8-14, job ends at 10", ["--steps", "10"], 8, 14, [8, 9], 1)):
        trace = os.path.join(work, re.sub(r"\W+", "-", name))
        shutil.rmtree(trace, ignore_errors=True)
        r = run([py, JOB, *job_args], shim_env(trace, CHAKRA_START_STEP=start, CHAKRA_END_STEP=end))
        judge(name, r, job_args, trace, expect, per_step)

    # 4: on demand: `chakrashim trigger --steps 3` once the job published its
    # step. The trigger measures the job's rate for up to 2.5 s and asks for a
    # window about 3 s ahead: 6000 steps (about 16 s here) leave room for it
    # on a loaded machine too.
    trace = os.path.join(work, "on-demand")
    shutil.rmtree(trace, ignore_errors=True)
    job_args = ["--steps", "6000"]
    # Its output to files, read at its end: a pipe nobody reads while the
    # trigger waits fills up (a line a step) and stops the job.
    out_file = tempfile.TemporaryFile(mode="w+")
    err_file = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([py, JOB, *job_args], env=shim_env(trace, CHAKRA_ON_DEMAND=1),
                            stdout=out_file, stderr=err_file, text=True)
    deadline = time.monotonic() + 120
    while not glob.glob(os.path.join(trace, ".chakrashim", "*", "*")) and time.monotonic() < deadline \
            and proc.poll() is None:
        time.sleep(0.1)
    trig = run([args.cli, "trigger", trace, "--steps", "3", "--wait"], os.environ.copy(), timeout=300)
    proc.wait(timeout=600)
    out_file.seek(0)
    err_file.seek(0)
    out, err = out_file.read(), err_file.read()
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, err + trig.stdout + trig.stderr)
    windows = sorted(glob.glob(os.path.join(trace, "step-*")))
    judge("on demand, 3 steps", r, job_args, windows[0] if windows else trace, None, 1)

    # 5-6: NeMo's own chakra_profile, alone and beside ours (chakra-run --nemo-config).
    cfg = os.path.join(work, "nemo.yaml")
    nemo_trace = os.path.join(work, "nemo-own")
    shutil.rmtree(nemo_trace, ignore_errors=True)
    os.makedirs(nemo_trace)
    with open(cfg, "w") as f:
        f.write("model:\n  nsys_profile:\n    enabled: false\n  chakra_profile:\n    enabled: true\n"
                f"    start_step: 4\n    end_step: 6\n    trace_dir: {nemo_trace}\n")
    job_args = ["--steps", "12"]
    r = run([py, JOB, *job_args, "--config", cfg], clean_env())
    files = [os.path.relpath(p, nemo_trace) for p in glob.glob(os.path.join(nemo_trace, "**", "*"), recursive=True)
             if os.path.isfile(p)]
    rows.append(("NeMo's own chakra_profile 4-6 (no shim)", "-", "-", "-", "-",
                 "info", f"exit {r.returncode}; files written: {len(files)}" + (f" ({', '.join(files[:4])})"
                                                                               if files else "")))
    both = os.path.join(work, "both")
    shutil.rmtree(both, ignore_errors=True)
    r = run([args.chakra_run, "--lib", args.preload, "--nemo-config", cfg, "--dir", both, "--", py, JOB,
             *job_args, "--config", cfg], clean_env())
    said_both = "captures too" in r.stderr
    judge("both on (chakra-run --nemo-config)", r, job_args, both, [4, 5, 6], 1)
    if not said_both:
        rows[-1] = rows[-1][:5] + ("FAIL", rows[-1][6] + "; chakra-run did not say both capture")
        ok = False

    print("| case | captured steps | steps = trainer.global_step (both files) | check, report, link, convert |"
          " in-window step / normal | result | notes |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"nemo-check: captures in {work}" if args.keep else "nemo-check: captures removed")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
