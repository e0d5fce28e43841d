"""``maestroctl``, the command line: ``main.py`` (the entry point), ``parser.py`` (the argument
parser), ``output.py`` (text for people), ``exits.py`` (the program name and exit statuses) and
``commands/`` (one module per command group).

``maestro_memory.client.cli:main`` is the console script; ``python -m maestro_memory.client.cli``
runs the same function (``__main__.py``).
"""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
