"""Watch a PyTorch training loop from inside it (docs/pytorch.md):

    import ranklab.torch
    ranklab.torch.watch(model, optimizer)   # the module as trained, DDP-wrapped or not
    ...
    ranklab.torch.log(loss=loss.item())     # named scalars, for the step in progress

A step ends at each optimizer.step(). Its time is cut at what the hooks see, so the parts add
up to the step: data (the previous step's end to forward's start), forward (to the first
gradient at the model's output, the loss included), backward (to the end of autograd's pass),
then the gradients' all-reduce left to wait for (DDP's buckets, through a communication hook
that times each), and the update. The wait for the slowest rank is a one-number all-reduce
launched with the step's first bucket: it ends when the last rank has arrived.
"""

import atexit
import os
import socket
import sys
import threading
import time

import torch as _torch
import torch.distributed as _dist

from ranklab import telemetry, telemetry_pb2

SPAN_EVERY_VARIABLE = "RANKLAB_SPAN_EVERY"
_watched = None


class _Callbacks:
    """Our callbacks on the backend's futures, counted until freed. PyTorch frees a callback
    on the backend's thread right after it ran, taking the GIL to do so (and would free there
    any Python object whose last reference it drops: the watcher holds those, `hold`); a main
    thread that tears the process group down meanwhile holds the GIL while it joins that
    thread: both wait for ever. So the group is torn down only once every callback is freed
    (`drain`)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.alive = 0

    def track(self, callback):
        with self.lock:
            self.alive += 1
        return _Counted(callback, self)

    def freed(self):
        with self.lock:
            self.alive -= 1

    def drain(self, timeout_s=10.0):
        deadline = time.monotonic() + timeout_s
        while self.alive > 0 and time.monotonic() < deadline:
            time.sleep(0.001)  # lets the backend's thread take the GIL and free them


class _Counted:
    """A callback that says when it is freed (cheaper than a weakref.finalize a bucket)."""
    __slots__ = ("callback", "callbacks")

    def __init__(self, callback, callbacks):
        self.callback, self.callbacks = callback, callbacks

    def __call__(self, done):
        return self.callback(done)

    def __del__(self):
        self.callbacks.freed()


def _drain_before(teardown):
    """`teardown` (torch.distributed.destroy_process_group) once our callbacks are freed."""
    def drained(*args, **kwargs):
        if _watched is not None:
            _watched.callbacks.drain()
        return teardown(*args, **kwargs)
    drained.__wrapped__ = teardown
    return drained


def watch(model, optimizer):
    """Starts sending this rank's steps; returns the watcher, or None outside ranklab."""
    global _watched
    if _watched is not None:
        return _watched
    if not os.environ.get(telemetry.ENDPOINT_VARIABLE):
        print(f"ranklab: not started by ranklab ({telemetry.ENDPOINT_VARIABLE} is not set): "
              "this job is not watched", file=sys.stderr)
        return None
    _watched = _Watcher(model, optimizer)
    atexit.register(_watched.close)
    if not hasattr(_dist.destroy_process_group, "__wrapped__"):
        _dist.destroy_process_group = _drain_before(_dist.destroy_process_group)
    previous_hook = sys.excepthook

    def failed(kind, value, trace):  # the rank's bye says why it ended
        _watched.close(1, f"{kind.__name__}: {value}")
        previous_hook(kind, value, trace)

    sys.excepthook = failed
    return _watched


def log(**scalars):
    """Named scalars for the step in progress: `loss` and `lr` go with the step,
    `test_accuracy` and `test_loss` as an evaluation after the last step, the others as the
    step's log line."""
    if _watched is not None:
        _watched.log(scalars)


def _now():
    return time.monotonic_ns()


def _first_grad_tensor(value):
    """The first tensor of a model's output (a tuple, a list, a dict) that needs a gradient."""
    if isinstance(value, _torch.Tensor):
        return value if value.requires_grad else None
    items = value.values() if isinstance(value, dict) else value
    if isinstance(items, (list, tuple)) or isinstance(value, dict):
        for item in items:
            found = _first_grad_tensor(item)
            if found is not None:
                return found
    return None


def _union(intervals, low=None, high=None):
    """The length of the union of (start, end) intervals, clipped to [low, high]."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if low is not None:
            start = max(start, low)
        if high is not None:
            end = min(end, high)
        if end <= start:
            continue
        if reach is not None and start < reach:
            start = reach
        if end > start:
            total += end - start
            reach = end
    return total


class _Watcher:
    def __init__(self, model, optimizer):
        self.rank = _dist.get_rank() if _dist.is_initialized() else int(os.environ.get("RANK", 0))
        self.world = (_dist.get_world_size() if _dist.is_initialized()
                      else int(os.environ.get("WORLD_SIZE", 1)))
        self.reporter = telemetry.reporter_from_environment(self.rank)
        self.reporter.hello(self.world, socket.gethostname(), os.getpid())
        interval_ms = int(os.environ.get(telemetry.HEARTBEAT_VARIABLE, "500"))
        self.heartbeats = telemetry.Heartbeats(self.reporter, interval_ms / 1000)
        self.span_every = int(os.environ.get(SPAN_EVERY_VARIABLE, "10"))
        self.optimizer = optimizer
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.param_bytes = sum(p.numel() * p.element_size() for p in self.params)
        self.lock = threading.Lock()  # the buckets finish on the backend's thread
        self.callbacks = _Callbacks()
        self.arrival_tensor = _torch.zeros(1)
        self.started = _now()
        self.step_number = 0
        self.pending = None  # the last step, sent when the next begins (or a log names it)
        self.pending_scalars = {}
        self._new_step(self.started)
        model.register_forward_pre_hook(self._forward_pre)
        model.register_forward_hook(self._forward_post)
        self.ddp = isinstance(model, _torch.nn.parallel.DistributedDataParallel)
        if self.ddp:
            model.register_comm_hook(self, _timed_allreduce)
        else:
            self.reporter.event("log", "ranklab.torch: the model is not DDP-wrapped; no "
                                "gradient all-reduce is timed", 0)
        self.original_step = optimizer.step
        optimizer.step = self._optimizer_step
        self.closed = False

    def _new_step(self, at):
        self.previous_end = at
        self.forward_start = self.backward_start = self.backward_end = None
        self.samples = 0
        self.buckets = []  # (index, bytes, start, end)
        self.arrival_start = self.arrival_end = None  # this rank at the step's first bucket
        self.arrival_future = None
        self.scalars = {}
        # What the backend's thread touched two steps ago is long done with: dropped here,
        # on this thread. The last step's is kept to the end (see _Callbacks).
        self.held_before, self.held = getattr(self, "held", []), []

    def log(self, scalars):
        if "test_accuracy" in scalars or "test_loss" in scalars:  # an evaluation, sent now
            self.flush()
            self.reporter.eval(self.step_number, float(scalars.pop("test_loss", 0.0)),
                               float(scalars.pop("test_accuracy", 0.0)))
            if not scalars:
                return
        # Logged after optimizer.step() and before the next forward: the step that just ended.
        if self.pending is not None and self.forward_start is None:
            self.pending_scalars.update(scalars)
        else:
            self.scalars.update(scalars)

    def _forward_pre(self, module, inputs):
        self.flush()
        if self.forward_start is None:  # a second forward in the step (accumulation) goes on
            self.forward_start = _now()
        first = inputs[0] if isinstance(inputs, tuple) and inputs else inputs
        if isinstance(first, _torch.Tensor) and first.dim() > 0:
            self.samples += int(first.shape[0])

    def _forward_post(self, module, inputs, output):
        tensor = _first_grad_tensor(output)
        if tensor is not None:
            tensor.register_hook(self._backward_begins)

    def _backward_begins(self, grad):
        if self.backward_start is None:
            self.backward_start = _now()
            # Runs when autograd's pass ends: queued before DDP's own, so before it waits.
            _torch.autograd.Variable._execution_engine.queue_callback(self._backward_ends)
        return grad

    def _backward_ends(self):
        self.backward_end = _now()

    def everyone_arrived(self, at):
        with self.lock:
            self.arrival_end = at

    def hold(self, *objects):
        self.held.extend(objects)

    def bucket_done(self, index, nbytes, start, end):
        with self.lock:
            self.buckets.append((index, nbytes, start, end))

    def _optimizer_step(self, *args, **kwargs):
        step_start = _now()
        if self.arrival_future is not None:  # done already: it ran before the first bucket
            self.arrival_future.wait()
            self.arrival_future = None
        result = self.original_step(*args, **kwargs)
        self._end_step(step_start, _now())
        return result

    def _end_step(self, update_start, end):
        self.step_number += 1
        forward = self.forward_start or self.previous_end
        backward = self.backward_start or forward
        backward_end = self.backward_end or backward
        with self.lock:
            buckets = list(self.buckets)
            arrival = (self.arrival_start, self.arrival_end or self.arrival_start)
        spans = [(b[2], b[3]) for b in buckets]
        if arrival[0] is not None:
            spans.append(arrival)
        hidden = _union(spans, backward, backward_end)
        exposed = _union(spans, backward_end, update_start)
        # Waiting for the last rank, as far as it was not hidden behind this rank's backward.
        waited = min(exposed, _union([arrival], backward_end, update_start)
                     if arrival[0] is not None else 0)
        step = telemetry_pb2.Step(step=self.step_number, samples=self.samples)
        p = step.phases
        p.data_ns = forward - self.previous_end
        p.forward_ns = backward - forward
        p.backward_ns = backward_end - backward
        p.wait_ns = waited
        p.comm_ns = _union(spans) - waited
        p.comm_hidden_ns = hidden
        # What ran between the gradients' all-reduce and the update (clipping) counts with it.
        p.update_ns = (end - update_start) + (update_start - backward_end - exposed)
        step.bytes_raw = sum(b[1] for b in buckets)
        step.allreduces = len(buckets)
        step.mem_params = step.mem_grads = self.param_bytes
        step.mem_optimizer = self._optimizer_bytes()
        self.pending = (step, end, buckets)
        self.pending_scalars = self.scalars
        self._new_step(end)

    def _optimizer_bytes(self):
        """The optimizer's state tensors (momentum, Adam's moments): counted after the first
        two steps (the state is made at the first), then every 100th."""
        if self.step_number <= 2 or self.step_number % 100 == 0:
            self.optimizer_bytes = sum(
                value.numel() * value.element_size()
                for state in self.optimizer.state.values() for value in state.values()
                if isinstance(value, _torch.Tensor))
        return self.optimizer_bytes

    def flush(self):
        """Sends the step that ended last, with what was logged for it."""
        if self.pending is None:
            return
        step, end, buckets = self.pending
        scalars = self.pending_scalars
        self.pending, self.pending_scalars = None, {}
        if "loss" in scalars:
            step.loss = float(scalars.pop("loss"))
        lr = scalars.pop("lr", None)
        step.lr = float(lr if lr is not None else self.optimizer.param_groups[0].get("lr", 0))
        self.reporter.step(step, end)
        if self.span_every > 0 and step.step % self.span_every == 0:
            self._send_buckets(step.step, buckets)
        if scalars:
            text = " ".join(f"{k}={v}" for k, v in sorted(scalars.items()))
            self.reporter.event("log", text, step.step)

    def _send_buckets(self, step, buckets):
        for index, nbytes, start, end in buckets:
            self.reporter.span(telemetry_pb2.Span(
                phase="bucket", step=step, part=index, bytes=nbytes,
                start_ns=self.reporter.since_start(start), end_ns=self.reporter.since_start(end)))

    def close(self, exit_status=0, reason=""):
        if self.closed:
            return
        self.closed = True
        self.callbacks.drain()
        self.flush()
        self.heartbeats.stop()
        self.reporter.bye(exit_status, _now() - self.started, reason)
        self.reporter.close()


def _timed_allreduce(watcher, bucket):
    """DDP's default all-reduce (sum, then the mean), each bucket timed from its start to the
    moment its result is ready. Before a step's first bucket, a one-number all-reduce that
    ends when the last rank has arrived: how long this rank waited for the others (launched
    asynchronously, as the buckets: backward goes on meanwhile). Every Python object the
    backend's thread touches is held here too (`hold`): freed there, it would take the GIL."""
    buffer = bucket.buffer()
    if watcher.arrival_start is None:
        watcher.arrival_start = _now()
        one = watcher.arrival_tensor  # zeros: their sum stays zeros, step after step
        arrived = _dist.all_reduce(one, async_op=True).get_future()
        # Waited for at the step's end, as DDP waits for the buckets.
        watcher.arrival_future = arrived.then(
            watcher.callbacks.track(lambda done: watcher.everyone_arrived(_now())))
        watcher.hold(one, arrived, watcher.arrival_future)
    start = _now()
    future = _dist.all_reduce(buffer, async_op=True).get_future()
    index, nbytes = bucket.index(), buffer.numel() * buffer.element_size()

    def finished(done):
        watcher.bucket_done(index, nbytes, start, _now())
        return done.value()[0].div_(watcher.world)

    result = future.then(watcher.callbacks.track(finished))
    watcher.hold(future, result)
    return result
