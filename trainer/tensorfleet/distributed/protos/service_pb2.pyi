from tensorfleet.protos import graph_pb2 as _graph_pb2
from tensorfleet.protos import step_stats_pb2 as _step_stats_pb2
from tensorfleet.protos import tensor_shape_pb2 as _tensor_shape_pb2
from tensorfleet.protos import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TensorMeta(_message.Message):
    __slots__ = ("name", "dtype", "shape", "offset", "nbytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    dtype: _types_pb2.DataType
    shape: _tensor_shape_pb2.TensorShapeProto
    offset: int
    nbytes: int
    def __init__(self, name: _Optional[str] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., offset: _Optional[int] = ..., nbytes: _Optional[int] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class CallHeader(_message.Message):
    __slots__ = ("method", "message", "payload_bytes", "status", "token")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    method: str
    message: bytes
    payload_bytes: int
    status: Status
    token: str
    def __init__(self, method: _Optional[str] = ..., message: _Optional[bytes] = ..., payload_bytes: _Optional[int] = ..., status: _Optional[_Union[Status, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: CallHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[CallHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class DeviceAttributes(_message.Message):
    __slots__ = ("name", "device_type", "memory_limit")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    name: str
    device_type: str
    memory_limit: int
    def __init__(self, name: _Optional[str] = ..., device_type: _Optional[str] = ..., memory_limit: _Optional[int] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ("caller_task", "caller_incarnation")
    CALLER_TASK_FIELD_NUMBER: _ClassVar[int]
    CALLER_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    caller_task: str
    caller_incarnation: int
    def __init__(self, caller_task: _Optional[str] = ..., caller_incarnation: _Optional[int] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("device", "bulk_port", "task", "incarnation", "local_socket")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    BULK_PORT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    LOCAL_SOCKET_FIELD_NUMBER: _ClassVar[int]
    device: _containers.RepeatedCompositeFieldContainer[DeviceAttributes]
    bulk_port: int
    task: str
    incarnation: int
    local_socket: str
    def __init__(self, device: _Optional[_Iterable[_Union[DeviceAttributes, _Mapping]]] = ..., bulk_port: _Optional[int] = ..., task: _Optional[str] = ..., incarnation: _Optional[int] = ..., local_socket: _Optional[str] = ...) -> None: ...

class RegisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "graph_def", "feed", "fetch", "target", "allow_soft_placement", "log_device_placement", "master_task", "master_incarnation")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    FEED_FIELD_NUMBER: _ClassVar[int]
    FETCH_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ALLOW_SOFT_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    LOG_DEVICE_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    MASTER_TASK_FIELD_NUMBER: _ClassVar[int]
    MASTER_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_def: _graph_pb2.GraphDef
    feed: _containers.RepeatedScalarFieldContainer[str]
    fetch: _containers.RepeatedScalarFieldContainer[str]
    target: _containers.RepeatedScalarFieldContainer[str]
    allow_soft_placement: bool
    log_device_placement: bool
    master_task: str
    master_incarnation: int
    def __init__(self, session_handle: _Optional[str] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., feed: _Optional[_Iterable[str]] = ..., fetch: _Optional[_Iterable[str]] = ..., target: _Optional[_Iterable[str]] = ..., allow_soft_placement: _Optional[bool] = ..., log_device_placement: _Optional[bool] = ..., master_task: _Optional[str] = ..., master_incarnation: _Optional[int] = ...) -> None: ...

class RegisterGraphResponse(_message.Message):
    __slots__ = ("graph_handle",)
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    def __init__(self, graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphRequest(_message.Message):
    __slots__ = ("graph_handle",)
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    def __init__(self, graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LocalFeed(_message.Message):
    __slots__ = ("feed", "key")
    FEED_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    feed: str
    key: str
    def __init__(self, feed: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class RunGraphRequest(_message.Message):
    __slots__ = ("graph_handle", "step_id", "send", "local", "keep", "end_of_step", "timeout_ms", "keep_returned", "trace")
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    SEND_FIELD_NUMBER: _ClassVar[int]
    LOCAL_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    END_OF_STEP_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    KEEP_RETURNED_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    step_id: int
    send: _containers.RepeatedCompositeFieldContainer[TensorMeta]
    local: _containers.RepeatedCompositeFieldContainer[LocalFeed]
    keep: _containers.RepeatedScalarFieldContainer[str]
    end_of_step: bool
    timeout_ms: int
    keep_returned: _containers.RepeatedScalarFieldContainer[str]
    trace: bool
    def __init__(self, graph_handle: _Optional[str] = ..., step_id: _Optional[int] = ..., send: _Optional[_Iterable[_Union[TensorMeta, _Mapping]]] = ..., local: _Optional[_Iterable[_Union[LocalFeed, _Mapping]]] = ..., keep: _Optional[_Iterable[str]] = ..., end_of_step: _Optional[bool] = ..., timeout_ms: _Optional[int] = ..., keep_returned: _Optional[_Iterable[str]] = ..., trace: _Optional[bool] = ...) -> None: ...

class RunGraphResponse(_message.Message):
    __slots__ = ("recv", "step_stats")
    RECV_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    recv: _containers.RepeatedCompositeFieldContainer[TensorMeta]
    step_stats: _step_stats_pb2.StepStats
    def __init__(self, recv: _Optional[_Iterable[_Union[TensorMeta, _Mapping]]] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ...) -> None: ...

class CleanupStepRequest(_message.Message):
    __slots__ = ("step_id",)
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    def __init__(self, step_id: _Optional[int] = ...) -> None: ...

class CleanupStepResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("container",)
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    container: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, container: _Optional[_Iterable[str]] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = ("reason", "exit_code", "keep_serving", "ended_task", "ended_incarnation")
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    KEEP_SERVING_FIELD_NUMBER: _ClassVar[int]
    ENDED_TASK_FIELD_NUMBER: _ClassVar[int]
    ENDED_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    reason: str
    exit_code: int
    keep_serving: bool
    ended_task: str
    ended_incarnation: int
    def __init__(self, reason: _Optional[str] = ..., exit_code: _Optional[int] = ..., keep_serving: _Optional[bool] = ..., ended_task: _Optional[str] = ..., ended_incarnation: _Optional[int] = ...) -> None: ...

class ShutdownResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SessionOptions(_message.Message):
    __slots__ = ("allow_soft_placement", "log_device_placement", "device_filters", "operation_timeout_ms")
    ALLOW_SOFT_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    LOG_DEVICE_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    OPERATION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    allow_soft_placement: bool
    log_device_placement: bool
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    operation_timeout_ms: int
    def __init__(self, allow_soft_placement: _Optional[bool] = ..., log_device_placement: _Optional[bool] = ..., device_filters: _Optional[_Iterable[str]] = ..., operation_timeout_ms: _Optional[int] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("graph_def", "options")
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    graph_def: _graph_pb2.GraphDef
    options: SessionOptions
    def __init__(self, graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., options: _Optional[_Union[SessionOptions, _Mapping]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class ExtendSessionRequest(_message.Message):
    __slots__ = ("session_handle", "graph_def")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_def: _graph_pb2.GraphDef
    def __init__(self, session_handle: _Optional[str] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ...) -> None: ...

class ExtendSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunStepRequest(_message.Message):
    __slots__ = ("session_handle", "feed", "fetch", "target", "timeout_ms", "trace")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    FEED_FIELD_NUMBER: _ClassVar[int]
    FETCH_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    feed: _containers.RepeatedCompositeFieldContainer[TensorMeta]
    fetch: _containers.RepeatedScalarFieldContainer[str]
    target: _containers.RepeatedScalarFieldContainer[str]
    timeout_ms: int
    trace: bool
    def __init__(self, session_handle: _Optional[str] = ..., feed: _Optional[_Iterable[_Union[TensorMeta, _Mapping]]] = ..., fetch: _Optional[_Iterable[str]] = ..., target: _Optional[_Iterable[str]] = ..., timeout_ms: _Optional[int] = ..., trace: _Optional[bool] = ...) -> None: ...

class RunStepResponse(_message.Message):
    __slots__ = ("tensor", "step_stats")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    tensor: _containers.RepeatedCompositeFieldContainer[TensorMeta]
    step_stats: _step_stats_pb2.StepStats
    def __init__(self, tensor: _Optional[_Iterable[_Union[TensorMeta, _Mapping]]] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ...) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListDevicesRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class ListDevicesResponse(_message.Message):
    __slots__ = ("device",)
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    device: _containers.RepeatedCompositeFieldContainer[DeviceAttributes]
    def __init__(self, device: _Optional[_Iterable[_Union[DeviceAttributes, _Mapping]]] = ...) -> None: ...
