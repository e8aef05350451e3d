"""ranklab's Python side: a PyTorch job's ranks streamed into ranklab as they train.

    import ranklab.torch
    ranklab.torch.watch(model, optimizer)
    ranklab.torch.log(loss=loss.item())

Launched by ranklab (`ranklab watch`, or a job file's `launch.command`), each rank finds the
run's telemetry address and keys in its environment and sends what ranklab's own ranks send
(docs/pytorch.md). Anywhere else it does nothing.
"""
