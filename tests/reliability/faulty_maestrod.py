"""TEST STAND-IN: ``maestrod`` whose commit steps fail on demand (fault injection).

A healthy disk cannot be made to fail the Nth ``write`` on request, so this wrapper replaces the
step methods of ``fsio.IO`` (``open_temp``, ``write``, ``fsync``, ``replace``, ``fsync_dir``) in
the daemon process with versions that consult a control file, then runs the real
``maestro_memory.daemon.__main__.main``. Nothing else is changed.

* ``MAESTRO_FAULT_CONTROL``: path of a JSON file ``{"token", "step", "n", "errno"}``. While it
  exists, the ``n``-th call of ``step`` counted since ``token`` appeared raises
  ``OSError(errno)``. The test writes it with a rename before sending the request, and the
  daemon reads it at every step call, so arming needs no waiting.
* Each time a failure is injected, ``token step n`` is appended to ``<control>.fired``.

With ``MAESTRO_TRACE_WINDOWS`` set, ``rel_trace.install`` also records each commit's window
(see rel_trace.py).

Started by the tests as ``python faulty_maestrod.py <python> -m maestro_memory.daemon`` (the
``argv_prefix`` of the ``daemon_factory`` fixture); the trailing arguments are ignored.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from maestro_memory.core import fsio

STEPS = ("open_temp", "write", "fsync", "replace", "fsync_dir")
CONTROL = os.environ.get("MAESTRO_FAULT_CONTROL", "")
_calls: dict[tuple[str, str], int] = {}


def _plan() -> dict[str, Any] | None:
    try:
        with open(CONTROL, encoding="utf-8") as f:
            data = json.load(f)
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _failing(step: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        plan = _plan()
        if plan is not None and plan.get("step") == step:
            key = (str(plan["token"]), step)
            _calls[key] = _calls.get(key, 0) + 1
            if _calls[key] == int(plan["n"]):
                with open(CONTROL + ".fired", "a", encoding="utf-8") as f:
                    f.write(f"{plan['token']} {step} {plan['n']}\n")
                code = int(plan["errno"])
                raise OSError(code, os.strerror(code))
        return original(*args)

    return call


def install() -> None:
    for step in STEPS:
        setattr(fsio.IO, step, _failing(step, getattr(fsio.IO, step)))


if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1)  # a hung daemon's stacks, on demand, to stderr
    if CONTROL:
        install()
    import rel_trace

    rel_trace.install_from_env()
    from maestro_memory.daemon.__main__ import main

    sys.exit(main([]))
