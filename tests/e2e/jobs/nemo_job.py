"""A small NeMo ModelPT job (a tiny transformer LM, Lightning Trainer, CPU):
nothing of chakrashim in it.

  python nemo_job.py --steps N [--accumulate K] [--config FILE]

Each training batch runs inside record_function("batch gs=G"), G being
trainer.global_step while it runs: the marker scripts/nemo_check.py judges
the captured steps by. --config reads a YAML with the model's chakra_profile
section (NeMo's own capture; off unless that section says enabled: true).
Prints "global_step G loss L ms T" after each optimizer step (T: the wall
time since the last such line), and "done G" at the end, so that runs compare.
"""
import argparse
import time

import lightning.pytorch as pl
import torch
from omegaconf import OmegaConf

from nemo.core import ModelPT

VOCAB, DIM, SEQ = 64, 32, 16


class TinyLM(ModelPT):
    def __init__(self, cfg, trainer=None):
        super().__init__(cfg=cfg, trainer=trainer)
        self.emb = torch.nn.Embedding(VOCAB, DIM)
        self.block = torch.nn.TransformerEncoderLayer(DIM, 2, 2 * DIM, batch_first=True, dropout=0.0)
        self.head = torch.nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        return self.head(self.block(self.emb(tokens)))

    def training_step(self, batch, batch_idx):
        with torch.profiler.record_function(f"batch gs={self.trainer.global_step}"):
            tokens, = batch
            logits = self(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        super().on_train_batch_end(outputs, batch, batch_idx)
        if (batch_idx + 1) % self.trainer.accumulate_grad_batches == 0:
            now = time.perf_counter()
            took = (now - self._last) * 1e3 if getattr(self, "_last", None) else 0.0
            self._last = now
            print(f"global_step {self.trainer.global_step} loss {outputs['loss'].item():.6f} ms {took:.3f}",
                  flush=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

    def setup_training_data(self, train_data_config):
        g = torch.Generator().manual_seed(0)
        data = torch.randint(0, VOCAB, (4096, SEQ + 1), generator=g)
        self._train_dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=8)

    def setup_validation_data(self, val_data_config):
        self._validation_dl = None

    def train_dataloader(self):
        return self._train_dl

    @classmethod
    def list_available_models(cls):
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--config")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = OmegaConf.create({"train_ds": {}})
    if args.config:
        loaded = OmegaConf.load(args.config)
        cfg = OmegaConf.merge(cfg, loaded.get("model", loaded))
    trainer = pl.Trainer(max_steps=args.steps, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         accumulate_grad_batches=args.accumulate, num_sanity_val_steps=0,
                         limit_val_batches=0)
    model = TinyLM(cfg, trainer=trainer)
    model.setup_training_data(None)
    trainer.fit(model)
    print(f"done {trainer.global_step}", flush=True)


if __name__ == "__main__":
    main()
