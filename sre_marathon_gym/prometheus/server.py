"""Backfill a TSDB with promtool and run Debian's `prometheus` over it on a loopback port.

Why by hand: the Debian package does not start a server by itself (and must not touch the system
one); a backfilled run needs its own storage path, a retention long enough for old timestamps, no
scrape targets, and a clean stop by PID so no server outlives the test or command that started it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..core.clock import METRIC_STEP_S
from ..core.errors import PrometheusError

_CONFIG = f"""# written by sre-marathon: serve backfilled blocks, scrape nothing
global:
  scrape_interval: {METRIC_STEP_S}s
  evaluation_interval: {METRIC_STEP_S}s
"""


def binary(name: str) -> str:
    """Path of `promtool` / `prometheus`, or a clear error saying how to install it."""
    path = shutil.which(name)
    if path is None:
        raise PrometheusError(
            f"`{name}` is not on PATH; install Prometheus (Debian/Ubuntu: "
            "`apt-get install -y prometheus`) or put its binaries on PATH"
        )
    return path


def create_blocks(openmetrics_file: str | os.PathLike[str], data_dir: str | os.PathLike[str]) -> list[str]:
    """Run `promtool tsdb create-blocks-from openmetrics FILE DIR`; return the block ids created."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in data_dir.iterdir()}
    res = subprocess.run(
        [
            binary("promtool"),
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--quiet",
            str(openmetrics_file),
            str(data_dir),
        ],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        raise PrometheusError(
            f"promtool create-blocks-from openmetrics {openmetrics_file} failed "
            f"(exit {res.returncode}): {(res.stderr or res.stdout).strip()[-2000:]}"
        )
    return sorted(
        p.name
        for p in data_dir.iterdir()
        if p.is_dir() and p.name not in before and (p / "meta.json").exists()
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrometheusServer:
    """A `prometheus` process on 127.0.0.1 over `data_dir`; a context manager that stops it by PID.

    >>> # with PrometheusServer("runs/prom/data") as prom: print(prom.url)
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        port: int | None = None,
        retention: str = "100y",
        startup_timeout_s: float = 60.0,
    ):
        self.data_dir = Path(data_dir)
        if not self.data_dir.is_dir():
            raise PrometheusError(f"{self.data_dir}: no such TSDB directory (backfill first)")
        self.port = port or free_port()
        self.retention = retention
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen | None = None
        self.log_path = self.data_dir.parent / "prometheus.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start(self) -> PrometheusServer:
        config = self.data_dir.parent / "prometheus.yml"
        config.write_text(_CONFIG)
        log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [
                binary("prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={self.data_dir}",
                f"--storage.tsdb.retention.time={self.retention}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise PrometheusError(
                    f"prometheus exited with {self.process.returncode} at startup; "
                    f"log: {self.log_path}\n{self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        self.stop()
        raise PrometheusError(
            f"prometheus on {self.url} not ready after {self.startup_timeout_s:.0f} s; "
            f"log: {self.log_path}\n{self._log_tail()}"
        )

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-15:])
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM by PID, then SIGKILL if it has not exited within 10 s."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
