"""nbflow on Dask: TensorFlow tasks (``/job:ps/task:0``) hosted in Dask workers.

>>> from nbflow.distributed import Cluster  # doctest: +SKIP
>>> cluster = Cluster.local(n_workers=2, spec={"ps": 1, "worker": 1})  # doctest: +SKIP
>>> sess = tf.Session(cluster.target)  # doctest: +SKIP

``cluster`` places tasks on Dask workers and watches their health; ``plugin`` installs the
message handlers in every worker; ``task`` is a task's state and its remote rendezvous;
``master`` groups a compiled step's partitions into per-task registrations; ``session`` runs
steps over ``channel``'s connections; ``wire`` packs tensors into messages.
"""

from nbflow.distributed.cluster import Cluster, TaskInfo, cluster_for_target, default_cluster
from nbflow.distributed.session import DistributedSession, StepTiming, session_for_target
from nbflow.runtime.session import register_session_target
from nbflow.train.server_lib import ClusterSpec, Server, register_default_cluster

register_session_target("nbflow", DistributedSession)  # the runtime's one plug-in point
register_default_cluster(default_cluster)  # tf.train.Server's cluster when none is given

__all__ = [
    "Cluster",
    "ClusterSpec",
    "DistributedSession",
    "Server",
    "StepTiming",
    "TaskInfo",
    "cluster_for_target",
    "default_cluster",
    "session_for_target",
]
