"""Maestro Memory core: the spec's memory rules over markdown files that never tear.

Public surface::

    from maestro_memory.core import MemoryStore
    store = MemoryStore(project_root)
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import Memory, Settings
    from .model import (
        CATEGORIES,
        ContextResult,
        Entry,
        ForgetReport,
        InitReport,
        InputError,
        MaintenanceReport,
        MemoryWriteError,
        NotFoundError,
        Proposal,
        RejectedError,
        SaveResult,
        Signal,
        SweepReport,
    )
    from .store import MemoryStore

# Where each public name lives. Loaded on first use (PEP 562), so importing one small module
# (``core.text``, ``core.fsio``, ``core.model``) does not load every rule: the hooks and the
# CLI import the facts they need from their one home without paying for the rest.
_HOMES = {
    "Memory": "memory",
    "Settings": "memory",
    "MemoryStore": "store",
    **dict.fromkeys(
        (
            "CATEGORIES",
            "ContextResult",
            "Entry",
            "ForgetReport",
            "InitReport",
            "InputError",
            "MaintenanceReport",
            "MemoryWriteError",
            "NotFoundError",
            "Proposal",
            "RejectedError",
            "SaveResult",
            "Signal",
            "SweepReport",
        ),
        "model",
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "CATEGORIES",
    "ContextResult",
    "Entry",
    "ForgetReport",
    "InitReport",
    "InputError",
    "MaintenanceReport",
    "Memory",
    "MemoryStore",
    "MemoryWriteError",
    "NotFoundError",
    "Proposal",
    "RejectedError",
    "SaveResult",
    "Settings",
    "Signal",
    "SweepReport",
]
