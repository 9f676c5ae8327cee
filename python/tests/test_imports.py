"""The package's modules import each other without a cycle, counting imports
deferred into functions (a cycle hidden that way still couples the modules)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "raytf_attach"


def _imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("raytf_attach."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("raytf_attach."))
    return out


def _graph() -> dict:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    return {p.stem: sorted(_imports(p) & modules - {p.stem}) for p in PACKAGE.glob("*.py")}


def test_no_import_cycle():
    graph = _graph()
    state: dict = {}

    def visit(m: str, path: list) -> None:
        state[m] = "open"
        for n in graph[m]:
            if state.get(n) == "open":
                cycle = path[path.index(n):] + [n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_finds_a_cycle(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from .a import f\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    try:
        test_no_import_cycle()
    except AssertionError as e:
        assert "a -> b -> a" in str(e) or "b -> a -> b" in str(e)
    else:
        raise AssertionError("the cycle a <-> b was not found")
