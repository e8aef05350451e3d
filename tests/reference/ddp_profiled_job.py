#!/usr/bin/python3
"""A real PyTorch DDP job, profiled: the traces ranklab's importer is tested on.

Two (or --ranks) processes of torch.distributed over gloo train the quickstart's MLP
(784-256-128-10, SGD with momentum) on Fashion-MNIST, each under torch.profiler with
tensorboard_trace_handler, which writes one Chrome-trace JSON per rank into OUT_DIR
(<host>_<pid>.<ms>.pt.trace.json, with the rank in its "distributedInfo"). The first
--wait steps are not recorded and the next --warmup are discarded, as the profiler's
schedule does; --steps are recorded. --slow-rank R --slow-ms M sleeps M ms in rank R's
forward of every step: a straggler whose cost the analyses must find.

Usage: ddp_profiled_job.py OUT_DIR [--ranks 2] [--steps 8] [--batch 64] [--port P]
                           [--slow-rank R --slow-ms M]
"""

import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
LABELS = "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"


def load(count):
    with gzip.open(FASHION) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)[: count * 784]
    with gzip.open(LABELS) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:count]
    x = torch.from_numpy(images.reshape(count, 784).astype(np.float32) / 255.0)
    return x, torch.from_numpy(labels.astype(np.int64))


class Slowed(nn.Module):
    """The MLP, with a sleep in one rank's forward (the planted straggler)."""

    def __init__(self, delay_s):
        super().__init__()
        self.delay_s = delay_s
        self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                 nn.Linear(128, 10))

    def forward(self, x):
        if self.delay_s > 0:
            time.sleep(self.delay_s)
        return self.net(x)


def worker(rank, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.manual_seed(1)
    delay = args.slow_ms / 1000.0 if rank == args.slow_rank else 0.0
    model = nn.parallel.DistributedDataParallel(Slowed(delay))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = load(args.batch * args.ranks * (args.wait + args.warmup + args.steps))
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, y),
        batch_size=args.batch,
        sampler=torch.utils.data.distributed.DistributedSampler(
            torch.utils.data.TensorDataset(x, y), args.ranks, rank, shuffle=False))
    schedule = torch.profiler.schedule(wait=args.wait, warmup=args.warmup, active=args.steps)
    handler = torch.profiler.tensorboard_trace_handler(args.out_dir)
    loss_fn = nn.CrossEntropyLoss()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=schedule, on_trace_ready=handler,
                                record_shapes=True) as prof:
        for inputs, labels in data:
            opt.zero_grad()
            loss = loss_fn(model(inputs), labels)
            loss.backward()
            opt.step()
            prof.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--wait", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--port", type=int, default=29517)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
