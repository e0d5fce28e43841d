"""The sizes every door enforces, written once: a memory's text and a request frame.

Names only (no first-party imports, nothing loaded): the core, the client, the MCP door and
the hooks all import it cheaply. Each limit is checked *before* anything is sent or written,
with an error that names the limit and the size, code ``too_large`` (``TOO_LARGE``):

* ``FACT_MAX_CHARS``: the text of one memory (a semantic fact, an episodic note, a session
  note), counted as sent. The client checks it before sending (``Client.call``), the core
  again (``core/model.validate_size``) for every other caller, the MCP schema declares it,
  an agent tool's memory longer than it is reported and not imported (``core/toolmem.py``).
* ``MESSAGE_MAX_BYTES``: one request frame. The client refuses to send a larger one (and
  direct mode refuses the same request alike); the daemon answers a larger frame it received
  with ``too_large`` instead of dropping it, up to ``RECEIVE_MAX_BYTES``: past that, libzmq
  closes the connection before the daemon sees a byte (a bound on what a peer can make the
  daemon hold in memory; only a foreign client can get there).
"""

from __future__ import annotations

TOO_LARGE = "too_large"  # the protocol error code of every limit below

FACT_MAX_CHARS = 4000
MESSAGE_MAX_BYTES = 1024 * 1024
RECEIVE_MAX_BYTES = 16 * MESSAGE_MAX_BYTES

# The argument that holds a memory's text, per op: checked by the client before it sends.
FACT_ARGS: dict[str, str] = {
    "save_semantic": "fact",
    "save_episodic": "context",
    "save_session_note": "note",
}


def fact_too_long(name: str, size: int) -> str:
    """The one message for a text over ``FACT_MAX_CHARS``."""
    return (
        f"{name} is {size:,} characters; a memory holds at most {FACT_MAX_CHARS:,} "
        "(state the fact in a few lines); nothing was saved"
    )


def frame_too_large(size: int) -> str:
    """The one message for a request over ``MESSAGE_MAX_BYTES``."""
    return (
        f"request of {size:,} bytes exceeds the limit of {MESSAGE_MAX_BYTES:,} bytes; "
        "nothing was applied"
    )
