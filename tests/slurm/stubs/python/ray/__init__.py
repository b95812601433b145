"""SIMULATOR STAND-IN for the `ray` package, for TunePlane's tests only: the part of Ray's
API that the batch script's wait program, a test driver and the LlamaFactory stand-in use
(init, is_initialized, nodes, cluster_resources, shutdown), asking a stand-in head (see
_standin.py). It is not Ray."""

import os

from ray import _standin

_address = None


def init(address=None, logging_level=None, **_ignored):
    global _address
    address = address or os.environ.get("RAY_ADDRESS")
    if not address:
        raise ConnectionError("stand-in ray: no address (pass one or set RAY_ADDRESS)")
    connection, _, _ = _standin.request(address, {"op": "nodes"})
    connection.close()
    _address = address


def is_initialized():
    return _address is not None


def nodes():
    if _address is None:
        raise RuntimeError("stand-in ray: call ray.init() first")
    connection, _, reply = _standin.request(_address, {"op": "nodes"})
    connection.close()
    return reply["nodes"]


def shutdown():
    global _address
    _address = None


def cluster_resources():
    """Every alive node's resources summed, as Ray's cluster_resources() does."""
    total = {}
    for node in nodes():
        if node.get("Alive"):
            for name, amount in node.get("Resources", {}).items():
                total[name] = total.get(name, 0) + amount
    return total
