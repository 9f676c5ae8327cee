"""What the package's command-line tools share: the version flag."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "raytf-attach"


def package_version() -> str:
    """The installed distribution's version; the source tree's __version__ when it is not installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        from . import __version__

        return __version__


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """--version prints `<prog> <version>` and exits 0."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
