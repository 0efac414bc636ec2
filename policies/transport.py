"""The pack's gRPC server: every unary call answered start to end on one thread, on grpcio's own core.

Why not `grpc.server`: the Pulumi engine sends a pack its calls one at a time (Remediate, then Analyze,
for each resource in turn: pkg/resource/deploy/step_generator.go, pulumi/pulumi @1b5949891b), so the
pack's time per call is what a preview waits for. grpcio's sync server polls its completion queue on one
thread and hands every call to a worker thread, which waits on a condition for the request, runs the
method, and hands the answer back: four thread hand-offs and their locks per call. With empty methods that
alone took ~0.6 ms of pack CPU per resource; the same empty methods served by this loop took 0.32-0.40
(bench/README.md, "Fourth round"), and the engine's round trips are most of what a preview pays.

How: grpcio's C core (`grpc._cython.cygrpc`, which `grpc.server` and `grpc.aio` are themselves written on)
still speaks HTTP/2, flow control and the channel options. This loop polls its completion queue and, for
each call, asks the method table (a `grpc.GenericRpcHandler`, as `grpc.server` would), receives the one
request, runs the method, and sends the answer with its status in one batch. The answers are grpcio's:
UNIMPLEMENTED "Method not found!" for an unknown method; a raised exception is UNKNOWN "Exception calling
application: ..." (logged with its traceback) unless the method set a code first, as the generated
servicer's unimplemented methods do; INTERNAL when a request cannot be deserialized or an answer
serialized. Only unary methods are served (every Analyzer method is unary); the methods run one at a time,
which the engine's own order already is. tests/policy/test_transport.py compares its answers with
grpc.server's; tests/policy/test_grpc_harness.py drives the pack through it.

`grpc._cython.cygrpc` is grpcio's internal module: this is written against grpcio 1.68-1.85 (pulumi
requires >= 1.68.1), where its server API is the one `grpc/_server.py` uses. If a grpcio release lacks
a name used here, `serve()` falls back to `grpc.server` and says so on stderr.
"""

from __future__ import annotations

import logging
import sys
from collections import namedtuple
from typing import Any, Optional, Sequence

import grpc

try:
    from grpc._common import STATUS_CODE_TO_CYGRPC_STATUS_CODE as _CYGRPC_CODE
    from grpc._cython import cygrpc
except ImportError:  # pragma: no cover - grpcio always ships both today
    cygrpc, _CYGRPC_CODE = None, {}

_LOGGER = logging.getLogger(__name__)
_NO_FLAGS = 0
_NEW_CALL = object()  # the completion-queue tag of "a call arrived"
_DONE = object()  # the tag of a call's last batch: nothing left to do when it completes
_SHUTDOWN = object()  # the tag of "the core has shut down"
_NEEDED = ("CompletionQueue", "Server", "ReceiveMessageOperation", "SendInitialMetadataOperation",
           "SendMessageOperation", "SendStatusFromServerOperation", "ReceiveCloseOnServerOperation", "StatusCode")

# What grpc.server passes a GenericRpcHandler (grpc/_server.py `_HandlerCallDetails`).
HandlerCallDetails = namedtuple("HandlerCallDetails", ("method", "invocation_metadata"))


def available() -> bool:
    """Whether this grpcio has the core server API the loop uses."""
    return cygrpc is not None and bool(_CYGRPC_CODE) and all(hasattr(cygrpc, name) for name in _NEEDED)


class Context:
    """The `grpc.ServicerContext` calls an Analyzer method can make here: pulumi_policy's servicer makes
    none; the generated servicer's unimplemented methods call set_code and set_details, then raise."""

    def __init__(self, metadata: Sequence = ()):
        self._metadata = tuple(metadata or ())
        self._code: Optional[grpc.StatusCode] = None
        self._details: Optional[str] = None
        self.later: list = []

    def after_reply(self, work, *args) -> None:
        """Run `work(*args)` once this call's answer is on its way, before the next call is served: the
        caller reads the answer while the pack works. Not a grpc.ServicerContext method (grpc.server's
        context lacks it: check with getattr)."""
        self.later.append((work, args))

    def invocation_metadata(self):
        return self._metadata

    def is_active(self) -> bool:
        return True

    def time_remaining(self):
        return None

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> Optional[grpc.StatusCode]:
        return self._code

    def details(self) -> Optional[str]:
        return self._details

    def abort(self, code: grpc.StatusCode, details: str):
        self._code, self._details = code, details
        raise Exception(details)  # as grpc.server's abort: the call ends with this code and details

    def status(self, default) -> tuple[Any, bytes]:
        code = default if self._code is None else _CYGRPC_CODE[self._code]
        return code, (self._details or "").encode()


class Server:
    """A gRPC server for unary methods, on one thread (see the module's docstring). `start()` binds,
    `run()` serves until interrupted (KeyboardInterrupt from the poll, within 200 ms of a signal)."""

    def __init__(self, handler: grpc.GenericRpcHandler, options: Sequence = ()):
        self._handler = handler
        self._queue = cygrpc.CompletionQueue()
        self._server = cygrpc.Server(tuple(options), False)
        self._server.register_completion_queue(self._queue)
        self._stopping = False
        self._down = False

    def add_insecure_port(self, address: str) -> int:
        return self._server.add_http2_port(address.encode())

    def start(self) -> None:
        self._server.start()
        self._server.request_call(self._queue, self._queue, _NEW_CALL)

    def run(self) -> None:
        """Serve until `stop()` (from any thread) or an interrupt; returns once the core has shut down
        (it must before the process can exit)."""
        try:
            while self.step():
                pass
        finally:
            self.close()

    def close(self) -> None:
        """Stop and wait for the core to shut down (a started server must, or the process cannot exit)."""
        self.stop()
        while not self._down:
            self.step()

    def stop(self) -> None:
        """Refuse new calls and cancel the ones in flight; `run()` returns once the core has shut down."""
        if not self._stopping:
            self._stopping = True
            self._server.shutdown(self._queue, _SHUTDOWN)
            self._server.cancel_all_calls()

    def step(self) -> bool:
        """Handle one completion-queue event; False once the server has shut down."""
        event = self._queue.poll()
        tag = event.tag
        if tag is _NEW_CALL:
            if event.success and not self._stopping:
                self._server.request_call(self._queue, self._queue, _NEW_CALL)  # ready for the next one first
                self._arrived(event)
        elif type(tag) is tuple:
            call, method, handler, metadata = tag
            if event.success:
                self._answer(call, method, handler, metadata, event.batch_operations[0].message())
        elif tag is _SHUTDOWN:
            self._down = True
            return False
        return True

    def _arrived(self, event) -> None:
        details = event.call_details
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        handler = self._handler.service(HandlerCallDetails(method, event.invocation_metadata))
        call = event.call
        if handler is None:
            self._finish(call, None, cygrpc.StatusCode.unimplemented, b"Method not found!")
        elif handler.request_streaming or handler.response_streaming:
            self._finish(call, None, cygrpc.StatusCode.unimplemented, b"Only unary methods are served here.")
        else:
            call.start_server_batch((cygrpc.ReceiveMessageOperation(_NO_FLAGS),),
                                    (call, method, handler, event.invocation_metadata))

    def _answer(self, call, method: str, handler, metadata, request: Optional[bytes]) -> None:
        if request is None:
            self._finish(call, None, cygrpc.StatusCode.unimplemented,
                         f'"{method}" requires exactly one request message.'.encode())
            return
        try:
            argument = handler.request_deserializer(request) if handler.request_deserializer else request
        except Exception:  # noqa: BLE001 - grpcio's answer for an undecodable request
            _LOGGER.exception("Exception deserializing request!")
            self._finish(call, None, cygrpc.StatusCode.internal, b"Exception deserializing request!")
            return
        context = Context(metadata)
        try:
            response = handler.unary_unary(argument, context)
        except Exception as error:  # noqa: BLE001 - reported to the caller, as grpc.server does
            message = f"Exception calling application: {error}"
            if context.code() is None:
                _LOGGER.exception(message)
                self._finish(call, None, cygrpc.StatusCode.unknown, message.encode())
            else:
                code, details = context.status(cygrpc.StatusCode.unknown)
                self._finish(call, None, code, details)
            return
        try:
            answer = handler.response_serializer(response) if handler.response_serializer else response
        except Exception:  # noqa: BLE001
            _LOGGER.exception("Failed to serialize response!")
            self._finish(call, None, cygrpc.StatusCode.internal, b"Failed to serialize response!")
            return
        code, details = context.status(cygrpc.StatusCode.ok)
        self._finish(call, answer, code, details)
        for work, args in context.later:
            try:
                work(*args)
            except Exception:  # noqa: BLE001 - the answer has gone; what failed is logged, the loop goes on
                _LOGGER.exception("Exception in work after a reply")

    @staticmethod
    def _finish(call, answer: Optional[bytes], code, details: bytes) -> None:
        """Initial metadata, the answer (if any) and the status in one batch, as grpc.server's `_status`."""
        operations = [cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS)]
        if answer is not None:
            operations.append(cygrpc.SendMessageOperation(answer, _NO_FLAGS))
        operations += [cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS),
                       cygrpc.SendStatusFromServerOperation(None, code, details, _NO_FLAGS)]
        call.start_server_batch(operations, _DONE)


def announce(port: int) -> None:
    """The CLI reads the pack's port from its first stdout line."""
    sys.stdout.buffer.write(f"{port}\n".encode())
    sys.stdout.flush()
