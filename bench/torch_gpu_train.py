#!/usr/bin/env python3
"""PyTorch eager training throughput on a GPU, the peer of ranklab's train.device = "cuda".

The models of the presets resources/jobs/fashion-mlp.toml (mlp: Linear(784, 256) ReLU
Linear(256, 128) ReLU Linear(128, 10)) and fashion-cnn.toml (cnn: Conv2d(1, 16, 5, padding=2)
MaxPool2d(2) ReLU Conv2d(16, 32, 5, padding=2) MaxPool2d(2) ReLU Flatten Linear(1568, 10): ReLU
after the pooling, as ranklab builds it), softmax cross-entropy, SGD lr 0.05 momentum 0.9 (the
MLP preset's; the CNN preset's Adam with --optimizer adam), Fashion-MNIST train images scaled
(x/255 - 0.2860)/0.3530 and reshuffled every epoch. Eager mode, torch's defaults otherwise:
zero_grad() sets grads to None, the optimizer uses its multi-tensor (foreach) path.

fp32 is strict fp32 (TF32 off for matmul and cuDNN, as ranklab's fp32: cuBLAS SGEMM) unless
--tf32; bf16 runs the step under torch.autocast(dtype=torch.bfloat16) (no loss scaler needed).

By default the training set lives on the device and each batch is gathered there
(index_select), the fastest eager input path; --data-on host gathers on the host into pinned
memory and copies it over (non_blocking), as a DataLoader would.

Timing: for each configuration, --warmup steps, torch.cuda.synchronize(), then --steps steps,
synchronize, wall clock: samples/s = steps * batch / seconds. Best of --repeats. One JSON line
per configuration with --json.

Without torch, or with --device cuda where torch sees no GPU, prints "skipped: <why>" and
exits 0. --device cpu runs the same code on the CPU (a check of the script, not a benchmark).

Usage: torch_gpu_train.py [--model mlp,cnn] [--batch 64,512] [--dtype fp32,bf16]
         [--steps 1000] [--warmup 50] [--repeats 1] [--device cuda|cuda:N|cpu]
         [--data DIR] [--data-on device|host] [--optimizer sgd|adam] [--tf32] [--json]
"""

import argparse
import math
import os
import sys
import time

# The CPU peer's IDX reader and option check (bench/torch_train.py, beside this file).
from torch_train import positive, read_idx

DEFAULT_DATA = os.environ.get("RANKLAB_GPU_DEPS_DATA", "/usr/share/datasets/fashion-mnist")
MEAN, STD = 0.2860, 0.3530
SEED = 1
OPTIMIZERS = {"sgd": dict(lr=0.05, momentum=0.9), "adam": dict(lr=0.002)}


def fail(message):
    sys.exit(f"torch_gpu_train.py: {message}")


def comma_list(allowed=None, cast=str):
    def parse(text):
        values = [cast(v) for v in text.split(",") if v]
        if not values:
            raise argparse.ArgumentTypeError("expects a comma-separated list")
        for v in values:
            if allowed is not None and v not in allowed:
                raise argparse.ArgumentTypeError(f"{v!r}: allowed {', '.join(map(str, allowed))}")
            if cast is int and v < 1:
                raise argparse.ArgumentTypeError(f"expects integers >= 1, got {v}")
        return values
    return parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=comma_list(("mlp", "cnn")), default=["mlp", "cnn"])
    parser.add_argument("--batch", type=comma_list(cast=int), default=[64, 512])
    parser.add_argument("--dtype", type=comma_list(("fp32", "bf16")), default=["fp32", "bf16"])
    parser.add_argument("--steps", type=positive(1), default=1000)
    parser.add_argument("--warmup", type=positive(0), default=50)
    parser.add_argument("--repeats", type=positive(1), default=1)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--data-on", choices=("device", "host"), default="device")
    parser.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default="sgd")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 in fp32 (torch's cuDNN default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    try:
        import torch
        from torch import nn
    except Exception as e:  # noqa: BLE001 - any import failure means: no peer here
        print(f"skipped: {sys.executable} cannot import torch: {e}")
        return 0
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda and not torch.cuda.is_available():
        print(f"skipped: torch {torch.__version__} ({sys.executable}) sees no CUDA device "
              f"(torch.cuda.is_available() is False; built for CUDA {torch.version.cuda})")
        return 0
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cudnn.benchmark = False  # torch's default, stated

    images = read_idx(f"{args.data}/train-images-idx3-ubyte.gz", 0x803, 3)  # (N, 28, 28)
    labels = read_idx(f"{args.data}/train-labels-idx1-ubyte.gz", 0x801, 1)
    count = images.shape[0]
    # copy(): the IDX payload is a read-only view of the file's bytes
    images_u8 = torch.from_numpy(images.copy()).reshape(count, 1, 28, 28)
    labels_u8 = torch.from_numpy(labels.copy())
    images_host = (images_u8.float() / 255.0 - MEAN) / STD
    labels_host = labels_u8.long()
    on_device = args.data_on == "device" or not cuda
    if on_device:
        images_all, labels_all = images_host.to(device), labels_host.to(device)
    else:
        images_all, labels_all = images_host, labels_host

    def make_model(kind):
        if kind == "mlp":
            return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                                 nn.ReLU(), nn.Linear(128, 10))
        return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                             nn.Conv2d(16, 32, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                             nn.Flatten(), nn.Linear(32 * 7 * 7, 10))

    def run(kind, batch, dtype):
        torch.manual_seed(SEED)
        model = make_model(kind).to(device)
        optimizer = (torch.optim.SGD if args.optimizer == "sgd" else torch.optim.Adam)(
            model.parameters(), **OPTIMIZERS[args.optimizer])
        loss_fn = nn.CrossEntropyLoss()
        steps_per_epoch = count // batch
        if steps_per_epoch == 0:
            fail(f"--batch {batch} exceeds the {count} training samples")
        index_device = device if on_device else torch.device("cpu")
        state = {"in_epoch": 0, "order": torch.randperm(count, device=index_device)}
        pinned_x = pinned_y = None
        if not on_device:
            pinned_x = torch.empty((batch, 1, 28, 28), pin_memory=True)
            pinned_y = torch.empty((batch,), dtype=torch.long, pin_memory=True)
        autocast = (torch.autocast(device_type=device.type, dtype=torch.bfloat16)
                    if dtype == "bf16" else None)

        def step():
            # Reshuffle when the epoch runs out, as ranklab's ShardLoader does.
            if state["in_epoch"] == steps_per_epoch:
                state["order"] = torch.randperm(count, device=index_device)
                state["in_epoch"] = 0
            begin = state["in_epoch"] * batch
            index = state["order"][begin:begin + batch]
            state["in_epoch"] += 1
            if on_device:
                xb = images_all.index_select(0, index)
                yb = labels_all.index_select(0, index)
            else:
                torch.index_select(images_all, 0, index, out=pinned_x)
                torch.index_select(labels_all, 0, index, out=pinned_y)
                xb = pinned_x.to(device, non_blocking=True)
                yb = pinned_y.to(device, non_blocking=True)
            if autocast is not None:
                with autocast:
                    loss = loss_fn(model(xb), yb)
            else:
                loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        def sync():
            if cuda:
                torch.cuda.synchronize(device)

        best = 0.0
        final_loss = float("nan")
        seconds = 0.0
        for _ in range(args.repeats):
            for _ in range(args.warmup):
                step()
            sync()
            start = time.perf_counter()
            for _ in range(args.steps):
                loss = step()
            sync()
            elapsed = time.perf_counter() - start
            final_loss = loss.item()
            if not math.isfinite(final_loss):
                fail(f"{kind} batch {batch} {dtype}: final loss is {final_loss}, training diverged")
            rate = args.steps * batch / elapsed
            if rate > best:
                best, seconds = rate, elapsed
        return best, seconds, final_loss

    name = torch.cuda.get_device_name(device) if cuda else "cpu"
    if not args.json:
        print(f"torch {torch.__version__} on {name}; eager; data on {'device' if on_device else 'host (pinned)'}; "
              f"{args.optimizer}; fp32 TF32 {'on' if args.tf32 else 'off'}; "
              f"{args.warmup} warm-up + {args.steps} timed steps, best of {args.repeats}")
    for kind in args.model:
        for batch in args.batch:
            for dtype in args.dtype:
                rate, seconds, final_loss = run(kind, batch, dtype)
                if args.json:
                    print(f'{{"impl":"pytorch","torch":"{torch.__version__}","device":"{name}",'
                          f'"model":"{kind}","batch":{batch},"dtype":"{dtype}",'
                          f'"steps":{args.steps},"samples_per_s":{rate:.1f},"wall_s":{seconds:.4f},'
                          f'"final_loss":{final_loss:.6f}}}', flush=True)
                else:
                    print(f"{kind:3} batch {batch:4} {dtype}: {rate:12.1f} samples/s "
                          f"({args.steps} steps in {seconds:.3f} s), final loss {final_loss:.4f}",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
