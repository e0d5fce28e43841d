"""One documented root for every error Maestro Memory raises on purpose (common/errors.py)."""

from __future__ import annotations

import errno

from maestro_memory.client import errors as client_errors
from maestro_memory.client.integrations import agent_settings, gitmerge
from maestro_memory.client.integrations import service as _service
from maestro_memory.common import errors, settings
from maestro_memory.core import fsio, model
from maestro_memory.daemon import config
from maestro_memory.ui import source

LEAVES = (
    model.InputError,
    model.NotFoundError,
    model.RejectedError,
    model.MemoryWriteError,
    fsio.ChangedUnderneath,
    client_errors.DaemonUnavailable,
    client_errors.DaemonNotRunning,
    client_errors.DaemonTimeout,
    client_errors.RequestError,
    client_errors.ProtocolError,
    _service.ServiceError,
    agent_settings.IntegrationError,
    gitmerge.GitError,
    settings.SettingsError,
    config.ConfigError,
    source.UnknownProject,
)


def test_every_error_has_the_one_root_and_is_drawn_in_the_tree() -> None:
    assert client_errors.MaestroError is errors.MaestroError
    tree = errors.__doc__ or ""
    for cls in LEAVES:
        assert issubclass(cls, errors.MaestroError), cls
        assert cls.__name__ in tree, f"{cls.__name__} missing from the tree in common/errors.py"


def test_core_errors_keep_their_standard_bases_and_carry_a_code_and_message() -> None:
    bad = model.NotFoundError("no entry e-1")
    assert isinstance(bad, ValueError) and bad.code == "not_found"
    assert bad.message == "no entry e-1"
    io = model.MemoryWriteError(errno.EIO, "disk full")
    assert isinstance(io, OSError) and io.errno == errno.EIO
    assert io.code == "internal" and io.message == "disk full"
    reply = client_errors.RequestError("rejected", "not flagged")
    assert reply.message == "not flagged" and str(reply) == "not flagged [rejected]"
