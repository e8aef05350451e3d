#!/usr/bin/python3
"""Reference training steps from PyTorch 1.13 for ranklab's torch_step_test.

For the GPT (nanoGPT's: vocabulary 32, context 8, width 16, 4 heads, 2 blocks, the head
tied to the token embedding) one batch of token ids and next-token labels, the loss the
mean over every position. For the MLP (784-64-32-10) and the CNN (conv(1->4, 5x5, pad 2) -> ReLU -> pool ->
conv(4->8) -> ReLU -> pool -> flatten -> fc(392->16) -> ReLU -> fc(16->10), in PyTorch's
customary order; ranklab pools before the ReLU, the same function) it draws initial
weights with torch's default initialisation and one batch of inputs and labels, then runs
three full training steps on that batch (forward, zero grads, backward, optimizer step)
with each optimizer case, recording the loss, the gradients and the parameters after each
step. ranklab loads the same weights and batch and must reproduce every figure.

Writes OUT_DIR/<model>.bin: records of (u16 name length, name, u64 count, count float32),
all little-endian. Parameters are flat, in nn.Module.parameters() order (each layer's
weight then bias, PyTorch layouts), which is ranklab's flat buffer order.

Usage: torch_training_steps.py OUT_DIR
"""

import os
import struct
import sys

import torch
from torch import nn

STEPS = 3
BATCH = {"mlp": 16, "cnn": 8, "gpt": 3}
# The GPT's sizes: vocabulary, context, width, heads, blocks (ranklab's makeGpt takes the same).
GPT = {"vocab": 32, "context": 8, "width": 16, "heads": 4, "blocks": 2}

# (name, optimizer factory): the cases ranklab replays, each from the same start.
OPTIMIZERS = {
    "mlp": [
        ("sgd_nesterov", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                   weight_decay=1e-3)),
        ("adam", lambda p: torch.optim.Adam(p, lr=1e-3, weight_decay=1e-3)),
    ],
    "cnn": [
        ("sgd", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=5e-4)),
        ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01)),
    ],
    "gpt": [
        ("sgd", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
        ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.1)),
    ],
}


class Block(nn.Module):
    """nanoGPT's pre-LayerNorm block: causal multi-head attention, then a 4x GELU MLP."""

    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)
        self.register_buffer("causal", torch.tril(torch.ones(context, context)))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        heads = [z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v)]
        q, k, v = heads
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        att = att.masked_fill(self.causal[:t, :t] == 0, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x))))


class Gpt(nn.Module):
    """Token and position embeddings, blocks, a final LayerNorm, the head tied to wte."""

    def __init__(self, vocab, context, width, heads, blocks):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.h = nn.ModuleList(Block(width, heads, context) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T  # (B, T, vocab)


def build(model):
    if model == "gpt":
        gpt = Gpt(**GPT)
        with torch.no_grad():  # LayerNorms away from 1 and 0, so their own gradients show
            for module in gpt.modules():
                if isinstance(module, nn.LayerNorm):
                    module.weight.add_(0.1 * torch.randn_like(module.weight))
                    module.bias.add_(0.1 * torch.randn_like(module.bias))
        return gpt
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 32),
                             nn.ReLU(), nn.Linear(32, 10))
    return nn.Sequential(nn.Conv2d(1, 4, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 7 * 7, 16), nn.ReLU(), nn.Linear(16, 10))


def flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


CLIP_STEPS, CLIP_NORM = 20, 0.5


def clipped_gpt_run(initial, records):
    """20 AdamW steps of the GPT, each on a batch of its own, the gradient clipped to norm 0.5
    by clip_grad_norm_ (as nanoGPT trains): the batches, each step's loss and its norm before
    clipping, and the parameters after the last step."""
    xs = torch.randint(0, GPT["vocab"], (CLIP_STEPS, BATCH["gpt"], GPT["context"]))
    ys = torch.randint(0, GPT["vocab"], (CLIP_STEPS, BATCH["gpt"], GPT["context"]))
    model = build("gpt")
    with torch.no_grad():
        for p, value in zip(model.parameters(), initial):
            p.copy_(value)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    losses, norms = [], []
    for step in range(CLIP_STEPS):
        out = model(xs[step])
        loss = nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), ys[step].reshape(-1))
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)))
        optimizer.step()
        losses.append(float(loss))
    records.put("clip.x", xs.to(torch.float32))
    records.put("clip.labels", ys.to(torch.float32))
    records.put("clip.losses", torch.tensor(losses))
    records.put("clip.norms", torch.tensor(norms))
    records.put("clip.params", flat(model.parameters()))


class RecordFile:
    def __init__(self, path):
        self.file = open(path, "wb")

    def put(self, name, values):
        data = values.detach().to(torch.float32).contiguous().numpy().tobytes()
        encoded = name.encode()
        self.file.write(struct.pack("<H", len(encoded)) + encoded)
        self.file.write(struct.pack("<Q", len(data) // 4) + data)

    def close(self):
        self.file.close()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: torch_training_steps.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(2024)
    for model_name in ("mlp", "cnn", "gpt"):
        start = build(model_name)
        initial = [p.detach().clone() for p in start.parameters()]
        if model_name == "gpt":  # token ids, and the next token at every position
            x = torch.randint(0, GPT["vocab"], (BATCH["gpt"], GPT["context"]))
            labels = torch.randint(0, GPT["vocab"], (BATCH["gpt"], GPT["context"]))
        else:
            x = torch.randn(BATCH[model_name], 1, 28, 28)
            labels = torch.randint(0, 10, (BATCH[model_name],))
        path = os.path.join(out_dir, f"{model_name}.bin")
        records = RecordFile(path + ".tmp")
        records.put("x", x)  # (B, 1, 28, 28): with one channel also ranklab's (B, H, W, C)
        records.put("labels", labels.to(torch.float32))
        records.put("params", flat(initial))
        for case, make_optimizer in OPTIMIZERS[model_name]:
            model = build(model_name)
            with torch.no_grad():
                for p, value in zip(model.parameters(), initial):
                    p.copy_(value)
            optimizer = make_optimizer(model.parameters())
            loss_fn = nn.CrossEntropyLoss()
            for step in range(1, STEPS + 1):
                out = model(x)  # the GPT's: every position's logits, each with its label
                loss = loss_fn(out.reshape(-1, out.shape[-1]), labels.reshape(-1))
                optimizer.zero_grad(set_to_none=False)
                loss.backward()
                records.put(f"{case}.{step}.loss", loss.reshape(1))
                records.put(f"{case}.{step}.grads", flat(p.grad for p in model.parameters()))
                optimizer.step()
                records.put(f"{case}.{step}.params", flat(model.parameters()))
        if model_name == "gpt":
            clipped_gpt_run(initial, records)
        records.close()
        os.replace(path + ".tmp", path)
        print(f"wrote {path}: {sum(p.numel() for p in initial)} parameters, "
              f"batch {BATCH[model_name]}, cases {[c for c, _ in OPTIMIZERS[model_name]]}")


if __name__ == "__main__":
    main()
