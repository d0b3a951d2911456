"""``track()`` in scripts of several ranks: torchrun with gloo, and Lightning's DDP on the CPU, for real."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rocmtui.events import EpochMetrics, MetricsLogged, RunFinished, TrackStarted
from rocmtui.run.layout import run_dirs
from rocmtui.run.rank_streams import RankTail
from rocmtui.run.stream import read_events
from rocmtui.tracking import env

pytestmark = pytest.mark.slow  # functional tier: real process groups

TORCHRUN_SCRIPT = """
import sys, time
import torch
import torch.distributed as dist
import rocmtui

dist.init_process_group("gloo")
with rocmtui.track("ddp-script", runs_dir=sys.argv[1], total_steps=60) as run:
    for step in range(1, 61):
        run.log(step=step, loss=torch.tensor(1.0 / step))
        time.sleep(0.01)
    run.log_epoch(1, val_loss=0.5)
dist.destroy_process_group()
"""


def run_script(tmp_path: Path, args: list[str], **extra_env: str) -> subprocess.CompletedProcess[str]:
    env_vars = {k: v for k, v in os.environ.items() if k not in (env.RUN_DIR, env.LINK, env.RUN_NAME)}
    return subprocess.run(
        args, check=False, capture_output=True, text=True, timeout=300, env={**env_vars, **extra_env}, cwd=tmp_path
    )


def two_ranks(run: Path) -> dict[int, Any]:
    """Each rank's view of ``run`` (``ranks/``): two ranks of a world of two, in two processes."""
    tail = RankTail(run)
    tail.poll()
    tail.close()
    assert sorted(tail.views) == [0, 1]
    for rank, view in tail.views.items():
        assert view.started is not None and view.started.world_size == 2 and view.started.rank == rank
    assert tail.views[0].started.pid != tail.views[1].started.pid  # type: ignore[union-attr]
    return tail.views


def test_torchrun_ranks_report_into_rank_zeros_folder(tmp_path: Path) -> None:
    script = tmp_path / "train_ddp.py"
    script.write_text(TORCHRUN_SCRIPT)
    runs = tmp_path / "runs"
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    done = run_script(tmp_path, [*torchrun, str(script), str(runs)])
    assert done.returncode == 0, done.stderr[:1500] + " ... " + done.stderr[-1500:]
    [run] = run_dirs(runs)  # one folder for both ranks
    events = read_events(run)
    assert isinstance(events[0], TrackStarted) and events[0].name == "ddp-script"
    assert isinstance(events[-1], RunFinished)
    steps: list[int] = []
    losses: list[float] = []
    for event in events:
        if isinstance(event, MetricsLogged):
            at, values = event.points()["loss"]
            steps += at
            losses += values
    assert steps == list(range(1, 61))  # rank 0's every value, once: the other rank's log nothing into it
    assert losses == pytest.approx([1.0 / step for step in steps], rel=1e-6)  # float32 tensors
    assert [e.values for e in events if isinstance(e, EpochMetrics)] == [{"val_loss": 0.5}]
    for view in two_ranks(run).values():
        assert view.progress is not None and view.progress.step > 0 and view.progress.steps_per_s > 0


def test_a_rank_without_rank_zeros_folder_is_told_how_to_give_it(tmp_path: Path) -> None:
    code = "import rocmtui\nrocmtui.track('x', rank=1, world_size=2)\n"
    done = run_script(tmp_path, [sys.executable, "-c", code])
    assert done.returncode != 0
    assert "rank 1: track() needs rank 0's run folder" in done.stderr
    assert not (tmp_path / "runs").exists()


LIGHTNING_SCRIPT = """
import sys
import torch
import lightning.pytorch as pl
from tiny_lightning import Tiny
from torch.utils.data import DataLoader, TensorDataset
from rocmtui.integrations.lightning import RocmtuiCallback


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(256, 4), torch.randn(256, 1))
    trainer = pl.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, callbacks=[RocmtuiCallback("lightning-ddp")],
    )
    trainer.fit(Tiny(), DataLoader(data, batch_size=8))
"""


def test_lightning_ddp_on_two_cpu_processes_reports_every_rank(tmp_path: Path) -> None:
    pytest.importorskip("lightning.pytorch")
    script = tmp_path / "fit_ddp.py"
    script.write_text(textwrap.dedent(LIGHTNING_SCRIPT))
    runs = tmp_path / "runs"
    helpers = {"PYTHONPATH": str(Path(__file__).parent)}  # tiny_lightning
    done = run_script(tmp_path, [sys.executable, str(script)], **{env.RUNS_DIR: str(runs)}, **helpers)
    assert done.returncode == 0, done.stderr[-2000:]
    [run] = run_dirs(runs)
    events = read_events(run)
    assert isinstance(events[0], TrackStarted) and events[0].name == "lightning-ddp"
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    tail = RankTail(run)
    tail.poll()
    tail.close()
    assert sorted(tail.views) == [0, 1]
    assert all(v.progress is not None and v.progress.step > 0 for v in tail.views.values())


HUGGING_FACE_SCRIPT = """
import sys
import torch
import transformers
from rocmtui.integrations.transformers import RocmtuiCallback

torch.manual_seed(0)
config = transformers.LlamaConfig(
    vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
    num_key_value_heads=2, max_position_embeddings=16,
)
ids = torch.randint(0, 32, (32, 8))
data = [{"input_ids": row, "labels": row} for row in ids]
args = transformers.TrainingArguments(
    output_dir=sys.argv[1], max_steps=6, per_device_train_batch_size=4, logging_steps=2, eval_strategy="steps",
    eval_steps=3, save_strategy="no", report_to=[], disable_tqdm=True, use_cpu=True, ddp_backend="gloo",
)
trainer = transformers.Trainer(
    model=transformers.LlamaForCausalLM(config), args=args, train_dataset=data, eval_dataset=data[:8],
    callbacks=[RocmtuiCallback("hf-ddp")],
)
trainer.train()
assert args.world_size == 2
torch.distributed.barrier()  # both ranks done before either tears gloo down: a rank leaving first can abort the other
torch.distributed.destroy_process_group()
"""


def test_hugging_face_trainer_ddp_on_two_cpu_processes_reports_every_rank(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    script = tmp_path / "train_hf_ddp.py"
    script.write_text(HUGGING_FACE_SCRIPT)
    runs = tmp_path / "runs"
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    done = run_script(tmp_path, [*torchrun, str(script), str(tmp_path / "out")], **{env.RUNS_DIR: str(runs)})
    assert done.returncode == 0, done.stderr[:1500] + " ... " + done.stderr[-1500:]
    [run] = run_dirs(runs)  # one folder for both ranks
    events = read_events(run)
    assert isinstance(events[0], TrackStarted) and events[0].name == "hf-ddp" and events[0].total_steps == 6
    assert not events[0].saves  # a save is a collective: no viewer's s with several ranks
    steps = [e for e in events if isinstance(e, MetricsLogged)]
    assert steps[-1].step == 6 and "loss" in steps[-1].values
    assert [e.step for e in events if isinstance(e, EpochMetrics)] == [3, 6]  # rank 0's evaluations only
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    for view in two_ranks(run).values():
        assert view.progress is not None and view.progress.step == 6


def test_a_torchrun_script_of_two_nodes_reports_every_rank_with_its_node(tmp_path: Path) -> None:
    """Two torchrun launchers (two "nodes") on one c10d rendezvous port, two ranks each: one run folder, and
    ``runs RUN --ranks --json`` lists all four ranks with their node and step."""
    import json
    import socket

    script = tmp_path / "train_ddp.py"
    script.write_text(TORCHRUN_SCRIPT)
    runs = tmp_path / "runs"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    torchrun = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "2",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two-nodes",
        str(script), str(runs),
    ]  # fmt: skip
    env_vars = {k: v for k, v in os.environ.items() if k not in (env.RUN_DIR, env.LINK, env.RUN_NAME)}
    pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    nodes = [subprocess.Popen(torchrun, cwd=tmp_path, env=env_vars, **pipes) for _ in range(2)]
    said = [node.communicate(timeout=300) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], [err[-1500:] for _, err in said]
    [run] = run_dirs(runs)
    listed = subprocess.run(
        [sys.executable, "-m", "rocmtui", "runs", str(run), "--ranks", "--json"],
        check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    ranks = json.loads(listed.stdout)
    assert [r["rank"] for r in ranks] == [0, 1, 2, 3]
    assert sorted((r["node"], r["local_rank"]) for r in ranks) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(r["node"] == r["rank"] // 2 for r in ranks)  # listed grouped by node
    assert all(r["step"] == 60 and r["state"] == "ended" and r["step_s_median"] for r in ranks)
