"""The launch settings of one node and of a job of several, and the addresses given to torch in place of its
guesses from the host's name."""

from __future__ import annotations

import dataclasses
import socket

import pytest

from rocmtui.config import TrainConfig
from rocmtui.launch.rendezvous import JOIN_TIMEOUT_S, address_toward, hosts_rendezvous, launch_config


def test_one_node_is_a_standalone_rendezvous_on_a_free_local_port() -> None:
    launch = launch_config(TrainConfig(nproc=2), None)
    assert (launch.min_nodes, launch.max_nodes, launch.nproc_per_node) == (1, 1, 2)
    assert launch.rdzv_backend == "c10d" and launch.rdzv_endpoint == "127.0.0.1:0" and launch.local_addr is None
    assert launch.max_restarts == 0 and len(launch.run_id) == 32


def test_a_job_of_nodes_meets_at_its_endpoint_under_its_id() -> None:
    config = TrainConfig(nproc=4, nnodes=3, rdzv_endpoint="127.0.0.1:29500", rdzv_id="exp42")
    launch = launch_config(config, None)
    assert (launch.min_nodes, launch.max_nodes, launch.nproc_per_node) == (3, 3, 4)
    assert (launch.rdzv_backend, launch.rdzv_endpoint, launch.run_id) == ("c10d", "127.0.0.1:29500", "exp42")
    assert launch.rdzv_configs == {"timeout": JOIN_TIMEOUT_S}  # loopback: torch decides who hosts
    static = launch_config(dataclasses.replace(config, node_rank=2), None)
    assert static.rdzv_backend == "static" and static.rdzv_configs["rank"] == 2


def test_loopback_names_and_addresses_not_here_are_left_to_torch() -> None:
    assert not hosts_rendezvous("127.0.0.1:29500") and not hosts_rendezvous("[::1]:29500")
    assert not hosts_rendezvous("node0:29500")  # a name: torch matches it against this host's
    assert not hosts_rendezvous("192.0.2.1:29500")  # TEST-NET-1: no machine's own address
    assert address_toward("127.0.0.1:29500") is None
    assert address_toward("no-such-host.invalid:29500") is None


def test_the_address_toward_an_endpoint_is_one_of_this_machines() -> None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            own = probe.getsockname()[0]
    except OSError:
        pytest.skip("no route out of this machine to pick an address by")
    assert address_toward("192.0.2.1:29500") == own
    assert address_toward(f"{own}:29500") == own  # the endpoint is this machine: its own address
