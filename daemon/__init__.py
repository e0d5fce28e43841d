"""maestrod, the per-user Maestro Memory daemon (protocol: docs/protocol.md).

Modules, from the outside in:

* ``__main__``  start-up order (dirs, lock, config, socket) and exit codes
* ``rundir``    private directories and the single-instance lock
* ``server``    the main thread's lifecycle: start, poll loop, signals, reload, shutdown drain
* ``routing``   the main thread's sockets: ZAP peer-uid check, dispatch, replies and metrics
* ``http_door`` the loopback HTTP door (MCP over streamable HTTP, the agents' http hooks): a
  client of the daemon's own socket, behind ``http_guard`` (peer uid, Origin, Host, size)
* ``handlers``  the op registry (the memory ops of ``common.ops`` plus the daemon's own) and
  ``Services``, all that handlers may use of the daemon
* ``writer``    the one writer thread: batches into ``MemoryStore.run``, external-change checks
* ``cache``     the per-project read views the main thread answers from
* ``watcher``   one inotify instance for all projects, debounce, polling fallback
* ``scheduler`` end-of-day maintenance (APScheduler) and its recorded outcomes
* ``journal``   the per-project JSONL history of changes
* ``registry``, ``config``, ``metrics``, ``sdnotify``, ``logsetup``: small single-purpose helpers
* shared with the client, in ``common/``: ``ops``, ``protocol`` (and the op table), ``paths``,
  ``layout``
"""
