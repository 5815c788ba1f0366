"""The distributed runtime: ClusterSpec, Server, the master and worker services, remote sessions.

Layer: above `session` (it registers the `grpc://` session factory there at import),
below `train` (replica_device_setter, and issue 11's training loop). Flow of a step:
`Session(server.target).run` -> `remote_session` -> `master.MasterSession` (placement,
`partition` into per-task stages) -> each task's `worker.WorkerService` (in-process for
its own task; `client` over gRPC or the bulk path for others) -> the executor.
Wire format: `protos/service.proto` and `wire`; errors cross as tf.errors (`rpc_errors`).
"""
from ..session import register_session_factory
from .cluster import ClusterDef, ClusterSpec, JobDef
from .protos.cluster_pb2 import ServerDef
from .remote_session import GrpcSessionFactory
from .resolver import TFConfigClusterResolver
from .server import Server

register_session_factory("grpc", GrpcSessionFactory)

__all__ = ["ClusterSpec", "ClusterDef", "JobDef", "ServerDef", "Server", "TFConfigClusterResolver"]
