"""A rank's telemetry, as ranklab's engine sends it (comm/telemetry/reporter.cpp): protobuf
Envelopes over a ZeroMQ PUSH socket, encrypted with the run's CURVE keys, numbered per rank so
the collector counts what was lost, never blocking the training: what the socket will not take
at once waits in a bounded spool, the oldest dropped when it is full.
"""

import collections
import os
import socket
import threading
import time

import zmq

from ranklab import telemetry_pb2

WIRE_VERSION = 1  # comm/telemetry/collector.h, kWireVersion
ENDPOINT_VARIABLE = "RANKLAB_TELEMETRY_ENDPOINT"
RUN_ID_VARIABLE = "RANKLAB_RUN_ID"
KEYS_VARIABLE = "RANKLAB_TELEMETRY_KEYS"  # comm/telemetry/curve_keys.h: three Z85 keys
HEARTBEAT_VARIABLE = "RANKLAB_HEARTBEAT_MS"
CLOCK_ZERO_VARIABLE = "RANKLAB_CLOCK_ZERO_NS"  # the launcher's CLOCK_MONOTONIC, on its machine
KEY_LENGTH = 40
SEND_HIGH_WATER_MARK = 1000  # as the engine's ranks
MAX_MESSAGE_BYTES = 1 << 20
# Steps leave in batches of up to 20 ms, as the engine's (app/worker/main.cpp): one message a
# step woke ZeroMQ's I/O thread and the collector each time, ~0.1 ms of CPU (bench/LOG.md).
STEP_BATCH_S = 0.020


class TelemetryError(RuntimeError):
    """What the environment handed this rank cannot be used; the text says which variable."""


def parse_keys(text):
    """The collector's public key and the ranks' pair, from RANKLAB_TELEMETRY_KEYS."""
    if len(text) != 3 * KEY_LENGTH:
        raise TelemetryError(
            f"{KEYS_VARIABLE}: expected {3 * KEY_LENGTH} characters (three Z85 keys), "
            f"got {len(text)}")
    return (text[:KEY_LENGTH].encode(), text[KEY_LENGTH:2 * KEY_LENGTH].encode(),
            text[2 * KEY_LENGTH:].encode())


def _clock_zero():
    """The launcher's zero where it gave one (every rank on its machine counts from it, so the
    timeline lines them up), else now."""
    now = time.monotonic_ns()
    try:
        zero = int(os.environ.get(CLOCK_ZERO_VARIABLE, ""))
    except ValueError:
        return now
    return zero if 0 <= now - zero < 7 * 24 * 3600 * 10**9 else now


class Reporter:
    """Sends one rank's envelopes; safe to call from the training and the heartbeat thread."""

    def __init__(self, endpoint, run_id, rank, keys=None, spool_limit=4096,
                 step_batch_s=STEP_BATCH_S):
        self.run_id = run_id
        self.rank = rank
        self._start_ns = _clock_zero()  # CLOCK_MONOTONIC, the engine's steady clock
        self._seq = 0
        self._lock = threading.Lock()
        self._spool = collections.deque()
        self._spool_limit = spool_limit
        self.dropped = 0
        self._batch_ns = int(step_batch_s * 1e9)
        self._batch_start = self._last_step = time.monotonic_ns()
        self._context = zmq.Context(io_threads=1)
        self._socket = self._context.socket(zmq.PUSH)
        self._socket.setsockopt(zmq.SNDHWM, SEND_HIGH_WATER_MARK)
        self._socket.setsockopt(zmq.IMMEDIATE, 1)  # nothing queued while no collector listens
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        if keys:
            server_public, public, secret = keys
            self._socket.curve_serverkey = server_public
            self._socket.curve_publickey = public
            self._socket.curve_secretkey = secret
        self._socket.connect(endpoint)

    def since_start(self, monotonic_ns):
        """A time.monotonic_ns() on this rank's clock: what time_ns and spans count in."""
        return monotonic_ns - self._start_ns

    def hello(self, world, host=None, pid=None):
        envelope = telemetry_pb2.Envelope()
        envelope.hello.run_id = self.run_id
        envelope.hello.world = world
        envelope.hello.host = host or socket.gethostname()
        envelope.hello.pid = pid or os.getpid()
        self._send(envelope)

    def step(self, step, at_ns=None):
        """at_ns: when the step ended (time.monotonic_ns()), if it is sent later."""
        envelope = telemetry_pb2.Envelope()
        envelope.step.CopyFrom(step)
        self._send(envelope, at_ns, self._batch_this_step)

    def eval(self, step, test_loss=0.0, test_accuracy=0.0, epoch=0):
        envelope = telemetry_pb2.Envelope()
        envelope.eval.step = step
        envelope.eval.epoch = epoch
        envelope.eval.test_loss = test_loss
        envelope.eval.test_accuracy = test_accuracy
        self._send(envelope)

    def span(self, span):
        envelope = telemetry_pb2.Envelope()
        envelope.span.CopyFrom(span)
        self._send(envelope, None, self._batch_open)

    def event(self, kind, text, step=0):
        envelope = telemetry_pb2.Envelope()
        envelope.event.kind = kind
        envelope.event.text = text
        envelope.event.step = step
        self._send(envelope)

    def heartbeat(self):
        envelope = telemetry_pb2.Envelope()
        envelope.heartbeat.SetInParent()
        self._send(envelope)

    def bye(self, exit_status=0, train_ns=0, reason=""):
        envelope = telemetry_pb2.Envelope()
        envelope.bye.exit_status = exit_status
        envelope.bye.train_ns = train_ns
        envelope.bye.reason = reason
        self._send(envelope)

    def _send(self, envelope, at_ns=None, waits=None):
        """waits(now): whether the message joins the batch in the spool rather than leaving."""
        with self._lock:
            if self._socket is None:
                return
            envelope.version = WIRE_VERSION
            envelope.run_id = self.run_id
            envelope.rank = self.rank
            envelope.seq = self._seq  # taken even if dropped, so the collector sees the hole
            self._seq += 1
            envelope.time_ns = self.since_start(at_ns if at_ns is not None else time.monotonic_ns())
            data = envelope.SerializeToString()
            if waits is not None and waits(time.monotonic_ns()):
                self._keep(data)
                return
            self._drain()
            if not self._spool and self._try_send(data):
                return
            self._keep(data)

    def _batch_this_step(self, now):
        """Only steps that come fast wait (one after a pause would wait a whole step for the
        next message), for up to a batch's time, in at most half the spool."""
        fast = now - self._last_step < self._batch_ns
        self._last_step = now
        if not fast:
            return False
        if not self._spool:
            self._batch_start = now
        return self._batch_has_room(now)

    def _batch_open(self, now):
        """A span joins a batch that waits; it never opens one."""
        return bool(self._spool) and self._batch_has_room(now)

    def _batch_has_room(self, now):
        return (now - self._batch_start < self._batch_ns
                and len(self._spool) < self._spool_limit // 2)

    def flush(self):
        """Sends the batch that waits (the heartbeat thread, every batch's time)."""
        with self._lock:
            if self._socket is not None:
                self._drain()

    def _try_send(self, data):
        try:
            self._socket.send(data, zmq.NOBLOCK)
            return True
        except zmq.Again:
            return False

    def _keep(self, data):
        if len(self._spool) >= self._spool_limit:
            self._spool.popleft()
            self.dropped += 1
        self._spool.append(data)

    def _drain(self):
        while self._spool and self._try_send(self._spool[0]):
            self._spool.popleft()

    def close(self, timeout_s=3.0):
        """Sends what waits, for up to timeout_s; returns how many messages were left."""
        with self._lock:
            if self._socket is None:
                return 0
            deadline = time.monotonic() + timeout_s
            self._drain()
            while self._spool and time.monotonic() < deadline:
                time.sleep(0.002)
                self._drain()
            left = len(self._spool)
            linger_ms = max(0, int((deadline - time.monotonic()) * 1000))
            self._socket.setsockopt(zmq.LINGER, linger_ms)  # zmq's own queue reaches the wire
            self._socket.close()
            self._context.term()
            self._socket = None
            return left


class Heartbeats:
    """Beats every interval from a thread of its own (a rank inside a long all-reduce or
    loading data still says it lives), until stopped; between beats, sends the steps that
    wait for their batch, so none waits longer than a batch's time."""

    def __init__(self, reporter, interval_s, flush_s=STEP_BATCH_S):
        self._reporter = reporter
        self._interval_s = interval_s
        self._flush_s = min(flush_s, interval_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ranklab-heartbeat", daemon=True)
        self._thread.start()

    def _run(self):
        next_beat = time.monotonic() + self._interval_s
        while not self._stop.wait(self._flush_s):
            if time.monotonic() < next_beat:
                self._reporter.flush()
                continue
            self._reporter.heartbeat()
            next_beat += self._interval_s

    def stop(self):
        self._stop.set()
        self._thread.join()


def reporter_from_environment(rank):
    """The Reporter the launcher's environment describes, or None when there is none."""
    endpoint = os.environ.get(ENDPOINT_VARIABLE, "")
    if not endpoint:
        return None
    run_id = os.environ.get(RUN_ID_VARIABLE, "")
    if not run_id:
        raise TelemetryError(f"{ENDPOINT_VARIABLE} is set but {RUN_ID_VARIABLE} is not")
    keys = os.environ.pop(KEYS_VARIABLE, "")  # not for anything this rank starts
    return Reporter(endpoint, run_id, rank, parse_keys(keys) if keys else None)
