"""A small CUDA training job for scripts/gpu-check.sh: nothing of chakrashim in it.

A convolutional front end (cuDNN convolutions, batch norm, pooling) feeding a
one-block attention stage (GEMMs, LayerNorm, softmax, dropout, GELU) and a
classifier trained with cross entropy, gradient clipping and AdamW, on
synthetic data. Each step:
  - copies its batch host-to-device from pinned memory (non_blocking=True);
  - runs an auxiliary branch, with gradients, on a second CUDA stream
    (wait_stream both ways, record_stream for the tensor that crosses);
  - keeps a device-to-device copy of the input and copies the loss back to
    pinned host memory (non_blocking=True);
  - ends with torch.cuda.synchronize() after the optimizer step, where its
    wall time is taken.
So the device trace has kernels of many kinds, memcpys HtoD, DtoH and DtoD,
and two streams.

--job picks how the GPU work is launched (each job is judged alike):
  eager     the step above, op by op (cudaLaunchKernel);
  compiled  the same step with the trunk under torch.compile: Inductor's
            Triton kernels, launched through the driver API (cuLaunchKernel),
            inside the compiled graph's ops (on the CPU: Inductor's C++;
            --compile-part mlp compiles only the MLP block, for a quick
            compile on a small CPU);
  graphs    the trunk, head, loss, backward and AdamW step (capturable)
            captured once into a torch.cuda.CUDAGraph before the first step,
            each step copying its batch into the graph's static input and
            replaying it inside record_function("train_step_graph"): its
            kernels come from one cudaGraphLaunch per step. CUDA only.

  python examples/train_cuda.py [--device cuda|cpu] [--steps N]
                                [--job eager|compiled|graphs]
                                [--step-times FILE]
                                [--torch-profiler START END --profiler-trace FILE]

--step-times FILE     write one JSON document: {"step_ms": [...], ...}, the
                      wall time of each step in milliseconds. Step i runs from
                      the end of optimizer step i-1 to the end of optimizer
                      step i (chakrashim's step numbering; step 0 includes
                      the setup).
--torch-profiler S E  profile steps S..E with torch.profiler (CPU and CUDA
                      activities), started at the end of step S-1 and
                      stepped at the end of each step, so that it covers
                      exactly the steps a chakrashim window S..E covers;
                      the chrome trace goes to --profiler-trace.
--device cpu          the same job without CUDA (streams, pinned memory and
                      synchronize become no-ops): a smoke test on CPU.
"""
import argparse
import contextlib
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self, classes=10, dim=128, heads=4):
        super().__init__()
        self.heads = heads
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.embed = nn.Linear(64, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.aux = nn.Sequential(nn.Linear(3 * 8 * 8, dim), nn.Tanh())
        self.head = nn.Linear(dim, classes)
        self.drop = nn.Dropout(0.1)

    def trunk(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.pool(F.relu(self.conv2(h)))            # B, 64, 8, 8
        tokens = self.embed(h.flatten(2).transpose(1, 2))  # B, 64 tokens, dim
        b, t, d = tokens.shape
        q, k, v = self.qkv(self.norm1(tokens)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        mixed = (self.drop(att) @ v).transpose(1, 2).reshape(b, t, d)
        tokens = tokens + self.out(mixed)
        tokens = tokens + self.mlp(self.norm2(tokens))
        return tokens.mean(dim=1)

    def branch(self, x):
        return self.aux(F.avg_pool2d(x, 4).flatten(1))


def make_data(device, batches, batch, classes):
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(batches, batch, 3, 32, 32, generator=g)
    ys = torch.randint(0, classes, (batches, batch), generator=g)
    if device.type == "cuda":
        xs, ys = xs.pin_memory(), ys.pin_memory()
    return xs, ys


def write_times(path, args, step_ms, final_loss):
    doc = {"device": args.device, "steps": args.steps, "step_ms": step_ms,
           "torch_profiler": args.torch_profiler, "profiler_trace": args.profiler_trace,
           "final_loss": final_loss, "job": args.job, "torch": torch.__version__, "pid": os.getpid()}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
        f.write("\n")
    os.replace(tmp, path)


def start_profiler(args, on_cuda):
    import warnings
    from torch.profiler import ProfilerActivity, profile, schedule
    # Warm-up would start collection at step S-1: kept off so that the trace
    # covers S..E as a chakrashim window does; the warning says only that.
    warnings.filterwarnings("ignore", message="Profiler won't be using warmup")
    first, last = args.torch_profiler
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    trace = args.profiler_trace
    prof = profile(activities=activities,
                   schedule=schedule(wait=0, warmup=0, active=last - first + 1, repeat=1),
                   on_trace_ready=lambda p: p.export_chrome_trace(trace))
    prof.start()
    return prof


GRAPH_STEP_MARKER = "train_step_graph"


def capture_step(model, opt, x0, y0):
    """The whole training step captured into one CUDA graph (PyTorch's
    whole-network capture recipe): a few warm-up steps on a side stream,
    then the capture. Returns (graph, {"x", "y", "loss"} static tensors)."""
    static = {"x": x0.clone(), "y": y0.clone()}

    def train_step():
        logits = model.head(model.trunk(static["x"]) + model.branch(static["x"]))
        loss = F.cross_entropy(logits, static["y"])
        loss.backward()
        opt.step()
        return loss

    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            train_step()
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    # The gradients are allocated inside the capture, from the graph's pool:
    # each replay writes them afresh.
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static["loss"] = train_step()
    torch.cuda.synchronize()
    return graph, static


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--step-times")
    ap.add_argument("--torch-profiler", nargs=2, type=int, metavar=("START", "END"))
    ap.add_argument("--profiler-trace")
    ap.add_argument("--job", choices=("eager", "compiled", "graphs"), default="eager")
    ap.add_argument("--compile-part", choices=("trunk", "mlp"), default="trunk",
                    help="--job compiled: what torch.compile compiles (mlp: the MLP block only, "
                         "a compile a small CPU finishes in seconds)")
    args = ap.parse_args()
    if args.torch_profiler:
        first, last = args.torch_profiler
        if not (0 <= first <= last < args.steps):
            ap.error("--torch-profiler needs 0 <= START <= END < --steps")
        if not args.profiler_trace:
            ap.error("--torch-profiler needs --profiler-trace FILE")
    if args.device == "cuda" and not torch.cuda.is_available():
        print("train_cuda.py: CUDA is not available (use --device cpu for a CPU smoke test)",
              file=sys.stderr)
        return 3
    if args.job == "graphs" and args.device != "cuda":
        print("train_cuda.py: --job graphs needs CUDA (CUDA graphs do not exist on the CPU)",
              file=sys.stderr)
        return 3

    device = torch.device(args.device)
    on_cuda = device.type == "cuda"
    torch.manual_seed(0)
    if on_cuda:
        torch.backends.cudnn.benchmark = False  # the same kernels in every run
    else:
        torch.set_num_threads(1)
    classes = 10
    model = Net(classes).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    xs, ys = make_data(device, batches=8, batch=args.batch, classes=classes)
    side = torch.cuda.Stream() if on_cuda else None
    snapshot = torch.empty((args.batch, 3, 32, 32), device=device)
    loss_host = torch.zeros((), pin_memory=on_cuda)

    def on_side():
        return torch.cuda.stream(side) if on_cuda else contextlib.nullcontext()

    def sync():
        if on_cuda:
            torch.cuda.synchronize()

    trunk = model.trunk
    if args.job == "compiled":
        # Compiled on the first call (step 0, with the setup); the backward
        # is compiled too (AOTAutograd), so both passes launch Triton kernels.
        if args.compile_part == "trunk":
            trunk = torch.compile(model.trunk)
        else:
            model.mlp = torch.compile(model.mlp)
    graph = static = None
    if args.job == "graphs":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
        graph, static = capture_step(model, opt, xs[0].to(device), ys[0].to(device))

    prof = None
    if args.torch_profiler and args.torch_profiler[0] == 0:
        prof = start_profiler(args, on_cuda)
    step_ms = []
    t_prev = time.perf_counter()
    for step in range(args.steps):
        i = step % xs.shape[0]
        if graph is not None:
            # The batch goes into the graph's static input; the replay is the
            # step (CHAKRA_STEP_MARKER=train_step_graph counts it: no Python
            # optimizer.step() runs).
            static["x"].copy_(xs[i], non_blocking=True)      # Memcpy HtoD
            static["y"].copy_(ys[i], non_blocking=True)
            with torch.no_grad():
                snapshot.copy_(static["x"])                   # Memcpy DtoD
            with torch.profiler.record_function(GRAPH_STEP_MARKER):
                graph.replay()                                # one cudaGraphLaunch
                loss_host.copy_(static["loss"].detach(), non_blocking=True)  # Memcpy DtoH
            loss = static["loss"]
        else:
            x = xs[i].to(device, non_blocking=True)          # Memcpy HtoD (Pinned -> Device)
            y = ys[i].to(device, non_blocking=True)
            with torch.no_grad():
                snapshot.copy_(x)                             # Memcpy DtoD
            if on_cuda:
                side.wait_stream(torch.cuda.current_stream())
            with on_side():
                aux = model.branch(x)                         # kernels on the second stream
            if on_cuda:
                torch.cuda.current_stream().wait_stream(side)
                aux.record_stream(torch.cuda.current_stream())
            logits = model.head(trunk(x) + aux)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            loss_host.copy_(loss.detach(), non_blocking=True)  # Memcpy DtoH (Device -> Pinned)
            opt.step()                                          # the step ends here
        sync()
        now = time.perf_counter()
        step_ms.append((now - t_prev) * 1e3)
        t_prev = now
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step} loss {float(loss_host):.4f} {step_ms[-1]:.3f} ms", flush=True)
        if args.torch_profiler:
            first, last = args.torch_profiler
            if step == first - 1:
                prof = start_profiler(args, on_cuda)
            elif prof is not None and first <= step <= last:
                prof.step()          # after `last`, this stops and exports the trace
                if step == last:
                    prof.stop()
                    prof = None
    if args.step_times:
        write_times(args.step_times, args, step_ms, float(loss_host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
