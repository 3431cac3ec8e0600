"""A real Ray cluster for tests: a head and more nodes started with ``ray start``, apart
from the process that uses them, on this machine.

Each node gets its own temp dir and free ports (other engineers run Ray here too: no
default port is safe), and every process of the cluster carries a marker in its
environment, so `stop` can kill exactly them (never ``ray stop``, which stops every Ray
on the machine).

Why Ray 2.60 refused a second node here with ``InvalidAuthToken``: a head started with
``RAY_AUTH_MODE`` unset turns token authentication on by itself as soon as a token file
exists (``~/.ray/auth_token``, which any earlier local ``ray.init()`` writes), while a node
or a driver given an explicit address never turns it on by itself, so it connected
without a token. The fix is to say the mode and the token for every process of the
cluster: ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN_PATH`` pointing at this cluster's
own token (not the shared file in the home directory).
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

MARKER_ENV = "RS_TEST_RAY_CLUSTER"
NODE_ENV = "RS_TEST_RAY_NODE"
"""Names the node a process runs on (inherited by Ray workers and their children)."""
RAY = str(Path(sys.executable).with_name("ray"))
START_TIMEOUT_S = 180


class Cluster:
    def __init__(self, root: Path, pythonpath: list[str]) -> None:
        self.root = root
        self.marker = uuid.uuid4().hex
        token = root / "auth_token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(token),
            MARKER_ENV: self.marker,
            "PYTHONPATH": os.pathsep.join(pythonpath),
            # Find a dead node in about 2 s rather than Ray's default of about 15 s.
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.address: str | None = None
        self.nodes: list[str] = []

    def start(self, name: str, cpus: int = 1) -> None:
        """Start a node named ``name``: the head if there is none yet, else a worker node."""
        temp = self.root / name  # its own temp dir: sockets, logs, session
        temp.mkdir()
        ports = _free_ports(8)
        worker_ports = _free_range(40)
        argv = [
            RAY, "start", f"--num-cpus={cpus}", f"--temp-dir={temp}",
            "--node-ip-address=127.0.0.1", "--disable-usage-stats",
            f"--object-manager-port={ports[0]}", f"--node-manager-port={ports[1]}",
            f"--dashboard-agent-listen-port={ports[2]}", f"--dashboard-agent-grpc-port={ports[3]}",
            f"--runtime-env-agent-port={ports[4]}", f"--metrics-export-port={ports[5]}",
            f"--min-worker-port={worker_ports}", f"--max-worker-port={worker_ports + 39}",
        ]  # fmt: skip
        if self.address is None:
            gcs, client, dashboard = _free_ports(3)
            argv += [
                "--head", f"--port={gcs}", f"--ray-client-server-port={client}",
                "--include-dashboard=false", f"--dashboard-port={dashboard}",
            ]  # fmt: skip
            address = f"127.0.0.1:{gcs}"
        else:
            argv.append(f"--address={self.address}")
        env = {**self.env, NODE_ENV: name}
        subprocess.run(argv, env=env, check=True, timeout=START_TIMEOUT_S, capture_output=True)
        if self.address is None:
            self.address = address
        self.nodes.append(name)

    def pids(self, name: str | None = None) -> list[int]:
        """The cluster's live processes (of node ``name`` only, if given)."""
        wanted = [f"{MARKER_ENV}={self.marker}".encode()]
        if name is not None:
            wanted.append(f"{NODE_ENV}={name}".encode())
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if all(w in environ for w in wanted):
                found.append(int(entry))
        return found

    def raylet(self, name: str) -> int:
        """The pid of node ``name``'s raylet."""
        for pid in self.pids(name):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() == "raylet":
                    return pid
        raise LookupError(f"no raylet for node {name}")

    def stop(self) -> None:
        """Kill every process of the cluster, by pid (found by its marker)."""
        for _ in range(5):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)


def _free_ports(n: int) -> list[int]:
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _free_range(n: int) -> int:
    """The first of ``n`` consecutive free ports below the ephemeral range."""
    for _ in range(200):
        base = random.randrange(20000, 32000 - n)
        try:
            for port in range(base, base + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"no {n} consecutive free ports found")
