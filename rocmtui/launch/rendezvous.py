"""Where the nodes of a job meet: torch.distributed's launch settings for one node or several, and the addresses
torch would guess wrong on a machine of several networks."""

from __future__ import annotations

import ipaddress
import socket
import uuid
from typing import Any

from rocmtui.config import TrainConfig

JOIN_TIMEOUT_S = 900
"""How long a node waits at the rendezvous for the job's other nodes (torchrun's default)."""


def launch_config(config: TrainConfig, logs: Any) -> Any:
    """torchrun's settings for ``config``: this node's ``nproc`` ranks, no restarts. One node: a c10d rendezvous
    on a free port of this host (``--standalone``). Several: every node joins the c10d rendezvous at
    ``--rdzv-endpoint`` under ``--rdzv-id`` and is given its place, or, with ``--node-rank``, a static one."""
    from torch.distributed.launcher.api import LaunchConfig

    endpoint = config.rdzv_endpoint  # given with --nnodes above 1 (the command line sees to it)
    static = endpoint is not None and config.node_rank is not None
    rdzv: dict[str, Any] = {"timeout": JOIN_TIMEOUT_S}
    if static:
        rdzv["rank"] = config.node_rank
    elif endpoint is not None and hosts_rendezvous(endpoint):
        rdzv["is_host"] = True
    return LaunchConfig(
        min_nodes=config.nnodes,
        max_nodes=config.nnodes,
        nproc_per_node=config.nproc,
        run_id=config.rdzv_id or uuid.uuid4().hex,
        rdzv_backend="static" if static else "c10d",
        rdzv_endpoint=endpoint or "127.0.0.1:0",
        rdzv_configs=rdzv,
        local_addr=address_toward(endpoint) if endpoint is not None else None,
        max_restarts=0,
        monitor_interval=0.1,
        start_method="spawn",
        logs_specs=logs,
    )


def hosts_rendezvous(endpoint: str) -> bool:
    """Whether this machine should host the c10d store at ``endpoint`` where torch's own test (the endpoint is
    this host's name or one of the addresses its name resolves to) would miss it: an address of this machine
    that its name does not resolve to (a second network card, a network namespace). Loopback and names are
    left to torch, which lets every launcher on the machine try and the first to bind host."""
    host = endpoint.rpartition(":")[0].strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if address.is_loopback:
        return False
    try:
        known = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError):
        known = set()
    if host in known:
        return False
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


def address_toward(endpoint: str) -> str | None:
    """This machine's address on the route to the rendezvous endpoint: what the other nodes reach this node's
    ranks at when it holds rank 0 (torch would otherwise take this host's name, which on a machine of several
    networks may name the wrong one, or ``localhost``). None for a loopback endpoint or one that does not resolve."""
    host, _, port = endpoint.rpartition(":")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), int(port), proto=socket.IPPROTO_UDP)
    except (OSError, UnicodeError, ValueError):
        return None
    for family, kind, proto, _, where in infos:
        if ipaddress.ip_address(where[0]).is_loopback:
            return None
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.connect(where)  # a UDP connect sends nothing: it only picks the route and the local address
                return str(probe.getsockname()[0])
        except OSError:
            continue
    return None
