"""AttachedVirtualCluster as a subclass of NeMo-RL's RayVirtualCluster, where NeMo-RL is importable.

isinstance(cluster, RayVirtualCluster) then holds, so code and type checks
that expect NeMo-RL's class accept an attached cluster. The subclass is made
at run time, once per reference class: RayVirtualCluster is a plain class
(no ABC), so it cannot be given a virtual subclass. Every member of the
reference that AttachedVirtualCluster does not define (such as
_create_placement_groups_internal) raises instead of running NeMo-RL's code
on Terraform's groups, and the reference's __del__ (which calls shutdown())
does nothing.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Optional

from .cluster import AttachedVirtualCluster
from .errors import AttachError

REFERENCE_MODULE = "nemo_rl.distributed.virtual_cluster"
REFERENCE_CLASS = "RayVirtualCluster"

_subclasses: dict[type, type] = {}


def reference_class(import_it: bool = True) -> Optional[type]:
    """NeMo-RL's RayVirtualCluster, or None when nemo_rl is not importable."""
    module = sys.modules.get(REFERENCE_MODULE)
    if module is None and import_it:
        try:
            module = importlib.import_module(REFERENCE_MODULE)
        except ImportError:
            return None
    cls = getattr(module, REFERENCE_CLASS, None)
    return cls if isinstance(cls, type) else None


def attached_class(reference: Optional[type] = None) -> type:
    """The class attach() instantiates: the subclass of `reference` (default: NeMo-RL's, if importable)."""
    if reference is None:
        reference = reference_class()
    if reference is None:
        return AttachedVirtualCluster
    sub = _subclasses.get(reference)
    if sub is None:
        members: dict[str, Any] = {
            "__module__": __name__,
            "__doc__": f"An attached cluster that is also a {reference.__module__}.{reference.__qualname__}.",
            "__init__": _init_once,
            "__del__": _keep_groups,
        }
        for attr, value in vars(reference).items():
            if attr.startswith("__") or not callable(value) or hasattr(AttachedVirtualCluster, attr):
                continue
            members[attr] = _refuse(attr)
        sub = type(f"Attached{reference.__name__}", (AttachedVirtualCluster, reference), members)
        _subclasses[reference] = sub
    return sub


def _init_once(self, *args, **kwargs) -> None:
    # Built by attach() with the record; a second call comes from
    # RayVirtualCluster(...) itself when the hook returned this object from
    # __new__ (Python then calls __init__ with NeMo-RL's arguments): keep it.
    if "record" in self.__dict__:
        return
    AttachedVirtualCluster.__init__(self, *args, **kwargs)


def _keep_groups(self) -> None:
    """Garbage collection leaves Terraform's groups alone (the reference's __del__ would call shutdown())."""


def _refuse(attr: str):
    def refused(self, *args, **kwargs):
        raise AttachError(
            f"{attr}() is NeMo-RL's own RayVirtualCluster code and is not available on the attached cluster "
            f"{getattr(self, 'namespace', '?')}/{getattr(self, 'name', '?')}: its placement groups belong to Terraform"
        )

    refused.__name__ = attr
    return refused
