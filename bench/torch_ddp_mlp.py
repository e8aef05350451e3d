#!/usr/bin/python3
"""PyTorch DDP over gloo twin of a ranklab `allreduce` run: samples/s of N ranks.

Same model (784-256-128-10, ReLU), loss (softmax cross-entropy), optimizer (SGD lr 0.05,
momentum 0.9), data (Fashion-MNIST train, (x/255 - 0.2860)/0.3530), per-rank batch and
sharding (one shuffled order per epoch, rank r takes positions r, r + N, ...) as ranklab;
one thread per rank (torch, OpenMP and OpenBLAS). Ranks are local processes; gloo
rendezvous through a file, traffic over loopback TCP. The timed loop is `--steps` full
steps after `--warmup` steps; the figure is N * batch * steps over the slowest rank's time.

Usage: torch_ddp_mlp.py --world N --batch B --steps S --warmup W [--json]
"""

import argparse
import os
import sys
import tempfile
import time

# One thread per rank, fixed before torch loads its thread pools.
for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train  # noqa: E402  (the 1-rank twin: data loading and hyper-parameters)

LR, MOMENTUM, SEED = torch_train.LR, torch_train.MOMENTUM, 1


def train_set():
    x, y = torch_train.load_train_set()  # the same file reading and normalization
    return torch.from_numpy(x), torch.from_numpy(y)


def rank_main(rank, args, store, results):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=args.world)
    torch.manual_seed(SEED)  # every rank starts from the same model (DDP also broadcasts it)
    images, labels = train_set()
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                      nn.Linear(128, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = nn.CrossEntropyLoss()
    steps_per_epoch = len(images) // args.world // args.batch
    state = {"epoch": 0, "step": steps_per_epoch, "order": None}

    def step():
        if state["step"] == steps_per_epoch:  # a new shuffle, the same on every rank
            g = torch.Generator().manual_seed(SEED * 1000003 + state["epoch"])
            state["order"] = torch.randperm(len(images), generator=g)[rank::args.world]
            state["epoch"] += 1
            state["step"] = 0
        begin = state["step"] * args.batch
        index = state["order"][begin:begin + args.batch]
        state["step"] += 1
        loss = loss_fn(model(images.index_select(0, index)), labels.index_select(0, index))
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(args.warmup):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    if rank == 0:
        results.put((elapsed.item(), loss.item()))  # SimpleQueue: written before put returns
    dist.destroy_process_group()
    # torch 1.13's gloo teardown hangs now and then in a destructor once this function
    # returns (seen 1 run in 3-5 here); nothing is left to do, so leave without them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.world < 1 or args.batch < 1 or args.steps < 1 or args.warmup < 0:
        sys.exit("torch_ddp_mlp.py: --world, --batch and --steps must be >= 1, --warmup >= 0")
    with tempfile.TemporaryDirectory(prefix="ranklab-ddp-") as folder:
        context = mp.get_context("spawn")
        results = context.SimpleQueue()
        mp.spawn(rank_main, args=(args, os.path.join(folder, "store"), results),
                 nprocs=args.world, join=True)
        seconds, loss = results.get()
    rate = args.world * args.batch * args.steps / seconds
    if args.json:
        print(f'{{"impl":"pytorch-ddp-gloo","world":{args.world},"batch":{args.batch},'
              f'"samples_per_s":{rate:.1f},"final_loss":{loss:.6f}}}')
    else:
        print(f"pytorch {torch.__version__} DDP/gloo, {args.world} ranks, batch {args.batch}: "
              f"{rate:.1f} samples/s ({args.steps} steps in {seconds:.3f} s), loss {loss:.4f}")


if __name__ == "__main__":
    main()
