"""No participant or seat token, and no worker id, in the server's logs (issue 11, item 4;
groundtalk_web/logredact.py): a real uvicorn with its access log on, read back."""
from __future__ import annotations

import logging
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from crowd.models import Participant

from tests.conftest import ROOT, child_env, free_port, wait_for_port
from tests.support.factories import batch as make_batch
from tests.support.factories import colors_match
from groundtalk_web.logredact import RedactTokens, redact

pytestmark = pytest.mark.django_db(transaction=True)


def test_redact():
    assert redact("/p/AbC-123_xyz/status") == "/p/[token]/status"
    assert redact("/m/5c1e/?seat=s3cr3t&x=1") == "/m/5c1e/?seat=[v]&x=[v]"
    assert redact('GET /b/demo/?workerId=A1B2&assignmentId=3X&turkSubmitTo=https%3A%2F%2Fwww.mturk.com HTTP/1.1') == \
        "GET /b/demo/?workerId=[v]&assignmentId=[v]&turkSubmitTo=[v] HTTP/1.1"
    assert redact("Not Found: /p/tok") == "Not Found: /p/[token]"
    assert redact("/research/batches/demo/") == "/research/batches/demo/"
    assert redact("Started server process [42]") == "Started server process [42]"


def test_the_filter_keeps_the_number_of_arguments():
    """uvicorn's access formatter unpacks exactly five arguments."""
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("1.2.3.4:5", "GET", "/p/tok/?a=b", "1.1", 200), None)
    RedactTokens().filter(record)
    assert record.args == ("1.2.3.4:5", "GET", "/p/[token]/?a=[v]", "1.1", 200)
    assert record.getMessage() == '1.2.3.4:5 - "GET /p/[token]/?a=[v] HTTP/1.1" 200'


def fetch(url: str, data: bytes | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_tokens_never_reach_the_access_log(tmp_path):
    batch = make_batch(slug="logged", game_id="colors_v1")
    p = Participant.objects.create(batch=batch, platform="mturk", worker_id="WORKERSECRET1", assignment_id="ASSIGN77")
    match, seats = colors_match()
    seat = seats["listener"].token
    log_path = tmp_path / "server.log"
    port = free_port()
    env = {**child_env(), "LOG_LEVEL": "INFO"}
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "groundtalk_web.asgi:application", "--host",
                                 "127.0.0.1", "--port", str(port), "--log-level", "info", "--no-use-colors"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, proc)
            base = f"http://127.0.0.1:{port}"
            fetch(f"{base}/b/logged/?workerId=WORKERSECRET2&assignmentId=ASSIGN88&hitId=H"
                  f"&turkSubmitTo=https%3A%2F%2Fwww.mturk.com")
            fetch(f"{base}/b/logged/?PROLIFIC_PID=PROLIFICSECRET&STUDY_ID=S&SESSION_ID=SESSIONSECRET")
            fetch(f"{base}/b/logged/?worker=LABSECRET")
            fetch(f"{base}/p/{p.token}/")
            fetch(f"{base}/p/{p.token}/status")
            fetch(f"{base}/p/{p.token}/", data=b"step=nonsense")          # a 4xx: Django logs it too
            fetch(f"{base}/p/NOSUCHTOKENxxxxxxxxxxxxxxxxxxxxxx/")       # a 404: "Not Found: /p/..."
            fetch(f"{base}/m/{match.id}/?seat={seat}")
            fetch(f"{base}/m/{match.id}/partner-gone", data=f"seat={seat}".encode())
        finally:
            proc.terminate()
            proc.wait(15)
    text = log_path.read_text()
    assert "/p/[token]/" in text and f"/m/{match.id}/?seat=[v]" in text, text   # the lines are there...
    assert "GET /b/logged/?workerId=[v]&assignmentId=[v]&hitId=[v]&turkSubmitTo=[v]" in text, text
    for secret in (p.token, seat, "WORKERSECRET", "ASSIGN", "PROLIFICSECRET", "SESSIONSECRET", "LABSECRET",
                   "NOSUCHTOKEN"):   # ... without what they carried
        assert secret not in text, (secret, text)
