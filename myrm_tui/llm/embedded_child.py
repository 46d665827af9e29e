"""Entry point of the embedded model's child process:
``python -m myrm_tui.llm.embedded_child PARENT_PID -- ARGS``.

It runs llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server ARGS``) and adds one
thing: it exits when its parent does. ``start_new_session`` keeps the terminal's signals away from it, so
without this a ``kill -9`` of myrm would leave a server holding the model in memory. (PR_SET_PDEATHSIG
would fire when the *thread* that spawned the child ends, which in myrm is a worker thread, so the
parent is polled instead.)
"""

from __future__ import annotations

import os
import resource
import runpy
import sys
import threading
import time


def _watch(parent: int) -> None:
    while True:
        # guard: embedded-model-the-child-watches
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] != "--":
        sys.exit("usage: python -m myrm_tui.llm.embedded_child PARENT_PID -- LLAMA_CPP_SERVER_ARGS")
    parent = int(argv[0])
    if os.getppid() != parent:
        sys.exit(0)
    # A crash in native code must not leave a core file the size of the model in the user's project.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()
    sys.argv = ["llama_cpp.server", *argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
