"""Whether a process that left something behind is still running: the rule for removing what it left.

An index build names its staging folder after its process id (``engine.index``), and a folder store's
save its temporary files (``store.leftovers``); what a process that is gone left is removed by the
next build or the next read, and what a running one (or one we cannot tell about) left is kept.
"""
from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine is running; True when we cannot tell (another user's
    process, a number the system refuses), so nothing of a living process is ever removed."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError, ValueError):
        return True
    return True
