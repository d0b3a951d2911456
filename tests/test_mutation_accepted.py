"""scripts/mutation.py's accepted survivors: keyed by function and changed line, so they survive edits above
them, and never stale: each names a function of a mutated module and a line that module still has."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


DIFF = """--- rocmtui/run/lock.py
+++ rocmtui/run/lock.py
@@ -1,5 +1,5 @@
 def release(self) -> None:
-    if self._fd >= 0:
+    if self._fd > 0:
         os.close(self._fd)
"""


def test_a_mutants_key_is_its_function_and_its_change_not_mutmuts_number() -> None:
    mutation = _script()
    method = mutation.mutant_key("rocmtui.run.lock.xǁRunLockǁrelease__mutmut_3", DIFF)
    assert method == ("rocmtui.run.lock.RunLock.release", "if self._fd >= 0: → if self._fd > 0:")
    assert mutation.mutant_key("rocmtui.run.lock.xǁRunLockǁrelease__mutmut_11", DIFF) == method
    function = mutation.mutant_key("rocmtui.base.text.x_plain__mutmut_2", DIFF)
    assert function == ("rocmtui.base.text.plain", "if self._fd >= 0: → if self._fd > 0:")


def test_a_change_of_several_lines_joins_each_side() -> None:
    diff = "--- a\n+++ a\n@@ -1,3 +1,3 @@\n-x = (1,\n-  2)\n+x = (1,\n+  3)\n y = 0\n"
    assert _script().mutant_key("m.x_f__mutmut_1", diff) == ("m.f", "x = (1, ⏎ 2) → x = (1, ⏎ 3)")


def test_the_accepted_file_is_read_as_function_change_and_why(tmp_path: Path) -> None:
    path = tmp_path / "accepted.toml"
    path.write_text('["m.f"]\n"a → b" = "the same"\n"c → d" = "looser"\n', encoding="utf-8")
    assert _script().load_accepted(path) == {("m.f", "a → b"): "the same", ("m.f", "c → d"): "looser"}


def test_every_accepted_survivor_names_a_mutated_function_and_a_line_it_still_has() -> None:
    mutation = _script()
    accepted = mutation.load_accepted(mutation.ACCEPTED)
    assert accepted
    modules = {
        path.removesuffix(".py").replace("/", "."): ROOT / path
        for group in mutation.GROUPS.values()
        for path in group.modules
    }
    for (function, change), why in accepted.items():
        assert why.strip(), function
        module = next((m for m in modules if function.startswith(m + ".")), None)
        assert module is not None, f"{function}: not in a mutated module"
        source = [line.strip() for line in modules[module].read_text(encoding="utf-8").splitlines()]
        before = change.split(" → ")[0]
        for line in before.split(" ⏎ "):
            assert line in source, f"{function}: {line!r} is no longer in {module} (stale)"
        name = function.removeprefix(module + ".").split(".")[-1]
        assert any(line.startswith((f"def {name}(", f"async def {name}(")) for line in source), function
