"""The web process's side of the model server (agents/serving/server.py): the embedded mode plays a
torch agent's turn by posting the seat's view to it, and asks it which families are ready.

No torch here (tests/workers/test_web_no_torch.py): only httpx. A turn runs in the web process's
thread pool (agents/dispatch.py) through ``agents.services.agent_take_turn`` with a
:class:`ModelServerAgent`, exactly as an HTTP bridge agent's turn does: a server that does not
answer in the agent's ``timeout_s``, is not running, answers an error status (the family failed to
load, the model raised) or an action the game's schema refuses raises
:class:`agents.bridge.BridgeError`, and the agent's fallback acts at once (the person is told).
"""
from __future__ import annotations

import logging
import threading
import time

import httpx
from django.conf import settings

from agents.bridge import BridgeError, HttpAgent
from agents.model_config import ModelAgentConfig

log = logging.getLogger(__name__)
HEALTH_TTL_S = 2.0       # how long an answer of /health is used (the batch checks ask on every page)
HEALTH_TIMEOUT_S = 0.5   # never hold a page up for long
_health: tuple[float, str, dict | None] = (0.0, "", None)
_health_lock = threading.Lock()


def server_url() -> str:
    return settings.GT_MODEL_SERVER_URL


def health(*, fresh: bool = False) -> dict | None:
    """The server's ``/health`` answer (cached for ``HEALTH_TTL_S``), or None when it cannot be
    reached (not started, still starting, or stopped)."""
    global _health
    url = server_url()
    with _health_lock:
        at, cached_url, answer = _health
        if not fresh and cached_url == url and time.monotonic() - at < HEALTH_TTL_S:
            return answer
    try:
        response = httpx.get(url + "/health", timeout=HEALTH_TIMEOUT_S)
        answer = response.json() if response.status_code == 200 else None
        if not isinstance(answer, dict) or not isinstance(answer.get("families"), dict):
            answer = None
    except (httpx.HTTPError, ValueError) as exc:
        log.debug("model server at %s: no health answer (%r)", url, exc)
        answer = None
    with _health_lock:
        _health = (time.monotonic(), url, answer)
    return answer


def family_problem(family_key: str) -> str | None:
    """Why the server does not serve ``family_key`` now (None: it does)."""
    answer = health()
    if answer is None:
        return (f"the model server is not running at {server_url()} (run.sh starts it: "
                f"`manage.py model_server`; its log: var/model-server.log)")
    family = answer["families"].get(family_key)
    if family is None:
        return f"the model server at {server_url()} does not serve family {family_key}"
    if family.get("state") == "ready":
        return None
    if family.get("state") == "error":
        return f"the model server could not load family {family_key}: {family.get('error')}"
    return f"the model server is still loading family {family_key}"


class ModelServerAgent(HttpAgent):
    """A torch agent as the web process sees it in the embedded mode: ``act(view)`` posts to the
    model server (the bridge's request and checks), ``seat_record()`` is the record the server
    answered with (the checkpoint's and the data's sha256 included) for this thread's last turn."""

    def __init__(self, config: ModelAgentConfig):
        super().__init__(config)
        self._last = threading.local()

    @property
    def url(self) -> str:
        return server_url() + "/act"

    def act(self, view: dict) -> dict | None:
        url = self.url
        try:
            response = self.client().post(url, json=self.request(view))
        except httpx.TimeoutException as exc:
            raise BridgeError(f"the model server ({url}) did not answer for {self.config.name} within "
                              f"{self.config.timeout_s:g} s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise BridgeError(f"the model server ({url}) could not be reached for {self.config.name}: {exc!r}") from exc
        try:
            body = response.json()
        except ValueError as exc:
            raise BridgeError(f"the model server answered HTTP {response.status_code}, not JSON: {exc}") from exc
        if response.status_code != 200:
            raise BridgeError(f"the model server answered HTTP {response.status_code} for {self.config.name}: "
                              f"{body.get('error') if isinstance(body, dict) else body}")
        if not isinstance(body, dict) or "action" not in body or not isinstance(body.get("model"), dict):
            raise BridgeError('the model server answered JSON without "action" and "model"', "illegal")
        self._last.record = body["model"]
        return self.checked(body["action"], "the model server")

    def seat_record(self) -> dict:
        return getattr(self._last, "record", None) or self.config.seat_record()


_agents: dict[str, ModelServerAgent] = {}
_agents_lock = threading.Lock()


def agent_for(config: ModelAgentConfig) -> ModelServerAgent:
    """One client per agent name and process (its httpx client keeps connections to the server)."""
    with _agents_lock:
        agent = _agents.get(config.name)
        if agent is None or agent.config != config:
            agent = _agents[config.name] = ModelServerAgent(config)
        return agent
