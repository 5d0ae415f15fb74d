"""An unmodified DeepSpeed pipeline-parallel job (CPU, gloo, 2 stages):
nothing of chakrashim in it.

  DS_ACCELERATOR=cpu python -m torch.distributed.run --nproc-per-node 2 deepspeed_pipe_job.py \
      --zero {0,1} --iterations N

A PipelineModule of five layers over 2 stages, torch's AdamW with decay /
no-decay groups, 2 micro-batches an iteration; each iteration is one
engine.train_batch() (which steps the model through _take_model_step, never
engine.step()) inside record_function("iteration N"). Prints the same lines
as deepspeed_job.py.
"""
import argparse
import os
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--zero", type=int, default=0)
ap.add_argument("--iterations", type=int, default=8)
ap.add_argument("--local_rank", type=int, default=0)
args = ap.parse_args()

import deepspeed  # noqa: E402
from deepspeed.pipe import PipelineModule  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(1)
deepspeed.init_distributed(dist_backend="gloo")
rank = int(os.environ.get("RANK", "0"))
layers = [torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)]
net = PipelineModule(layers=layers, num_stages=2, loss_fn=torch.nn.MSELoss())
params = [p for p in net.parameters() if p.requires_grad]
opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() > 1], "weight_decay": 0.01},
                         {"params": [p for p in params if p.dim() <= 1], "weight_decay": 0.0}], lr=1e-3)
config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "steps_per_print": 10**6,
          "zero_optimization": {"stage": args.zero}}
engine, _, _, _ = deepspeed.initialize(model=net, optimizer=opt, config=config)
gen = torch.Generator().manual_seed(0)
data = iter([(torch.randn(4, 16, generator=gen), torch.randn(4, 4, generator=gen))
             for _ in range(2 * args.iterations)])
for it in range(args.iterations):
    with torch.profiler.record_function(f"iteration {it}"):
        loss = engine.train_batch(data_iter=data)
    print(f"rank {rank} iteration {it} loss {float(loss):.6f} global_steps {engine.global_steps}", flush=True)
torch.distributed.barrier()
time.sleep(0.2)  # as deepspeed_job.py: gloo's worker frees its last tensors first
