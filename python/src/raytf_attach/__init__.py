"""Attach Ray workloads to virtual clusters declared with terraform-provider-ray.

    import ray, raytf_attach
    ray.init()
    cluster = raytf_attach.attach("train", namespace="terraform-ray")
    # cluster has NeMo-RL RayVirtualCluster's interface (get_placement_groups,
    # world_size, get_master_address_and_port, ...), backed by Terraform's groups.

raytf_attach.nemo_rl.use_declared_clusters() (or `python -m raytf_attach.run -- script.py`)
makes NeMo-RL's own RayVirtualCluster(name=X, ...) calls attach to the cluster declared as X.
"""

__version__ = "0.1.0"

from ._attach import attach
from .cluster import AttachedVirtualCluster
from .errors import (
    AttachError,
    ClusterResizedError,
    GroupIdMismatchError,
    GroupMissingError,
    GroupNotReadyError,
    PlacementChangedError,
    PortUnavailableError,
    RayNotInitializedError,
    RecordInvalidError,
    RecordNotFoundError,
    TerraformOwnedWarning,
    UnsupportedSchemaVersionError,
)
from .record import (
    DEFAULT_NAMESPACE,
    KV_NAMESPACE,
    SCHEMA_VERSION,
    BundleRecord,
    ClusterRecord,
    GroupRecord,
    parse_record,
    record_key,
)

__all__ = [
    "AttachError",
    "AttachedVirtualCluster",
    "BundleRecord",
    "ClusterResizedError",
    "ClusterRecord",
    "DEFAULT_NAMESPACE",
    "GroupIdMismatchError",
    "GroupMissingError",
    "GroupNotReadyError",
    "GroupRecord",
    "KV_NAMESPACE",
    "PlacementChangedError",
    "PortUnavailableError",
    "RayNotInitializedError",
    "RecordInvalidError",
    "RecordNotFoundError",
    "SCHEMA_VERSION",
    "TerraformOwnedWarning",
    "UnsupportedSchemaVersionError",
    "__version__",
    "attach",
    "parse_record",
    "record_key",
]
