"""A small, ordinary PyTorch training job: nothing of chakrashim in it.

A two-layer transformer encoder on synthetic token data, trained with AdamW,
with a DataLoader, gradient clipping and a learning-rate schedule: the shape
of a real training loop, small enough to run on a laptop CPU in seconds.

  python examples/train_tiny.py [--steps N] [--step-times FILE]
                                [--step-ends FILE] [--torch-profiler START END]

--step-times FILE    write each step's wall time (seconds, one per line);
                     scripts/bench.sh uses it.
--step-ends FILE     write the time each step ended (time.perf_counter(), one
                     per line): steps S..E took end[E] - end[S-1], the data
                     loader's time included; scripts/bench_simulate.py uses it.
--torch-profiler S E capture steps S..E in-script the way NeMo's ModelPT
                     does (torch.profiler with an ExecutionTraceObserver),
                     for comparison with chakrashim; the time the training
                     thread spends in stop() + export is written to
                     FILE.blocked when --step-times is given.
"""
import argparse
import os
import tempfile
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def build(seed=0):
    torch.manual_seed(seed)
    vocab, seq, dim = 512, 32, 64
    tokens = torch.randint(0, vocab, (256, seq))
    targets = torch.randint(0, vocab, (256, seq))
    data = DataLoader(TensorDataset(tokens, targets), batch_size=16, shuffle=True)
    layer = torch.nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=128, batch_first=True)
    model = torch.nn.Sequential(torch.nn.Embedding(vocab, dim),
                                torch.nn.TransformerEncoder(layer, num_layers=2),
                                torch.nn.Linear(dim, vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.9)
    return data, model, opt, sched, vocab


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--step-times")
    ap.add_argument("--step-ends")
    ap.add_argument("--torch-profiler", nargs=2, type=int, metavar=("START", "END"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    data, model, opt, sched, vocab = build()

    prof, blocked = None, 0.0
    out = tempfile.mkdtemp(prefix="torch-profiler-") if args.torch_profiler else None

    def start_profiler(first, last):
        # NeMo ModelPT's chakra_profile: torch.profiler with an
        # ExecutionTraceObserver, entered at the start step, stepped after
        # each step, stopped after the end step.
        from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, schedule
        et = ExecutionTraceObserver().register_callback(os.path.join(out, "et.json"))
        p = profile(activities=[ProfilerActivity.CPU],
                    schedule=schedule(wait=0, warmup=0, active=last - first + 1),
                    execution_trace_observer=et,
                    on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(out, "kineto.json")))
        p.start()
        return p

    times, ends = [], []
    step = 0
    while step < args.steps:
        for x, y in data:
            t0 = time.perf_counter()
            if args.torch_profiler and step == args.torch_profiler[0]:
                prof = start_profiler(*args.torch_profiler)
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if prof is not None:
                t1 = time.perf_counter()
                if step == args.torch_profiler[1]:
                    prof.stop()  # exports the trace: the training thread waits
                    blocked = time.perf_counter() - t1
                    prof = None
                else:
                    prof.step()
            ends.append(time.perf_counter())
            times.append(ends[-1] - t0)
            print(f"step {step} loss {loss.item():.4f}")
            step += 1
            if step >= args.steps:
                break
    if args.step_ends:
        with open(args.step_ends, "w") as f:
            f.write("\n".join(f"{t:.9f}" for t in ends) + "\n")
    if args.step_times:
        with open(args.step_times, "w") as f:
            f.write("\n".join(f"{t:.9f}" for t in times) + "\n")
        if args.torch_profiler:
            with open(args.step_times + ".blocked", "w") as f:
                f.write(f"{blocked:.9f}\n")


if __name__ == "__main__":
    main()
