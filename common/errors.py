"""The root of every error Maestro Memory raises on purpose: catch ``MaestroError``.

::

    MaestroError                     .code (a string), .message (for people)
    ├── core.InputError              bad input; changes nothing (also a ValueError)  bad_request
    │   ├── core.TooLarge            a text or a frame over common/limits.py        too_large
    │   ├── core.NotFoundError       an entry id that names no entry                 not_found
    │   └── core.RejectedError       well-formed, but the memory refuses it          rejected
    ├── core.MemoryWriteError        the files could not be written; the previous     internal
    │   │                            ones are intact (also an OSError)
    │   ├── core.fsio.ChangedUnderneath   a file changed under a commit (retried)
    │   └── core.fsio.LockBusy       the lock stayed held past the caller's deadline
    ├── core.UnsafeMemory            a memory folder or file refused; nothing read  unsafe_memory
    │   ├── core.LinkRefused         a symbolic link where a folder or file belongs link_refused
    │   ├── core.UntrustedFolder     another user's, or writable by others     untrusted_folder
    │   └── core.ProjectMissing      a registered project's folder is gone      project_missing
    ├── common.paths.UnsafeHome      MAESTRO_HOME is not safe                       unsafe_home
    ├── client.DaemonUnavailable     no daemon answered (maestroctl exit 3)     daemon_unavailable
    │   ├── client.DaemonNotRunning  nothing listens
    │   └── client.DaemonTimeout     a daemon holds the lock but did not answer   daemon_timeout
    ├── client.RequestError          a coded error reply; .code is the protocol's code
    ├── client.ProtocolError         a reply that does not follow protocol v1     protocol_error
    ├── client.integrations.service.ServiceError   a service manager command failed
    ├── client.integrations.agent_settings.IntegrationError   an agent's settings file
    │                                cannot be edited safely
    ├── client.integrations.gitmerge.GitError      git is missing or a git command failed
    ├── client.cli.commands.privacy.ForgetRefused   --match finds several, unconfirmed  rejected
    ├── common.settings.SettingsError   config.toml's [core] cannot be used      config_error
    ├── daemon.config.ConfigError    config.toml cannot be used                    config_error
    └── ui.source.UnknownProject     a project the page may not show (also a ValueError)

The daemon's own ``protocol.OpError`` is not one of them: it never leaves the daemon (or direct
mode) as such; the client turns it into ``RequestError`` with the same code. Standard library
only, so the client can import it without loading the core.
"""

from __future__ import annotations

CLIENT_ERROR = "client_error"  # the default code: an error found on this side


class MaestroError(Exception):
    """Base of every error Maestro Memory raises on purpose."""

    code: str = CLIENT_ERROR
    _message: str | None = None

    @property
    def message(self) -> str:
        """The message for people (an OSError's ``strerror`` when it has one)."""
        if self._message is not None:
            return self._message
        strerror = getattr(self, "strerror", None)
        if isinstance(strerror, str):
            return strerror
        return str(self.args[0]) if len(self.args) == 1 else Exception.__str__(self)

    @message.setter
    def message(self, value: str) -> None:
        self._message = value
