"""Wall time of the default Python path, `gpuhunt.query(gpu_name="H100")`, in new processes
behind a proxy that accepts connections and never answers (issue 37: a broken corporate proxy,
a firewall that drops packets). Every request - the catalog's and each online provider's -
goes to that proxy. The first process should answer within 6 s and the next within 1.5 s,
with the bundled (or cached) catalog's offers.

    python benchmarks/bench_default_path.py [runs]

Timings on a shared machine are noisy: compare runs of one invocation with each other.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CODE = """
import time, gpuhunt
t = time.monotonic()
offers = gpuhunt.query(gpu_name="H100")
took = time.monotonic() - t
s = gpuhunt.default_catalog().status()
print(f"{len(offers)} offers, source {s.source}, query {took:.2f} s, "
      f"online left out: {', '.join(sorted(s.online_errors)) or 'none'}")
"""


class SilentProxy:
    """A TCP server on 127.0.0.1 that accepts every connection, reads and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    proxy = SilentProxy()
    url = f"http://127.0.0.1:{proxy.port}"
    try:
        with tempfile.TemporaryDirectory() as cache:
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith("GPUHUNT_") and k.lower() not in ("no_proxy",)
            }
            env.update(
                PYTHONPATH=str(ROOT / "src"),
                HTTPS_PROXY=url,
                HTTP_PROXY=url,
                https_proxy=url,
                http_proxy=url,
                GPUHUNT_CACHE_DIR=cache,
            )
            for run in range(1, runs + 1):
                t = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-c", CODE],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=180,
                )
                took = time.monotonic() - t
                out = done.stdout.strip() or done.stderr.strip()[-300:]
                print(
                    f"process {run}: {took:.2f} s wall, exit {done.returncode}, "
                    f"connections to the proxy so far {proxy.accepted}: {out}"
                )
    finally:
        proxy.close()


if __name__ == "__main__":
    main()
