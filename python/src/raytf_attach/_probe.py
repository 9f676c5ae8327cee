"""Code that runs inside a bundle, on the bundle's node.

Kept free of package imports: the module is shipped to Ray workers by value,
so the cluster's Python need not have raytf-attach installed.
"""

from __future__ import annotations

import random
import socket


def port_is_free(port: int) -> bool:
    """True when a TCP listener could bind port on all interfaces right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("", port))
            s.listen(1)
        except OSError:
            return False
    return True


def check_or_find_port(candidate, low, high, excluded):
    """Returns (node_ip, port): candidate if still free, else a free port in [low, high) not in excluded.

    port is None when the whole range is taken. Every port of the range is
    tried at most once, in random order, so a nearly full range still succeeds.
    """
    import ray

    ip = ray.util.get_node_ip_address()
    skip = set(excluded)
    if candidate is not None and candidate not in skip and port_is_free(candidate):
        return ip, candidate
    ports = [p for p in range(low, high) if p not in skip and p != candidate]
    random.shuffle(ports)
    for port in ports:
        if port_is_free(port):
            return ip, port
    return ip, None
