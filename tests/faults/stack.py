"""A whole GroundTalk stack of its own for the fault tests: a private PostgreSQL cluster and Redis
server (so restarting them disturbs nothing else), two uvicorn server processes and a supervised
model worker, each of which a test may kill, restart or starve.

Nothing here is a stand-in: the processes are the ones an operator runs (``uvicorn
groundtalk_web.asgi:application``, ``manage.py agent_worker``)."""
from __future__ import annotations

import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
LOGS = ROOT / "var" / "faults"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as exc:   # not up yet
            last = exc
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached in {timeout} s (last error: {last!r})")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Postgres:
    """A throwaway PostgreSQL cluster (initdb) on a port of its own, started with pg_ctl."""

    def __init__(self, base: Path):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not bins and not shutil.which("pg_ctl"):
            raise RuntimeError("PostgreSQL's server binaries (pg_ctl, initdb) are not installed")
        self.bindir = Path(bins[-1]).parent if bins else Path(shutil.which("pg_ctl")).parent
        self.base = base
        self.data = base / "pgdata"
        self.port = free_port()
        self.as_owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_owner, *args], check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        self.data.mkdir(parents=True)
        if self.as_owner:
            shutil.chown(self.base, "postgres")
            shutil.chown(self.data, "postgres")
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                  "--no-sync")
        self.start()
        conn = psycopg.connect(self.url("postgres"))
        conn.autocommit = True
        conn.cursor().execute("CREATE DATABASE groundtalk")
        conn.close()

    def start(self) -> None:
        opts = (f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 -c max_connections=100 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.base / "pg.log"),
                  "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def url(self, db: str = "groundtalk") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def query(self, sql: str, params=()) -> list[tuple]:
        conn = psycopg.connect(self.url())
        try:
            with conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()

    def connections(self) -> int:
        """Client connections to the cluster now, this query's own excluded."""
        return self.query("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                          "AND pid <> pg_backend_pid()")[0][0]


class Redis:
    def __init__(self, base: Path):
        self.base = base
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.base), "--logfile", str(self.base / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: _port_open(self.port), 20, "redis listening")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()   # as a crash or a restart without persistence: every queued message is gone
            self.proc.wait(10)
            self.proc = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"


class Process:
    """A server or worker process with its log under var/faults/."""

    def __init__(self, name: str, argv: list[str], env: dict, port: int | None = None):
        self.name, self.argv, self.env, self.port = name, argv, env, port
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        LOGS.mkdir(parents=True, exist_ok=True)
        log = open(LOGS / f"{self.name}.log", "a")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        if self.port is not None:
            wait_until(lambda: self.proc.poll() is None and _port_open(self.port), 60, f"{self.name} listening")

    def kill9(self) -> None:
        """SIGKILL to the process and everything it started (a crash: nothing is cleaned up)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill9()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Stack:
    """PostgreSQL + Redis + two uvicorn servers + a supervised agent worker."""

    AGENT_TIMEOUT_S = 3.0

    def __init__(self):
        self.base = Path(tempfile.mkdtemp(prefix="gt-faults-"))
        os.chmod(self.base, 0o755)
        self.pg = Postgres(self.base)
        self.redis = Redis(self.base)
        self.env: dict = {}
        self.web: list[Process] = []
        self.worker: Process | None = None

    def start(self) -> "Stack":
        shutil.rmtree(LOGS, ignore_errors=True)   # each run's logs, for reading after a failure
        self.pg.init()
        self.redis.start()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GT_", "PYTEST", "DJANGO_"))}
        env.update({
            "DATABASE_URL": self.pg.url(), "REDIS_URL": self.redis.url(), "SECRET_KEY": secrets.token_urlsafe(50),
            "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50), "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING",
            "GT_AGENT_TIMEOUT_S": str(self.AGENT_TIMEOUT_S), "GT_WATCHDOG_S": "0.5", "GT_HTTP_DB_WAIT_S": "20",
            # every bot comes from 127.0.0.1: per-address limits sized for a crowd behind one address
            "GT_RL_ENTRY_BURST": "1000", "GT_RL_STEP_BURST": "1000", "GT_RL_POLL_BURST": "5000",
            "GT_RL_POLL_PER_MIN": "60000",
            # the 200 arrivals' bots poll their waiting page and never open the match's socket: with
            # the default 15 s a pair whose play_url poll came late on the loaded stack had already
            # been ended as seats that never came (198 and 199 of 200 in whole runs); the grace
            # itself is tested in tests/crowd/test_presence.py and tests/browser/test_ghost_browser.py
            "GT_SEAT_GRACE_S": "300",
        })
        self.env = env
        subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
        for n in range(2):
            port = free_port()
            self.web.append(Process(f"web{n}", [
                PY, "-m", "uvicorn", "groundtalk_web.asgi:application", "--host", "127.0.0.1", "--port", str(port),
                "--log-level", "warning", "--ws-max-size", "65536", "--ws-per-message-deflate", "false",
                "--lifespan", "on"], env, port))
        for proc in self.web:
            proc.start()
        self.worker = Process("worker", [PY, "manage.py", "agent_worker", "--concurrency", "2", "--loglevel",
                                         "warning"], env)
        self.worker.start()
        return self

    def close(self) -> None:
        for proc in [*self.web, self.worker]:
            if proc is not None:
                proc.stop()
        self.redis.stop()
        self.pg.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)

    @property
    def ports(self) -> list[int]:
        return [p.port for p in self.web]

    def manage(self, script: str, timeout: float = 120) -> object:
        """Run Python in a Django shell of this stack; the script prints one JSON value."""
        out = subprocess.run([PY, "manage.py", "shell", "-c", script], cwd=ROOT, env=self.env, check=True,
                             capture_output=True, text=True, timeout=timeout)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def create_matches(self, n: int, *, agent_speaker: str = "", rounds: int = 50) -> list[dict]:
        """``n`` colors matches; both seats human, or the speaker an agent. Returns ids and tokens."""
        script = f"""
import json
from live.services import SeatSpec, match_create
from live.models import Seat
out = []
for _ in range({n}):
    seats = {{"listener": SeatSpec(kind="human")}}
    seats["speaker"] = SeatSpec(kind="agent", agent_name={agent_speaker!r}) if {agent_speaker!r} else SeatSpec(kind="human")
    m = match_create(game_id="colors_v1", seats=seats, config={{"rounds": {rounds}}})
    out.append({{"match_id": str(m.id), "tokens": {{s.role: s.token for s in Seat.objects.filter(match=m, kind="human")}}}})
print(json.dumps(out))
"""
        return self.manage(script)

    def log_of(self, match_ids: list[str]) -> dict[str, list[tuple]]:
        """Every match's log: seq, type, actor, client action id."""
        rows = self.pg.query("SELECT match_id::text, seq, type, actor, client_action_id FROM games_matchevent "
                             "WHERE match_id::text = ANY(%s) ORDER BY match_id, seq", (match_ids,))
        out: dict[str, list[tuple]] = {m: [] for m in match_ids}
        for match_id, seq, kind, actor, client_id in rows:
            out[match_id].append((seq, kind, actor, client_id))
        return out
