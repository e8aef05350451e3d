#!/usr/bin/python3
"""Writes a synthetic PyTorch profiler trace (Kineto's form) of about SIZE megabytes for
ranklab import's speed and memory benchmark (bench/run-import-scale).

Each step looks like a GPU DDP step: a DataLoader fetch, a forward of nested CPU operators,
autograd's backward nodes, one record_param_comms with its size and the NCCL all-reduce
kernel, the compute kernels and a copy on the GPU, the optimizer. --lean writes steps of
five events only, for a run of many steps (the analyses' benchmark on a million step rows).

Usage: make_big_trace.py OUT.json --megabytes 1024 [--rank 0 --world 1] [--lean]
"""

import argparse


def event(name, ts, dur, tid, cat="cpu_op", pid=1, args=""):
    extra = f',"args":{{{args}}}' if args else ""
    return (f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},'
            f'"ts":{ts:.3f},"dur":{dur:.3f}{extra}}}')


def full_step(step, t):
    out = [event(f"ProfilerStep#{step}", t, 9000, 1, "user_annotation")]
    out.append(event("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t + 1, 200, 1))
    out.append(event("DistributedDataParallel.forward", t + 210, 3000, 1, "user_annotation"))
    for i in range(150):  # the forward's operators, each with a child
        out.append(event("aten::linear", t + 220 + 19 * i, 18, 1))
        out.append(event("aten::addmm", t + 221 + 19 * i, 16, 1))
    for i in range(100):
        out.append(event("autograd::engine::evaluate_function: AddmmBackward0",
                         t + 3300 + 40 * i, 38, 2))
    out.append(event("record_param_comms", t + 7300, 4, 2,
                     args='"In msg nelems":6553600,"dtype":"Float","Collective name":"allreduce"'))
    out.append(event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 7310, 900, 7, "kernel", 0,
                     '"In msg nelems":6553600,"dtype":"Float"'))
    for i in range(200):
        out.append(event("ampere_sgemm_128x64_nn", t + 300 + 35 * i, 30, 7, "kernel", 0))
    out.append(event("Memcpy HtoD (Pageable -> Device)", t + 205, 4, 7, "gpu_memcpy", 0))
    out.append(event("Optimizer.step#AdamW.step", t + 8300, 600, 1))
    return out


def lean_step(step, t):
    return [event(f"ProfilerStep#{step}", t, 900, 1, "user_annotation"),
            event("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 1, 50, 1),
            event("autograd::engine::evaluate_function: AddmmBackward0", t + 400, 300, 1),
            event("gloo:all_reduce", t + 700, 100, 3),
            event("Optimizer.step#SGD.step", t + 820, 70, 1)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--megabytes", type=float, default=1024)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world", type=int, default=1)
    parser.add_argument("--lean", action="store_true")
    args = parser.parse_args()
    limit = int(args.megabytes * 2**20)
    make = lean_step if args.lean else full_step
    with open(args.out, "w") as f:
        written = f.write('{"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":%d,'
                          '"world_size":%d},"traceEvents":[\n' % (args.rank, args.world))
        step, t, first = 1, 1000.0, True
        while written < limit:
            text = ",\n".join(make(step, t))
            written += f.write(("" if first else ",\n") + text)
            first = False
            step += 1
            t += 9100 if make is full_step else 1000
        f.write("\n]}\n")
    print(f"{args.out}: {written / 2**20:.0f} MiB, {step - 1} steps")


if __name__ == "__main__":
    main()
