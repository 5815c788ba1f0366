"""The gRPC side of `tf.train.Server`: one generic handler serving the master and worker services.

Sits between grpc-python and `server._Methods`: `Server._start_grpc` registers a `GrpcHandler`,
which checks the job token in the call's metadata before anything of its body is read (grpcio asks
`service()` for a handler once the call's headers arrived; a call without the token gets a handler that
answers UNAUTHENTICATED without reading a message, so not even a unary body is buffered), takes every
call as raw bytes, joins streamed chunks (`wire`), dispatches to the method table and maps any error to
its gRPC status (`rpc_errors`), so a malformed request is answered INVALID_ARGUMENT and the server keeps
serving. The owners of client state seen over gRPC are pinned (`client_leases.ClientLeases.touch`).
Each call with the token tells the connection loop its peer (`ConnectionLoop.grpc_authenticated`): a
connection pumped from the shared port counts as unauthenticated until then (`one_port.PumpPeers`).
A streamed call (RunGraph, RunStep) is cancelled when grpcio reports its client gone (`caller_watch`).
The bulk port (server.py) carries the same calls as raw frames.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import grpc
from google.protobuf.message import DecodeError

from . import rpc_errors, wire
from .caller_watch import grpc_call_cancel
from .client import TOKEN_METADATA, _attach
from .protos import service_pb2

if TYPE_CHECKING:
    from .server import Server


class GrpcHandler(grpc.GenericRpcHandler):
    """Serves both services from raw bytes, so malformed requests get INVALID_ARGUMENT, not INTERNAL."""

    def __init__(self, server: Server):
        self._server = server
        methods = server._methods
        self._handlers = {}
        for name in methods.table:
            path = f"/tensorfleet.rpc.{name}"
            if name in methods.streaming:
                self._handlers[path] = grpc.stream_stream_rpc_method_handler(
                    self._stream(name), response_serializer=lambda m: m.SerializeToString())
            else:
                self._handlers[path] = grpc.unary_unary_rpc_method_handler(
                    self._unary(name), response_serializer=lambda m: m.SerializeToString())

    def service(self, handler_call_details):
        handler = self._handlers.get(handler_call_details.method)
        if handler is None:
            return None
        given = dict(handler_call_details.invocation_metadata or ()).get(TOKEN_METADATA, "")
        if not self._server._token_ok(given if isinstance(given, str) else ""):
            return _REFUSE
        return handler

    def _authenticated(self, context) -> None:
        """A call with the token runs (`service` checked it): its connection is authenticated."""
        loop = self._server._connections
        if loop is not None:
            loop.grpc_authenticated(context.peer())

    def _unary(self, name):
        def handle(raw, context):
            self._authenticated(context)
            try:
                response, _ = self._server._methods.dispatch(name, raw, None, self._server._limits, None,
                                                             self._server._leases.touch)
                self._server._methods.account(name, raw, None, response, 0)
            except Exception as e:  # noqa: BLE001
                st = rpc_errors.status_of(e)
                context.abort(rpc_errors.grpc_code(st.code), st.message)
            return response

        return handle

    def _stream(self, name):
        limits = self._server._limits

        def handle(raw_iter, context):
            self._authenticated(context)
            try:
                chunk_iter = (service_pb2.Chunk.FromString(r) for r in raw_iter)
                header, payload = wire.join_chunks(chunk_iter, limits, name)
                # the step is cancelled if the client goes away (its process died, or its deadline passed)
                cancel = grpc_call_cancel(context)
                response, tensors = self._server._methods.dispatch(name, header.message, payload, limits, cancel,
                                                                   self._server._leases.touch)
                metas, parts, size = wire.pack(tensors)
                if metas:
                    _attach(response, metas)
                self._server._methods.account(name, header.message, payload, response, size)
            except DecodeError:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{name}: malformed Chunk")
            except Exception as e:  # noqa: BLE001
                st = rpc_errors.status_of(e)
                context.abort(rpc_errors.grpc_code(st.code), st.message)
            reply = service_pb2.CallHeader(message=response.SerializeToString(), payload_bytes=size)
            yield from wire.chunks(reply, parts, limits.chunk_bytes)

        return handle


def _refuse(request_iterator, context):
    """A call without the job token: answered before any of its messages is read."""
    context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong job token")


_REFUSE = grpc.stream_stream_rpc_method_handler(_refuse)
