"""Exceptions raised when attaching to a Terraform-declared virtual cluster.

All derive from AttachError so callers can catch one type; each names the
cluster (namespace/name) and says what to do next.
"""

from __future__ import annotations


class AttachError(Exception):
    """Base class of every error this package raises."""


class RayNotInitializedError(AttachError):
    """attach() was called before ray.init() in this process."""


class RecordNotFoundError(AttachError):
    """No cluster record in Ray's KV: the cluster was never applied, was destroyed, or the name/namespace is wrong."""


class RecordInvalidError(AttachError):
    """The record exists but is not a well-formed cluster record."""


class UnsupportedSchemaVersionError(AttachError):
    """The record was written by a newer provider than this helper understands."""


class GroupMissingError(AttachError):
    """A placement group the record lists no longer exists in Ray (removed outside Terraform)."""


class GroupIdMismatchError(AttachError):
    """A group with the recorded name exists but has another id: it was recreated outside Terraform."""


class GroupNotReadyError(AttachError):
    """A recorded group exists but is pending, rescheduling or removed, or did not become ready in time."""


class PlacementChangedError(AttachError):
    """Ray moved recorded bundles to other nodes (after a node failure); the record is stale."""


class ClusterResizedError(AttachError):
    """Terraform resized the cluster (nodes added or removed in place) since this object attached:
    its groups are no longer the record's. Attach again to use the new shape."""


class PortUnavailableError(AttachError):
    """No free port could be found in the cluster's port range on a bundle's node."""


class TerraformOwnedWarning(UserWarning):
    """shutdown() was called on an attached cluster; its groups belong to Terraform and stay.

    Escalate it with warnings.simplefilter("error", TerraformOwnedWarning) to make such calls fail.
    """
