"""The suite's tools as one package behind scripts/suite (cli.py lists the subcommands)."""

import re
from pathlib import Path


def _version():
    """The suite's version: CMakeLists.txt's project(... VERSION x.y), the one place it is written."""
    try:
        text = (Path(__file__).resolve().parent.parent.parent / "CMakeLists.txt").read_text()
    except (OSError, UnicodeDecodeError):
        return "0+unknown"
    m = re.search(r"^project\(\w+\s+VERSION\s+([0-9][0-9.]*)", text, re.M)
    return m.group(1) if m else "0+unknown"


__version__ = _version()
