"""raytf-attach [--namespace N] [--map X=Y ...] [--fallback create] -- script.py args...

(or `python -m raytf_attach.run ...`). Installs raytf_attach.nemo_rl.use_declared_clusters,
then runs script.py as __main__ with sys.argv = [script.py, args...] and the script's directory first
on sys.path, as `python script.py args...` would. NeMo-RL's launch line
`uv run examples/run_grpo.py ...` becomes
`uv run raytf-attach -- examples/run_grpo.py ...`.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from typing import Optional

from ._cli import add_version_flag
from .nemo_rl import FALLBACKS, NeMoRLMissingError, use_declared_clusters
from .record import DEFAULT_NAMESPACE


def _mapping(text: str) -> tuple[str, str]:
    asked, sep, declared = text.partition("=")
    if not sep or not declared:
        raise argparse.ArgumentTypeError(f"--map wants NEMO_RL_NAME=DECLARED_NAME, got {text!r}")
    return asked, declared


def _prog() -> str:
    # The console script's name when run as one, else the module form.
    name = os.path.basename(sys.argv[0] if sys.argv else "")
    return name if name.startswith("raytf-attach") else "python -m raytf_attach.run"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="Run a NeMo-RL script so that its RayVirtualCluster(name=X, ...) calls attach to the "
        "ray_virtual_cluster declared as X instead of creating placement groups.",
    )
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                        help=f"Ray namespace of the declared clusters (the provider's `namespace`; default {DEFAULT_NAMESPACE})")
    parser.add_argument("--map", dest="names", action="append", type=_mapping, default=[], metavar="X=Y",
                        help="attach RayVirtualCluster(name=X) to the cluster declared as Y (repeatable)")
    parser.add_argument("--fallback", choices=FALLBACKS, default="error",
                        help="a name with no declared cluster: fail (error, default) or let NeMo-RL create it (create)")
    add_version_flag(parser)
    parser.add_argument("script", help="the Python script to run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    if "--" in argv:  # everything after the first `--` is the script and its arguments
        cut = argv.index("--")
        opts = parser.parse_args(argv[:cut] + ["_"])
        rest = argv[cut + 1:]
        if not rest:
            parser.error("no script after --")
        opts.script, opts.args = rest[0], rest[1:]
        return opts
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> None:
    prog = _prog()  # before sys.argv becomes the script's
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    script = opts.script
    if not os.path.isfile(script):
        sys.exit(f"{prog}: no such script: {script}")
    try:
        use_declared_clusters(namespace=opts.namespace, names=dict(opts.names), fallback=opts.fallback)
    except NeMoRLMissingError as e:  # one line, not a traceback: nothing to debug, something to install
        sys.exit(f"{prog}: {e}")
    sys.argv = [script, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
