"""The one boundary between gRPC statuses / wire Status messages and `tf.errors` classes.

Sits at the edge of the distributed runtime: servers turn an exception raised by a
master or worker handler into a `Status` (TF's code and message) or a gRPC status;
clients turn a received status back into the same `tf.errors` class, adding the
task that raised it. Transport failures (refused, reset, timed out) become
`UnavailableError` / `DeadlineExceededError` naming the task and its address.
"""
from __future__ import annotations

import grpc

from .. import errors
from .protos import service_pb2

# TF error code <-> gRPC status code (they share numbers, as in TF's grpc_util.h)
_GRPC_BY_CODE = {code.value[0]: code for code in grpc.StatusCode}


def grpc_code(tf_code: int) -> grpc.StatusCode:
    return _GRPC_BY_CODE.get(tf_code, grpc.StatusCode.UNKNOWN)


def tf_code(status_code: grpc.StatusCode) -> int:
    return status_code.value[0] if status_code is not None else errors.UNKNOWN


def status_of(exc: BaseException) -> service_pb2.Status:
    """An exception raised while serving a call -> wire Status (tf.errors keep their class and message)."""
    if isinstance(exc, errors.OpError):
        return service_pb2.Status(code=exc.error_code, message=exc.message)
    if isinstance(exc, (ValueError, TypeError, KeyError)):
        return service_pb2.Status(code=errors.INVALID_ARGUMENT, message=f"{type(exc).__name__}: {exc}")
    if isinstance(exc, MemoryError):
        return service_pb2.Status(code=errors.RESOURCE_EXHAUSTED, message="out of memory serving the call")
    return service_pb2.Status(code=errors.INTERNAL, message=f"{type(exc).__name__}: {exc}")


def error_from_status(code: int, message: str, task: str = "") -> errors.OpError:
    """A received (code, message) -> the tf.errors instance, naming `task` if the message does not."""
    if task and task not in message:
        message = f"{message} (on task {task})"
    cls = errors.exception_type_from_error_code(code)
    return cls(None, None, message)


def error_from_rpc(err: grpc.RpcError, task: str, address: str) -> errors.OpError:
    """A gRPC failure seen by a client -> tf.errors, naming the task and address."""
    code = err.code() if hasattr(err, "code") else None
    details = err.details() if hasattr(err, "details") else str(err)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.DeadlineExceededError(None, None, f"Call to {_where(task, address, 'task', 'the')} did not "
                                                        f"finish in time: {details}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) and code is not None:
        return unavailable(task, address, details)
    return error_from_status(tf_code(code), details or str(code), task)


def unavailable(task: str, address: str, why: str) -> errors.UnavailableError:
    return errors.UnavailableError(None, None, f"{_where(task, address)} is unavailable: {why}")


def _where(task: str, address: str, a_task: str = "Task", the: str = "The") -> str:
    """"Task /job:ps/replica:0/task:0 at host:port"; a client named after its address ("master at host:port", a
    `grpc://` target's) is "The master at host:port", its address said once."""
    if task.startswith("/job:") or not task.endswith(f" at {address}"):
        return f"{a_task} {task} at {address}"
    return f"{the} {task}"
