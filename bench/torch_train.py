#!/usr/bin/python3
"""PyTorch twin of bench_train_throughput: 1-rank training throughput of the benchmark models.

Same models (mlp: 784-256-128-10, ReLU; cnn: conv(1->16, 5x5, pad 2) maxpool ReLU
conv(16->32) maxpool ReLU fc(1568->10), ReLU after the pooling as ranklab builds it: the
same function as ReLU before it, with a quarter of the work for both; cnn-wide: channels
32, 64 and a 256-128 head, the quickstart with model.kind = "cnn"), loss (softmax cross-entropy), optimizer (SGD lr
0.05, momentum 0.9), data (Fashion-MNIST train, (x/255 - 0.2860)/0.3530) and step as
ranklab: gather the batch from a shuffled order (index_select), forward, zero grads,
backward, update. Prints the same JSON line as `bench_train_throughput --json`, with impl
"pytorch" (samples/s only: the GEMM FLOP count is ranklab's). OpenBLAS gets the same thread
count as OpenMP, and OMP_WAIT_POLICY defaults to PASSIVE.

gpt: nanoGPT's decoder as tests/reference/torch_training_steps.py builds it (the head tied to
the token embedding), 4 blocks, 4 heads, width 128, context 64, on the same windows of the
default text corpus (/usr/share/games/fortunes/songs-poems) as ranklab's text data; the loss
over every token.

Usage: torch_train.py --model mlp|cnn|cnn-wide|gpt --batch N --threads T --steps S --warmup W [--json]
"""

import argparse
import ctypes
import gzip
import math
import os
import struct
import sys
import time

import numpy as np

DATA_FOLDER = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530
LR, MOMENTUM = 0.05, 0.9
SEED = 1


def read_idx(path, magic, dims):
    """The payload of a gzipped IDX file, checked against its magic number."""
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        sys.exit(f"torch_train.py: {path}: cannot read: {e}")
    header = 4 + 4 * dims
    if len(raw) < header or struct.unpack(">I", raw[:4])[0] != magic:
        sys.exit(f"torch_train.py: {path}: not an IDX file with magic {magic:#x}")
    shape = struct.unpack(">" + "I" * dims, raw[4:header])
    payload = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if payload.size != math.prod(shape):
        sys.exit(f"torch_train.py: {path}: holds {payload.size} bytes, header promises {shape}")
    return payload.reshape(shape)


TEXT_CORPUS = "/usr/share/games/fortunes/songs-poems"
GPT = {"vocab": 256, "context": 64, "width": 128, "heads": 4, "blocks": 4}


def load_text_windows():
    """ranklab's text windows of the first 90 % of the corpus: tokens and next tokens."""
    with open(TEXT_CORPUS, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8)
    train = data[: len(data) * 9 // 10]
    t = GPT["context"]
    count = (len(train) - 1) // t
    x = train[: count * t].reshape(count, t).astype(np.int64)
    y = train[1 : count * t + 1].reshape(count, t).astype(np.int64)
    return x, y


def load_train_set():
    images = read_idx(f"{DATA_FOLDER}/train-images-idx3-ubyte.gz", 0x803, 3)
    labels = read_idx(f"{DATA_FOLDER}/train-labels-idx1-ubyte.gz", 0x801, 1)
    x = (images.reshape(len(images), -1).astype(np.float32) / 255.0 - MEAN) / STD
    return x.astype(np.float32), labels.astype(np.int64)


def openblas_in_process():
    """The OpenBLAS that torch loaded (it calls sgemm_ through it), or None."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libopenblas" in path:
                return ctypes.CDLL(path)
    return None


def set_blas_threads(threads):
    # torch.set_num_threads sets OpenMP (and MKL), not OpenBLAS: without this its GEMMs
    # would use every core while ranklab's use `threads`.
    blas = openblas_in_process()
    if blas is None:
        print("torch_train.py: torch did not load OpenBLAS; BLAS threads not set", file=sys.stderr)
        return
    blas.openblas_set_num_threads(threads)
    if blas.openblas_get_num_threads() != threads:
        sys.exit(f"torch_train.py: asked OpenBLAS for {threads} threads, "
                 f"it uses {blas.openblas_get_num_threads()}")


def positive(minimum):
    def parse(text):
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expects an integer >= {minimum}, got {text}")
        return value
    return parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("mlp", "cnn", "cnn-wide", "gpt"), default="mlp")
    parser.add_argument("--batch", type=positive(1), default=64)
    parser.add_argument("--threads", type=positive(1), default=1)
    parser.add_argument("--steps", type=positive(1), default=500)
    parser.add_argument("--warmup", type=positive(0), default=20)
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                        help="bf16: the forward and loss under torch.autocast('cpu', bfloat16)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    # Debian's torch runs OpenMP beside a pthreads OpenBLAS: with libgomp's default spinning,
    # idle OpenMP workers hold the cores OpenBLAS needs and T > 1 runs 4-5x slower. Read by
    # libgomp when torch loads; an OMP_WAIT_POLICY already set is respected.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    set_blas_threads(args.threads)
    torch.manual_seed(SEED)

    x_np, y_np = load_text_windows() if args.model == "gpt" else load_train_set()
    images, labels = torch.from_numpy(x_np), torch.from_numpy(y_np)
    count = len(images)
    steps_per_epoch = count // args.batch
    if steps_per_epoch == 0:
        sys.exit(f"torch_train.py: --batch {args.batch} exceeds the {count} training samples")

    if args.model == "gpt":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "tests", "reference"))
        from torch_training_steps import Gpt
        model = Gpt(**GPT)
        with torch.no_grad():  # GPT-2's initialisation, as ranklab's makeGpt draws it
            for name, p in model.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif p.dim() == 2:
                    std = 0.02 / (2 * GPT["blocks"]) ** 0.5 if "proj" in name else 0.02
                    p.normal_(0.0, std)
    elif args.model == "mlp":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10))
    elif args.model == "cnn":
        images = images.reshape(count, 1, 28, 28)  # NCHW, as nn.Conv2d wants
        model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                              nn.Conv2d(16, 32, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                              nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    else:
        images = images.reshape(count, 1, 28, 28)
        model = nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                              nn.Conv2d(32, 64, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
                              nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU(),
                              nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = nn.CrossEntropyLoss()

    order = torch.randperm(count)
    state = {"in_epoch": 0, "order": order}

    def step():
        # Reshuffle when the epoch runs out, as ranklab's ShardLoader does.
        if state["in_epoch"] == steps_per_epoch:
            state["order"] = torch.randperm(count)
            state["in_epoch"] = 0
        begin = state["in_epoch"] * args.batch
        index = state["order"][begin:begin + args.batch]
        state["in_epoch"] += 1
        xb = images.index_select(0, index)  # (B, 784) or (B, 1, 28, 28)
        yb = labels.index_select(0, index)  # (B), the GPT's (B, T)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
            out = model(xb)  # the GPT's: (B, T, vocab), a label per token
            loss = loss_fn(out.reshape(-1, out.shape[-1]).float(), yb.reshape(-1))
        optimizer.zero_grad(set_to_none=False)  # zero in place, as Network::zeroGrads does
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(args.warmup):
        step()
    cpu_start = time.process_time()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    final_loss = loss.item()  # waits for the last step, before the clocks stop
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    samples_per_s = args.steps * args.batch / seconds

    if not math.isfinite(final_loss):
        sys.exit(f"torch_train.py: final loss is {final_loss}, training diverged")
    if args.json:
        tokens = images.shape[1] if args.model == "gpt" else 1
        print(f'{{"impl":"pytorch","model":"{args.model}","dtype":"{args.dtype}",'
              f'"batch":{args.batch},"threads":{args.threads},'
              f'"samples_per_s":{samples_per_s:.1f},"tokens_per_s":{samples_per_s * tokens:.1f},'
              f'"cpu_s":{cpu_seconds:.4f},"wall_s":{seconds:.4f},"final_loss":{final_loss:.6f}}}')
    else:
        print(f"pytorch {torch.__version__} {args.model}: batch {args.batch}, "
              f"threads {args.threads}: "
              f"{samples_per_s:.1f} samples/s ({args.steps} steps in {seconds:.3f} s), "
              f"final loss {final_loss:.4f}")


if __name__ == "__main__":
    main()
