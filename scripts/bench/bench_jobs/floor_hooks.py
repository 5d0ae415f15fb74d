"""Two global optimizer step hooks shaped as chakrashim's (three parameters
and a torch.compiler.is_dynamo_compiling() check) that do nothing else: the
least that counting steps with torch.optim's hooks costs. Imported by the
bench jobs beside it (a job runs as a script, so its folder is on
sys.path)."""
import torch
import torch.optim.optimizer as optimizer_impl


def floor_pre_hook(optimizer, args=None, kwargs=None, _c=torch.compiler.is_dynamo_compiling):
    if not _c():
        pass


def floor_post_hook(optimizer, args=None, kwargs=None, _c=torch.compiler.is_dynamo_compiling):
    if not _c():
        pass


def register():
    optimizer_impl.register_optimizer_step_pre_hook(floor_pre_hook)
    optimizer_impl.register_optimizer_step_post_hook(floor_post_hook)
