"""The modules join into one script (internal/driver/source.go): a name may
be defined in one module only, or the joined script would keep the last."""

from __future__ import annotations

import ast
import glob
import os
from typing import Dict, List

HERE = os.path.join(os.path.dirname(__file__), "..")


def defined(path: str) -> List[str]:
    names: List[str] = []
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names


def test_each_name_is_defined_once() -> None:
    seen: Dict[str, str] = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.py"))):
        for name in defined(path):
            assert name not in seen, "%s defines %s, as %s does" % (os.path.basename(path), name, seen[name])
            seen[name] = os.path.basename(path)


def test_no_comment_like_line_inside_a_string() -> None:
    """The job's script drops lines that start with # (source.go): none may sit inside a string."""
    import io
    import tokenize

    for path in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "*.py"))):
        with open(path) as f:
            src = f.read()
        inside = set()
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.STRING:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
        lines = src.split("\n")
        bad = [n for n in sorted(inside) if lines[n - 1].strip().startswith("#")]
        assert not bad, "%s: lines %s start with # inside a string; the join would drop them" % (path, bad)
