#!/usr/bin/python3
"""A small DDP job over gloo with ranklab.torch watching it: the MLP 784-128-10 on random
batches of 64, started as torchrun starts a rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
STRAGGLER_RANK: that rank sleeps 30 ms in each forward. STEPS: how many (default 30).
"""

import os
import time

for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

import ranklab.torch  # noqa: E402


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    if dist.get_rank() == int(os.environ.get("STRAGGLER_RANK", "-1")):
        model[0].register_forward_pre_hook(lambda module, inputs: time.sleep(0.03))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    ranklab.torch.watch(ddp, optimizer)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(dist.get_rank())
    for _ in range(int(os.environ.get("STEPS", "30"))):
        x = torch.randn(64, 784, generator=generator)
        y = torch.randint(0, 10, (64,), generator=generator)
        optimizer.zero_grad()
        loss = loss_fn(ddp(x), y)
        loss.backward()
        optimizer.step()
        ranklab.torch.log(loss=loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
