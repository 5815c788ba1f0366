"""The project's module line budget: no hand-written module under trainer/, operator/ or scripts/ over 500 lines.

Generated protobuf modules (`*_pb2.py`, `*_pb2.pyi`, `*_pb2_grpc.py`, written by scripts/gen_protos.py) are
exempt. tests/ and bench/ are not gated: a test file may keep many cases of one subject together.
A module over budget is split along a coherent seam and re-exported from where it was imported.
"""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
GATED_DIRS = ("trainer", "operator", "scripts")
MAX_LINES = 500


def _is_generated(path: pathlib.Path) -> bool:
    return "_pb2" in path.name


def modules_over_budget(root: pathlib.Path, max_lines: int = MAX_LINES) -> list:
    """[(relative path, line count)] for every gated .py/.pyi file under `root` longer than `max_lines`."""
    over = []
    for top in GATED_DIRS:
        for path in sorted((root / top).rglob("*.py*")):
            if path.suffix not in (".py", ".pyi") or _is_generated(path):
                continue
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > max_lines:
                over.append((str(path.relative_to(root)), count))
    return over


def test_no_gated_module_exceeds_the_budget():
    over = modules_over_budget(ROOT)
    assert not over, "modules over %d lines: %s" % (
        MAX_LINES, ", ".join(f"{name} ({count} lines)" for name, count in over))


def test_the_gate_sees_the_real_tree():
    # guards against a vacuous pass (wrong ROOT, renamed folders): the gate must walk known modules
    graph = ROOT / "trainer" / "tensorfleet" / "graph.py"
    assert graph.is_file()
    assert modules_over_budget(ROOT, max_lines=1)  # every real module has more than one line
    assert ("trainer/tensorfleet/graph.py", len(graph.read_text().splitlines())) in modules_over_budget(ROOT, 1)


def test_the_gate_names_an_oversized_module_and_exempts_generated_and_ungated_files(tmp_path):
    (tmp_path / "trainer" / "pkg").mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "trainer" / "pkg" / "big.py").write_text("x = 1\n" * 501)
    (tmp_path / "trainer" / "pkg" / "ok.py").write_text("x = 1\n" * 500)
    (tmp_path / "trainer" / "pkg" / "service_pb2.py").write_text("x = 1\n" * 900)
    (tmp_path / "trainer" / "pkg" / "service_pb2_grpc.py").write_text("x = 1\n" * 900)
    (tmp_path / "trainer" / "pkg" / "service_pb2.pyi").write_text("x: int\n" * 900)
    (tmp_path / "scripts" / "tool.py").write_text("x = 1\n" * 600)
    (tmp_path / "tests" / "test_long.py").write_text("x = 1\n" * 900)
    assert modules_over_budget(tmp_path) == [("trainer/pkg/big.py", 501), ("scripts/tool.py", 600)]
