"""`tf.distribute` (the TF1 parts a between-graph script uses): Server and cluster_resolver."""
import types

from .cluster import ClusterSpec
from .resolver import TFConfigClusterResolver
from .server import Server

cluster_resolver = types.SimpleNamespace(TFConfigClusterResolver=TFConfigClusterResolver)
distribute = types.SimpleNamespace(Server=Server, ClusterSpec=ClusterSpec, cluster_resolver=cluster_resolver)
