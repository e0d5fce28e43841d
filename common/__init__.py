"""What the client and the daemon both need: the wire protocol, the op table, the paths and
the memory ops. Imports ``core`` only; never ``daemon`` or ``client``."""
