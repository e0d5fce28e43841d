"""``python -m maestro_memory.client.cli``: the same ``main`` as the ``maestroctl`` script."""

from __future__ import annotations

import sys

from .main import main

sys.exit(main())
