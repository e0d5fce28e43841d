"""Maestro Memory core: the spec's memory rules over markdown files that never tear.

Public surface::

    from maestro_memory.core import MemoryStore
    store = MemoryStore(project_root)
"""

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
