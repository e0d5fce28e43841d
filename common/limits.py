"""The sizes every door enforces, written once: a memory's text and a request frame.

Names only (no first-party imports, nothing loaded): the core, the client, the MCP door and
the hooks all import it cheaply. Each limit is checked *before* anything is sent or written,
with an error that names the limit and the size, code ``too_large`` (``TOO_LARGE``):

* ``FACT_MAX_CHARS``: the text of one memory (a semantic fact, an episodic note, a session
  note), counted as sent. The client checks it before sending (``Client.call``), the core
  again (``core/model.validate_size``) for every other caller, the MCP schema declares it,
  an agent tool's memory longer than it is reported and not imported (``core/toolmem.py``).
* ``MEMORY_FILE_MAX_BYTES``: one file of the memory folder. Reading a larger one is refused
  (``core/fsio.read_file``: every door, the daemon's cache included), and so is a commit
  that would write one (``core/fsio.commit``), before anything is renamed.
* ``MESSAGE_MAX_BYTES``: one request frame. The client refuses to send a larger one (and
  direct mode refuses the same request alike); the daemon answers a larger frame it received
  with ``too_large`` instead of dropping it, up to ``RECEIVE_MAX_BYTES``: past that, libzmq
  closes the connection before the daemon sees a byte (a bound on what a peer can make the
  daemon hold in memory; only a foreign client can get there).
"""

from __future__ import annotations

TOO_LARGE = "too_large"  # the protocol error code of every limit below

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English with BPE tokenisers


def estimate_tokens(text: str) -> int:
    """The token estimate of every budget: ``ceil(len(text) / CHARS_PER_TOKEN)``. It
    over-counts slightly for plain prose, which keeps a context block inside its budget."""
    return -(-len(text) // CHARS_PER_TOKEN)


# The token budget of a context block when the caller names none (a session start's block,
# `maestroctl context`, the build_context op, the MCP tool). Not a size limit: 0 is a value.
CONTEXT_MAX_TOKENS = 500

FACT_MAX_CHARS = 4000
MESSAGE_MAX_BYTES = 1024 * 1024
# One memory file (semantic.md, episodic.md, archive.md, .state.json), read or written. Read
# directly, a 1 MiB semantic.md (about 9,000 entries) builds a context in ~0.45 s, inside the
# session-start hook's 0.95 s; 5 MB took 3.1 s. A larger file is refused, never half-read.
MEMORY_FILE_MAX_BYTES = 256 * 1024
# New memories stop at 7/8 of it: the rest is room for bookkeeping (decay, usage counts, log
# lines), so a full memory is still served, decayed and maintained, never locked out.
SAVE_MAX_BYTES = MEMORY_FILE_MAX_BYTES * 7 // 8
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


def memory_file_too_large(path: object, size: int, writing: bool) -> str:
    """The one message for a memory file over ``MEMORY_FILE_MAX_BYTES``."""
    limit = f"a memory file holds at most {MEMORY_FILE_MAX_BYTES:,} bytes"
    if writing:
        return (
            f"{path} would grow to {size:,} bytes; {limit}: nothing was written. Forget or "
            "archive entries (maestroctl forget, maestroctl maintain), or move old entries of "
            "archive.md out by hand (git keeps its history)"
        )
    return (
        f"{path} is {size:,} bytes; {limit}: nothing was read or served. Trim it by hand "
        "(git keeps its history) or check where it came from"
    )


def memory_full(name: str, size: int) -> str:
    """The one message for a save into a file past ``SAVE_MAX_BYTES``."""
    return (
        f"{name} is full: {size:,} bytes, and new memories stop at {SAVE_MAX_BYTES:,}; nothing "
        "was saved. Forget or archive entries (maestroctl forget, maestroctl maintain)"
    )


def frame_too_large(size: int) -> str:
    """The one message for a request over ``MESSAGE_MAX_BYTES``."""
    return (
        f"request of {size:,} bytes exceeds the limit of {MESSAGE_MAX_BYTES:,} bytes; "
        "nothing was applied"
    )
