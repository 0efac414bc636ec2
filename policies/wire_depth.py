"""Refuse a request nested deeper than any real resource before protobuf parses it.

protobuf's Python parser (upb, protobuf 5.x) decodes nested messages recursively in C with no depth limit: an
AnalyzeRequest whose properties nest a few thousand maps deep (a few tens of kilobytes; the pack accepts 400 MiB,
pulumi_policy's _MAX_RPC_MESSAGE_SIZE) overflows the C stack and kills the pack with SIGSEGV before any Python
code runs (tests/policy/test_request_depth.py sends one). So the pack reads the request's wire format first,
following only the fields its schema declares as messages, and counts how deeply google.protobuf.Struct and
ListValue messages (maps and lists: a resource's properties are one) nest, as gpufleet.base.limits.depth counts
the same values in Python; past
gpufleet.base.limits.POLICY_REQUEST_MAX_DEPTH, or when messages (or groups in unknown fields) nest past
MAX_MESSAGE_DEPTH, it answers INVALID_ARGUMENT with a message saying so, and keeps serving.

The scan is linear in the request's size and only runs for requests big enough to hold such nesting (each
level of a map or list costs at least 4 bytes on the wire).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import grpc
from google.protobuf import struct_pb2
from google.protobuf.descriptor import FieldDescriptor

from gpufleet.base import limits

MAX_VALUE_DEPTH = limits.POLICY_REQUEST_MAX_DEPTH
MAX_MESSAGE_DEPTH = 4 * MAX_VALUE_DEPTH + 16
"""Messages nested in one another, any kind: a map level of a Struct is three (Value, Struct, its map entry),
a list level two, and the requests' own messages add a few."""
MIN_BYTES_PER_LEVEL = 4
"""A list inside a Value: the Value's tag and length, the ListValue's; a map costs more."""

_CONTAINERS = (struct_pb2.Struct.DESCRIPTOR, struct_pb2.ListValue.DESCRIPTOR)  # a map, a list
_WIRE_VARINT, _WIRE_64, _WIRE_LEN, _WIRE_START, _WIRE_END, _WIRE_32 = 0, 1, 2, 3, 4, 5


class TooDeep:
    """What the guarded deserializer hands the method instead of a request it refused."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _children(descriptor, table: dict) -> dict:
    """{field number: its message type's table} for the message fields of `descriptor` (map entries included),
    built once per message type; the tables refer to one another, as the types do (Struct -> Value -> Struct)."""
    if descriptor in table:
        return table[descriptor]
    own: dict[int, Any] = {}
    table[descriptor] = own
    for field in descriptor.fields:
        if field.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
            own[field.number] = (field.message_type in _CONTAINERS, _children(field.message_type, table))
    return own


def nesting_problem(data: bytes, descriptor) -> Optional[str]:
    """Why `data` (a serialized `descriptor` message) nests too deep, or None. Malformed input is left to the
    parser, which refuses it with its own error."""
    if len(data) < MIN_BYTES_PER_LEVEL * MAX_VALUE_DEPTH:
        return None
    table: dict = {}
    fields = _children(descriptor, table)
    stack: list = []  # (end offset, fields, is a map or list)
    end, containers, pos, size = len(data), 0, 0, len(data)
    groups = 0
    while True:
        if pos >= end:
            if not stack:
                return None
            end, fields, is_container = stack.pop()
            containers -= is_container
            continue
        # the field's key (a varint)
        key = data[pos]
        pos += 1
        if key & 0x80:
            key &= 0x7F
            shift = 7
            while True:
                if pos >= size:
                    return None
                b = data[pos]
                pos += 1
                key |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
        wire = key & 7
        if wire == _WIRE_LEN:
            length = data[pos] if pos < size else 0
            pos += 1
            if length & 0x80:
                length &= 0x7F
                shift = 7
                while True:
                    if pos >= size:
                        return None
                    b = data[pos]
                    pos += 1
                    length |= (b & 0x7F) << shift
                    if not b & 0x80:
                        break
                    shift += 7
            child = fields.get(key >> 3)
            if child is None or pos + length > end:
                pos += length  # a string, bytes, packed scalars or an unknown field: not parsed as a message
                continue
            is_container, inner = child
            stack.append((end, fields, is_container))
            containers += is_container
            if containers > MAX_VALUE_DEPTH:
                return (f"maps and lists nest deeper than {MAX_VALUE_DEPTH} levels; no real resource does "
                        "(gpufleet.base.limits.POLICY_REQUEST_MAX_DEPTH)")
            if len(stack) + groups > MAX_MESSAGE_DEPTH:
                return f"messages nest deeper than {MAX_MESSAGE_DEPTH} levels"
            end, fields = pos + length, inner
        elif wire == _WIRE_VARINT:
            while pos < size and data[pos] & 0x80:
                pos += 1
            pos += 1
        elif wire == _WIRE_64:
            pos += 8
        elif wire == _WIRE_32:
            pos += 4
        elif wire == _WIRE_START:  # a group (unknown fields here): upb nests those recursively too
            groups += 1
            if len(stack) + groups > MAX_MESSAGE_DEPTH:
                return f"messages nest deeper than {MAX_MESSAGE_DEPTH} levels"
        elif wire == _WIRE_END:
            groups -= 1
        else:
            return None  # not protobuf: the parser's own error


def guard(handler: grpc.RpcMethodHandler, descriptor) -> grpc.RpcMethodHandler:
    """The unary method handler, refusing requests nested too deep with INVALID_ARGUMENT before they are parsed."""
    parse: Callable[[bytes], Any] = handler.request_deserializer
    method = handler.unary_unary

    def deserialize(data: bytes) -> Any:
        problem = nesting_problem(data, descriptor)
        if problem is not None:
            return TooDeep(f"gpufleet policy pack: request refused: {problem}")
        return parse(data)

    def behaviour(request, context):
        if type(request) is TooDeep:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        return method(request, context)

    return grpc.unary_unary_rpc_method_handler(behaviour, request_deserializer=deserialize,
                                               response_serializer=handler.response_serializer)


class DepthGuard(grpc.GenericRpcHandler):
    """A method table whose unary methods refuse requests nested too deep (`guard`), each wrapped once. The
    request's message type comes from the generated deserializer (`<Message>.FromString`)."""

    def __init__(self, inner: grpc.GenericRpcHandler):
        self._inner = inner
        self._guarded: dict = {}

    def service(self, handler_call_details):
        method = handler_call_details.method
        if method not in self._guarded:
            handler = self._inner.service(handler_call_details)
            message = getattr(getattr(handler, "request_deserializer", None), "__self__", None)
            if handler is not None and handler.unary_unary is not None and hasattr(message, "DESCRIPTOR"):
                handler = guard(handler, message.DESCRIPTOR)
            self._guarded[method] = handler
        return self._guarded[method]
