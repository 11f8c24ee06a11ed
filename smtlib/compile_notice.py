"""One line on a terminal before a command's first numba compilation, so that minutes of compiling
on a cold cache (the first calls after an install) are not minutes of silence.

numba triggers its ``numba:compile`` event only on a cache miss (a kernel loaded from the cache
triggers nothing), so the line appears exactly when a command compiles, once per process. The
listener is registered when numba is first imported, by a one-shot import hook, so that commands
which never compile (``--help``, ``tune --list``) do not pay numba's import. The line goes to a
terminal only: piped output, the workflow's logs and tests read stderr byte for byte, and the
workflow compiles everything up front (``smtlib warmup``), which says so itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

NOTICE = ("smtlib: compiling numba kernels for this installation and machine (once; later calls load them "
          "from the cache; `smtlib warmup` compiles all of them now, in a few minutes)")


def _register(stream) -> None:
    from numba.core import event

    class Notice(event.Listener):
        said = False

        def on_start(self, ev) -> None:
            if not self.said:
                self.said = True
                print(NOTICE, file=stream, flush=True)

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", Notice())


class _AfterNumbaImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; on the import of ``numba``, lets the other finders find it and
    registers the listener once its ``__init__`` has run."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, stream = spec.loader, self.stream
        exec_module = loader.exec_module

        def exec_then_register(module) -> None:
            exec_module(module)
            _register(stream)

        loader.exec_module = exec_then_register
        return spec


def announce_compilation(stream=None) -> None:
    """Say on ``stream`` (stderr) when this process first compiles a numba kernel, if it is a terminal."""
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        return
    if "numba" in sys.modules:
        _register(stream)
    elif not any(isinstance(f, _AfterNumbaImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumbaImport(stream))
