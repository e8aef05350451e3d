#!/usr/bin/python3
"""ranklab's quickstart trained by PyTorch: Fashion-MNIST, an MLP 784-256-128-10 (or a small
CNN), DDP over gloo, SGD with momentum, 64 samples a rank a step, as resources/jobs/quickstart.toml
trains it with ranklab's engine. Started as torchrun starts a rank (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT): by `ranklab watch --nproc 4 -- python3 train_fashion_mnist.py`, or
a job file's [launch] command. The lines marked "ranklab" are all it takes to watch it.
"""

import argparse
import gzip
import os
import signal
import time

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

import ranklab.torch  # ranklab (1 of 3)

DATA = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(split, limit):
    images = read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    labels = read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz", 8)
    if limit:
        images, labels = images[:limit], labels[:limit]
    return torch.from_numpy(images.astype(np.float32) / 255.0), torch.from_numpy(labels.astype(np.int64))


def model_of(kind):
    if kind == "cnn":
        return nn.Sequential(nn.Unflatten(1, (1, 28, 28)), nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="train on the first N samples")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--straggler-rank", type=int, default=-1,
                        help="this rank sleeps 30 ms in each forward")
    parser.add_argument("--die-rank", type=int, default=-1, help="this rank kills itself...")
    parser.add_argument("--die-at-step", type=int, default=5,
                        help="...at this step (0: before it calls watch)")
    parser.add_argument("--no-watch", action="store_true", help="train unwatched (the bench)")
    return parser.parse_args()


def main():
    args = arguments()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == args.die_rank and args.die_at_step == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    images, labels = load("train", args.limit)
    torch.manual_seed(1)
    model = model_of(args.model)
    if rank == args.straggler_rank:
        model.register_forward_pre_hook(lambda module, inputs: time.sleep(0.03))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    if not args.no_watch:  # right after DDP's constructor, which syncs the ranks: clocks align
        ranklab.torch.watch(ddp, optimizer)  # ranklab (2 of 3)
    mine = torch.arange(rank, len(labels), world)  # each rank its share, as the engine shards
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    started, cpu_started = time.monotonic(), time.process_time()
    for epoch in range(args.epochs):
        order = mine[torch.randperm(len(mine), generator=torch.Generator().manual_seed(epoch))]
        for start in range(0, len(order) - args.batch_size + 1, args.batch_size):
            batch = order[start:start + args.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(ddp(images[batch]), labels[batch])
            loss.backward()
            optimizer.step()
            step += 1
            if not args.no_watch:
                ranklab.torch.log(loss=loss.item())  # ranklab (3 of 3)
            if rank == args.die_rank and step == args.die_at_step:
                os.kill(os.getpid(), signal.SIGKILL)
    trained_s, cpu_s = time.monotonic() - started, time.process_time() - cpu_started
    if rank == 0:
        print(f"trained {step} steps a rank in {trained_s:.3f} s (cpu {cpu_s:.3f} s)")
        test_images, test_labels = load("t10k", 0)
        with torch.no_grad():
            outputs = model(test_images)
        accuracy = (outputs.argmax(1) == test_labels).float().mean().item()
        print(f"test accuracy {accuracy:.4f} after {step} steps a rank")
        if not args.no_watch:  # stored with the run, as the engine's evaluation is
            ranklab.torch.log(test_accuracy=accuracy,  # ranklab (the test set: optional)
                              test_loss=loss_fn(outputs, test_labels).item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
