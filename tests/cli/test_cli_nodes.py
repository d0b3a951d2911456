"""``train --nnodes``: Slurm's job settings where the command line gave none, and the combinations a job of
several nodes needs refused in one line before anything starts."""

from __future__ import annotations

import pytest

from rocmtui.base.errors import UsageError
from rocmtui.cli.job_options import with_job_defaults
from rocmtui.cli.main import build_parser, main, train_config
from rocmtui.config import TrainConfig


def config_of(*argv: str) -> TrainConfig:
    return train_config(build_parser().parse_args(["train", "cifar", *argv]))


SLURM = {"SLURM_JOB_ID": "81234", "SLURM_NNODES": "4", "SLURM_NODEID": "2", "SLURM_PROCID": "2", "SLURM_NTASKS": "4"}


def test_under_slurm_the_job_takes_its_nodes_place_and_id_from_the_environment() -> None:
    config = with_job_defaults(config_of("--rdzv-endpoint", "node0:29500"), SLURM)
    assert (config.nnodes, config.node_rank, config.rdzv_id) == (4, 2, "slurm-81234")
    given = with_job_defaults(config_of("--rdzv-endpoint", "n:1", "--nnodes", "2", "--rdzv-id", "mine"), SLURM)
    assert (given.nnodes, given.rdzv_id) == (2, "mine")  # what the command line says wins
    with pytest.raises(UsageError, match="give --rdzv-endpoint HOST:PORT"):
        with_job_defaults(config_of(), SLURM)  # four nodes, and nowhere to meet


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--nnodes", "2", "--rdzv-id", "a"], {}, "--nnodes 2: give --rdzv-endpoint HOST:PORT"),
        (["--nnodes", "2", "--rdzv-endpoint", "h:1"], {}, "--nnodes 2: give --rdzv-id ID"),
        (["--nnodes", "2", "--rdzv-endpoint", "h:1", "--rdzv-id", "a", "--node-rank", "2"], {}, "has 2 node(s)"),
        (["--node-rank", "0"], {}, "--node-rank: give --rdzv-endpoint"),
        (["--rdzv-endpoint", "h:1"], {**SLURM, "SLURM_NNODES": "x"}, "SLURM_NNODES or SLURM_NODEID is not a number"),
    ],
)
def test_a_job_missing_what_its_nodes_need_is_refused(argv: list[str], env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with_job_defaults(config_of(*argv), env)


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--rdzv-endpoint", "node0"), ("--rdzv-endpoint", "h:70000"), ("--rdzv-endpoint", "a b:1"),
     ("--rdzv-id", "../up"), ("--rdzv-id", ".hidden"), ("--rdzv-id", "x" * 65), ("--node-rank", "-1")],
)  # fmt: skip
def test_bad_values_are_one_line_errors(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["train", "cifar", flag, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err


def test_good_endpoints_and_ids_are_taken() -> None:
    config = config_of("--rdzv-endpoint", "[fe80::1]:29500", "--rdzv-id", "run-7.a_b", "--node-rank", "0")
    assert (config.rdzv_endpoint, config.rdzv_id, config.node_rank) == ("[fe80::1]:29500", "run-7.a_b", 0)
    assert config_of("--rdzv-endpoint", "10.0.0.1:1").rdzv_endpoint == "10.0.0.1:1"
    assert config_of("--nnodes", "2").several_ranks and not config_of().several_ranks
