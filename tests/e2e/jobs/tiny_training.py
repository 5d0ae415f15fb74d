"""The training step most test jobs repeat: a small linear model and SGD.

Imported by the jobs beside it (a job runs as a script, so its folder is on
sys.path). The ops are those the jobs wrote out before: forward, the loss,
zero_grad, backward, then the optimizer's step, which the shim counts.
"""
import torch


def linear_sgd(inputs=8, outputs=2, lr=0.01):
    model = torch.nn.Linear(inputs, outputs)
    return model, torch.optim.SGD(model.parameters(), lr=lr)


def backward(model, opt, x, y=None):
    """Forward, loss (mean square, or MSE against y), zero_grad, backward."""
    out = model(x)
    loss = out.pow(2).mean() if y is None else torch.nn.functional.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    return loss


def train_step(model, opt, x, y=None):
    """backward, then the optimizer step: one step as the shim counts them."""
    loss = backward(model, opt, x, y)
    opt.step()
    return loss
