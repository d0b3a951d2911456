"""The fused-kernel cache: keyed by everything that shapes the compiled graph, checked before use, built in
the background, and eager kernels with one line whenever it cannot be used.

The compile itself needs a CUDA GPU (the build captures a CUDA graph): it is measured on the H200
(``scripts/fast_levers.py``, BENCHMARKS.md), not here; these tests cover every decision around it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from second_user import Stranger, open_tmp, stranger

from rocmtui.config import FusedMode, TrainConfig
from rocmtui.run.format import write_record
from rocmtui.train import fused, fused_build, fused_prune
from rocmtui.train.engine import Augmenter, Nets, capture_or_fall_back
from rocmtui.train.recipes import RECIPES

__all__ = ["open_tmp", "stranger"]
FAST = TrainConfig(**RECIPES["fast"].settings)
CUDA = torch.device("cuda")
PARTS: dict[str, Any] = {"torch": "2.11.0", "gpu": "NVIDIA H200", "batch_size": 2000, "code": "abc"}


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """This machine as an H200 for ``fused.identity`` (the one call that needs a GPU)."""
    monkeypatch.setattr(fused, "identity", lambda *_args: dict(PARTS))
    return PARTS


@pytest.fixture(autouse=True)
def kept_umask() -> Iterator[None]:
    """``fused_build.main`` narrows its process's umask (its own process, in use): restored after each test."""
    umask = os.umask(0o022)
    os.umask(umask)
    yield
    os.umask(umask)


def planned() -> fused.Plan:
    return fused.plan(FAST, CUDA, (3, 32, 32), 10, 50_000, 10_000)


def ready_cache(folder: Path) -> None:
    (folder / "inductor").mkdir(parents=True)
    (folder / "inductor" / "graph.py").write_text("kernels")
    write_record(folder / fused.READY, {"identity": PARTS, "files": fused.manifest(folder)})


def test_the_key_changes_with_torch_the_gpu_and_the_recipe() -> None:
    keys = {
        fused.cache_key(PARTS),
        fused.cache_key(PARTS | {"torch": "2.12.0"}),
        fused.cache_key(PARTS | {"gpu": "NVIDIA H100"}),
        fused.cache_key(PARTS | {"batch_size": 1000}),
    }
    assert len(keys) == 4
    assert fused.cache_key(dict(reversed(list(PARTS.items())))) == fused.cache_key(PARTS)


def test_each_fused_mode_has_its_own_cache_and_compiles_as_its_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _=None: "NVIDIA H200")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda _=None: (9, 0))

    def key(mode: FusedMode) -> str:
        return fused.cache_key(
            fused.identity(dataclasses.replace(FAST, fused_mode=mode), CUDA, (3, 32, 32), 10, 50_000, 10_000)
        )

    assert key("default") != key("max-autotune")
    modes: list[object] = []

    def compile_(model: torch.nn.Module, **options: object) -> torch.nn.Module:
        modes.append(options["mode"])
        return model

    monkeypatch.setattr(torch, "compile", compile_)
    fused.compile_for(torch.nn.Linear(1, 1), "max-autotune")
    fused.compile_for(torch.nn.Linear(1, 1), "default")
    assert modes == ["max-autotune-no-cudagraphs", None]  # the run captures its step itself


def test_off_without_the_option_a_graph_or_a_gpu() -> None:
    assert fused.plan(FAST, torch.device("cpu"), (3, 32, 32), 10, 50_000, 10_000) is fused.OFF
    assert (
        fused.plan(dataclasses.replace(FAST, fused_kernels=False), CUDA, (3, 32, 32), 10, 50_000, 10_000) is fused.OFF
    )
    assert fused.plan(dataclasses.replace(FAST, cuda_graph=False), CUDA, (3, 32, 32), 10, 50_000, 10_000) is fused.OFF


def test_skipped_on_rocm_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.version, "hip", "6.2", raising=False)
    result = planned()
    assert result.state == "skipped" and result.notice is not None and "ROCm" in result.notice


def test_missing_then_ready(parts: dict[str, Any]) -> None:
    missing = planned()
    assert missing.state == "missing" and missing.folder is not None
    assert missing.folder.parent == fused.cache_root() and missing.folder.name == fused.cache_key(parts)
    assert missing.request is not None and missing.request["identity"] == parts
    assert missing.notice is not None and "eager kernels" in missing.notice
    ready_cache(missing.folder)
    ready = planned()
    assert ready.state == "ready" and ready.notice is None


def weighed_cache(parts: dict[str, Any], **costs: object) -> fused.Plan:
    """A ready cache whose ``costs.json`` holds ``costs`` (none: not weighed), as ``planned`` finds it."""
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    if costs:
        (folder / fused.COSTS).write_text(json.dumps(costs))
    ready = planned()
    assert ready.state == "ready"
    return ready


SLOW_START = {"fused_setup_s": 9.4, "eager_setup_s": 0.9, "fused_step_s": 0.0061, "eager_step_s": 0.0070}
"""A cache that starts 8.5 s later than eager kernels and saves 0.9 ms a step (an H200's, in round figures)."""


def test_a_cache_that_costs_more_than_it_saves_is_not_loaded_and_says_why(parts: dict[str, Any]) -> None:
    ready = weighed_cache(parts, **SLOW_START)
    run = fused.weighed(ready, steps=200, epochs=8)  # saves 0.18 s for 8.5 s more start
    assert run.state == "not worth it" and run.folder == ready.folder
    assert run.notice == (
        "fused kernels: loading them takes 8.5 s more than eager kernels and saves 0.18 s over 8 epoch(s); "
        "eager kernels"
    )


def test_a_cache_is_loaded_where_the_steps_it_saves_pay_for_its_start(parts: dict[str, Any]) -> None:
    ready = weighed_cache(parts, **SLOW_START)
    assert fused.weighed(ready, steps=10_000, epochs=400) == ready  # saves 9 s for 8.5 s
    assert fused.weighed(ready, steps=9_000, epochs=360).state == "not worth it"  # saves 8.1 s: a loss


@pytest.mark.parametrize(
    "costs",
    [
        {},
        {"fused_setup_s": 1.0, "eager_setup_s": 1.0, "fused_step_s": 0.001},
        SLOW_START | {"fused_step_s": "fast"},
        SLOW_START | {"eager_step_s": float("nan")},
        SLOW_START | {"fused_setup_s": -1.0},
        SLOW_START | {"fused_setup_s": 1e9},
    ],
)
def test_a_cache_not_weighed_or_weighed_wrong_is_not_loaded_and_is_weighed_after_the_run(
    parts: dict[str, Any], costs: dict[str, object]
) -> None:
    ready = weighed_cache(parts, **costs)
    if not costs and ready.folder is not None:
        assert not (ready.folder / fused.COSTS).exists()
    run = fused.weighed(ready, steps=200, epochs=8)
    assert run.state == "unweighed" and run.notice is not None and "not weighed yet; eager kernels" in run.notice
    assert run.request is not None  # what the weighing after the run needs


def test_plans_other_than_ready_are_not_weighed(parts: dict[str, Any]) -> None:
    missing = planned()
    assert fused.weighed(missing, steps=200, epochs=8) == missing
    assert fused.weighed(fused.OFF, steps=200, epochs=8) == fused.OFF


def test_the_builder_weighs_a_ready_cache_without_building_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready_cache(tmp_path)
    write_record(tmp_path / fused.REQUEST, {"identity": PARTS, "config": FAST.to_dict()})
    weighed: list[Path] = []

    def rebuilt(_folder: Path) -> float:
        raise AssertionError("a ready cache is not built again")

    def weigh(folder: Path) -> fused.Costs:
        weighed.append(folder)
        costs = fused.Costs(**SLOW_START)
        write_record(folder / fused.COSTS, costs)
        return costs

    monkeypatch.setattr(fused_build, "build", rebuilt)
    monkeypatch.setattr(fused_build, "weigh", weigh)
    assert fused_build.main([str(tmp_path)]) == 0
    assert weighed == [tmp_path]
    assert fused.read_costs(tmp_path) == fused.Costs(**SLOW_START)
    assert fused_build.main([str(tmp_path)]) == 0 and weighed == [tmp_path]  # weighed once


def test_each_kind_is_weighed_twice_and_the_lower_of_each_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = {"fused": [(9.0, 0.0066), (8.5, 0.0064)], "eager": [(0.80, 0.0081), (0.75, 0.0080)]}
    order: list[str] = []

    def in_process(_folder: Path, kind: str) -> dict[str, float]:
        order.append(kind)
        setup, step = times[kind].pop(0)
        return {"setup_s": setup, "step_s": step}

    monkeypatch.setattr(fused_build, "_weigh_in_process", in_process)
    costs = fused_build.weigh(tmp_path)
    assert order == ["fused", "eager", "eager", "fused"]
    assert costs == fused.Costs(fused_setup_s=8.5, eager_setup_s=0.75, fused_step_s=0.0064, eager_step_s=0.0080)
    assert fused.read_costs(tmp_path) == costs


def test_weighings_that_disagree_record_nothing_and_the_next_run_weighs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another job on the GPU during one eager weighing (a step 15 ms against 8): no costs, no failure."""
    ready_cache(tmp_path)
    write_record(tmp_path / fused.REQUEST, {"identity": PARTS, "config": FAST.to_dict()})
    steps = {"fused": [0.0066, 0.0065], "eager": [0.0150, 0.0080]}

    def in_process(_folder: Path, kind: str) -> dict[str, float]:
        return {"setup_s": 1.0, "step_s": steps[kind].pop(0)}

    monkeypatch.setattr(fused_build, "_weigh_in_process", in_process)
    assert fused_build.main([str(tmp_path)]) == 0
    assert fused.read_costs(tmp_path) is None and not (tmp_path / fused.FAILED).exists()
    disturbed = r"a step with eager kernels weighed 15\.000 ms and 8\.000 ms"
    with pytest.raises(fused_build.UnsettledError, match=disturbed):
        fused_build.combined(
            {
                "fused": [{"setup_s": 1.0, "step_s": 0.0066}],
                "eager": [{"setup_s": 1.0, "step_s": 0.015}, {"setup_s": 1.0, "step_s": 0.008}],
            }
        )
    agreeing = {"setup_s": 1.0, "step_s": 0.008}
    within = {"setup_s": 3.0, "step_s": 0.008 * fused_build.WEIGH_AGREE}  # a first start from cold files: slower
    assert fused_build.combined({"fused": [agreeing], "eager": [within, agreeing]}).eager_setup_s == 1.0


def test_a_run_during_a_build_says_it_shares_the_gpu_and_starts_no_other(parts: dict[str, Any]) -> None:
    """A build benchmarks and compiles on the GPU: a run beside it trains eagerly, slower, and says why."""
    folder = planned().folder
    assert folder is not None
    folder.mkdir(parents=True)
    with open(folder / fused.LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        during = planned()
        assert during.state == "building" and during.notice is not None
        assert "being built" in during.notice and "slower steps" in during.notice
        assert fused.build_later(during) is None
    assert planned().state == "missing"


def test_a_damaged_cache_is_found_before_use(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    (folder / "inductor" / "graph.py").write_text("kernelz")  # same size, other bytes
    damaged = planned()
    assert damaged.state == "broken" and damaged.notice is not None
    assert "inductor/graph.py is missing or changed" in damaged.notice and "\n" not in damaged.notice
    (folder / fused.READY).write_text("{not json")
    assert planned().state == "broken"


def test_a_cache_file_writable_by_the_group_or_a_link_is_refused_before_anything_is_read(
    parts: dict[str, Any],
) -> None:
    """As under umask 002: a group member could rewrite a kernel and ready.json together."""
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    (folder / "inductor" / "graph.py").chmod(0o664)
    broken = planned()
    assert broken.state == "broken" and broken.notice is not None
    assert "graph.py is writable by its group" in broken.notice
    (folder / "inductor" / "graph.py").chmod(0o644)
    (folder / "inductor").chmod(0o777)
    assert fused.damage(folder, parts) == f"{folder / 'inductor'} is writable by its group and others"
    (folder / "inductor").chmod(0o700)
    (folder / "inductor" / "other.py").symlink_to(folder / "inductor" / "graph.py")
    assert fused.damage(folder, parts) == f"{folder / 'inductor' / 'other.py'} is not a plain file or folder"


def test_a_cache_rewritten_whole_by_another_user_is_refused(
    parts: dict[str, Any], open_tmp: Path, stranger: Stranger
) -> None:
    """A group member rewrites a kernel entry and ready.json together, digests and all: the files' owner and
    mode vouch for the cache, not a record inside it."""
    folder = open_tmp / "compiled" / "key"
    ready_cache(folder)
    for path in [open_tmp / "compiled", *folder.rglob("*"), folder]:
        os.chown(path, -1, stranger.gid)
        path.chmod(path.stat().st_mode | 0o060)  # what umask 002 leaves
    planted = b"import os; os.system('id > /tmp/owned')"
    digest = hashlib.sha256(planted).hexdigest()
    ready = json.dumps({"identity": PARTS, "files": {"inductor/graph.py": digest}})
    stranger.run(
        f"rm -f {folder}/inductor/graph.py {folder}/{fused.READY}"
        f' && printf %s "{planted.decode()}" > {folder}/inductor/graph.py'
        f" && printf %s '{ready}' > {folder}/{fused.READY}"
    )
    assert (folder / "inductor" / "graph.py").read_bytes() == planted  # the attack itself worked
    problem = fused.damage(folder, parts)
    assert problem is not None and "writable by its group" in problem
    request = {"identity": parts, "config": {}}
    assert fused._folder_plan(folder, parts, request).state == "broken"


def test_a_cache_of_thousands_of_files_is_read(parts: dict[str, Any]) -> None:
    """Max-autotune's build lists about 6,000 files: a ready.json of more than a megabyte."""
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    files = {f"triton/{n:064x}/kernel.cubin": "0" * 64 for n in range(12_000)}
    write_record(folder / fused.READY, {"identity": PARTS, "files": files})
    assert (folder / fused.READY).stat().st_size > 1 << 20
    assert fused.damage(folder, PARTS) == f"{next(iter(files))} is missing or changed"


def test_lock_files_are_not_part_of_the_cache(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    (folder / "inductor" / "locks").mkdir()
    (folder / "inductor" / "locks" / "abc").write_text("")
    (folder / "triton").mkdir()
    (folder / "triton" / "k.lock").write_text("")
    assert list(fused.manifest(folder)) == ["inductor/graph.py"]


def test_a_cache_for_another_identity_is_not_used(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    ready = json.loads((folder / fused.READY).read_text())
    write_record(folder / fused.READY, ready | {"identity": PARTS | {"torch": "2.10"}})
    assert fused.damage(folder, parts) == "its ready.json does not match"


def test_a_failed_build_is_not_tried_again(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    folder.mkdir(parents=True)
    write_record(folder / fused.FAILED, {"error": "RuntimeError: no Triton"})
    result = planned()
    assert result.state == "failed" and result.notice is not None and "RuntimeError: no Triton" in result.notice
    assert fused.build_later(result) is None


class FakeEngine:
    """The parts of an Engine that ``capture_or_fall_back`` touches."""

    def __init__(self, plan: fused.Plan) -> None:
        self.model = torch.nn.Linear(3, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters())
        self.eager = type("Eager", (), {"model": "compiled"})()
        self.augmenter = Augmenter(None, torch.Generator(), None, placement=lambda *_args, **_kw: torch.zeros(1))
        self.nets = Nets(self.model, self.model, eager_test_logits=self.eager_tests, test_logits=self.compiled_tests)
        self.fused = plan

    @staticmethod
    def eager_tests(images: torch.Tensor, tta: bool) -> torch.Tensor:
        return images

    @staticmethod
    def compiled_tests(images: torch.Tensor, tta: bool) -> torch.Tensor:
        return images


def test_a_compiled_step_that_fails_falls_back_to_eager_once(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    engine = FakeEngine(planned())
    before = {k: v.clone() for k, v in engine.model.state_dict().items()}
    calls = []

    def make() -> str:
        calls.append(engine.eager.model)
        if len(calls) == 1:
            with torch.no_grad():
                engine.model.weight.add_(1.0)  # a warm-up that got halfway
            raise RuntimeError("inductor: bad cache\nmore detail")
        return "eager step"

    assert capture_or_fall_back(engine, make) == "eager step"  # type: ignore[arg-type]
    assert calls == ["compiled", engine.model]
    assert engine.augmenter.placement is None  # the epochs' draws with eager kernels too
    assert engine.nets.test_logits is FakeEngine.eager_tests  # and the test passes
    assert all(torch.equal(v, before[k]) for k, v in engine.model.state_dict().items())
    assert engine.fused.state == "failed"
    assert engine.fused.notice == "fused kernels failed (RuntimeError: inductor: bad cache); eager kernels"
    assert not (folder / fused.READY).exists() and planned().state == "failed"


def test_the_builds_own_compiled_step_does_not_fall_back(parts: dict[str, Any]) -> None:
    """A build's failure is the build's (``failed.json`` and exit 1 in ``fused_build.main``), not eager steps."""
    folder = planned().folder
    assert folder is not None
    engine = FakeEngine(fused.Plan("ready", folder, fallback=False))

    def make() -> str:
        raise RuntimeError("inductor: cannot compile")

    with pytest.raises(RuntimeError, match="cannot compile"):
        capture_or_fall_back(engine, make)  # type: ignore[arg-type]
    assert engine.fused.state == "ready" and not (folder / fused.FAILED).exists()


def test_the_build_starts_in_a_session_of_its_own(parts: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[dict[str, Any]] = []

    def popen(args: list[str], **kwargs: Any) -> str:
        started.append({"args": args, **kwargs})
        return "process"

    monkeypatch.setattr(subprocess, "Popen", popen)
    missing = planned()
    assert fused.build_later(missing) == "process"
    assert missing.folder is not None
    assert started[0]["args"][1:] == ["-m", "rocmtui.train.fused_build", str(missing.folder)]
    assert started[0]["start_new_session"] is True
    request = json.loads((missing.folder / fused.REQUEST).read_text())
    assert request["identity"] == parts and request["config"]["model"] == "fastnet"
    assert fused.build_later(fused.OFF) is None


def test_the_builder_refuses_a_folder_without_a_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fused_build.main([str(tmp_path)]) == 2
    assert fused_build.main([]) == 2
    assert capsys.readouterr().err.count("usage: ") == 2


def test_a_build_that_fails_records_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_record(tmp_path / fused.REQUEST, {"identity": PARTS, "config": FAST.to_dict()})

    def broken(_folder: Path) -> float:
        raise RuntimeError("CUDA unavailable\nstack")

    monkeypatch.setattr(fused_build, "build", broken)
    assert fused_build.main([str(tmp_path)]) == 1
    assert json.loads((tmp_path / fused.FAILED).read_text()) == {"error": "RuntimeError: CUDA unavailable"}


def test_the_random_images_have_the_runs_shape() -> None:
    arrays = fused_build.random_arrays([3, 32, 32], 10, 2000, 300)
    assert arrays.train_images.shape == (2000, 32, 32, 3) and arrays.train_images.dtype.name == "uint8"
    assert arrays.test_images.shape == (300, 32, 32, 3) and len(arrays.test_labels) == 300
    assert set(arrays.train_labels.tolist()) == set(range(10)) and len(arrays.classes) == 10


def test_the_fast_recipe_asks_for_fused_kernels_and_a_quarter_of_the_tta() -> None:
    assert FAST.fused_kernels and FAST.tta_share == 0.25 and FAST.cuda_graph


@pytest.mark.slow
@pytest.mark.gpu(reason="the build captures a CUDA graph")
def test_a_build_on_a_gpu_makes_a_cache_the_next_run_loads(tmp_path: Path) -> None:
    config = dataclasses.replace(FAST, device="cuda")
    missing = fused.plan(config, CUDA, (3, 32, 32), 10, 50_000, 10_000)
    process = fused.build_later(missing)
    assert process is not None and process.wait() == 0
    ready = fused.plan(config, CUDA, (3, 32, 32), 10, 50_000, 10_000)
    assert ready.state == "ready" and ready.folder is not None
    costs = fused.read_costs(ready.folder)  # weighed in fresh processes after the build
    assert costs is not None and costs.fused_step_s < costs.eager_step_s
    assert fused.weighed(ready, steps=1, epochs=1).state == "not worth it"  # one step never pays for the load


def aged_cache(root: Path, name: str, age_s: float) -> Path:
    folder = root / name
    ready_cache(folder)
    stamp = 1_700_000_000 - age_s
    os.utime(folder / fused.READY, (stamp, stamp))
    return folder


def key(n: int) -> str:
    return f"{n:020x}"


def test_pruning_keeps_the_newest_caches_and_the_one_just_built(tmp_path: Path) -> None:
    caches = [aged_cache(tmp_path, key(i), age_s=i * 3600.0) for i in range(6)]  # key(0) newest
    removed = fused_prune.prune(tmp_path, caches[5], count=3)
    assert sorted(removed) == caches[2:5]
    assert sorted(tmp_path.iterdir()) == [caches[0], caches[1], caches[5]]


def test_pruning_keeps_as_many_caches_when_the_one_just_built_is_the_newest(tmp_path: Path) -> None:
    caches = [aged_cache(tmp_path, key(i), age_s=i * 3600.0) for i in range(6)]  # key(0) newest
    removed = fused_prune.prune(tmp_path, caches[0], count=4)
    assert sorted(removed) == caches[4:]
    assert sorted(tmp_path.iterdir()) == caches[:4]


def test_pruning_spares_a_running_build_links_and_what_is_not_a_cache(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "compiled", tmp_path / "elsewhere"
    old = aged_cache(root, key(1), age_s=9000.0)
    busy = aged_cache(root, key(2), age_s=8000.0)
    outside = aged_cache(elsewhere, key(3), age_s=7000.0)
    (root / key(4)).symlink_to(outside, target_is_directory=True)
    other = aged_cache(root, "not-a-cache", age_s=6000.0)
    new = aged_cache(root, key(5), age_s=0.0)
    with open(busy / fused.LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        removed = fused_prune.prune(root, new, count=1)
    assert removed == [old]
    assert busy.is_dir() and new.is_dir() and outside.is_dir() and other.is_dir() and (root / key(4)).is_symlink()


def test_loading_a_ready_cache_stamps_it_as_used(parts: dict[str, Any]) -> None:
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    os.utime(folder / fused.READY, (1_000_000, 1_000_000))
    assert planned().state == "ready"
    assert fused_prune.last_used(folder) > 1_000_000


def test_compile_keeps_its_kernels_in_a_private_folder_not_in_tmp(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inductor's default, /tmp/torchinductor_<user>, can be made first by another user and filled with pickles."""
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    fused.private_compile_cache()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(private_cache / "compile" / "inductor")
    assert os.environ["TRITON_CACHE_DIR"] == str(private_cache / "compile" / "triton")
    assert (private_cache / "compile").stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/chosen/inductor")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/chosen/triton")
    fused.private_compile_cache()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/chosen/inductor"


def test_a_compiled_model_is_built_over_the_private_cache(
    small: Any, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    seen: list[str | None] = []

    def compile_(model: torch.nn.Module, **_options: object) -> torch.nn.Module:
        seen.append(os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
        return model

    monkeypatch.setattr(torch, "compile", compile_)
    from rocmtui.train.data import load_arrays, resolve_source
    from rocmtui.train.engine import build_engine

    config = small(compile=True)
    build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    assert seen and set(seen) == {str(private_cache / "compile" / "inductor")}


def test_a_run_that_loads_the_cache_adds_nothing_its_group_could_write(
    parts: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under umask 002, Inductor's files added while a run loads would be group-writable: the next run would find
    the cache loose and rebuild it."""
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS"):
        monkeypatch.delenv(name, raising=False)  # restored after the test
    folder = planned().folder
    assert folder is not None
    ready_cache(folder)
    old = os.umask(0o002)
    try:
        ready = planned()
        fused.compiled(torch.nn.Identity(), ready)  # points Inductor at the cache
        assert os.umask(0o002) & 0o022 == 0o022
    finally:
        os.umask(old)
