"""The HTTP bridge: an agent whose model lives elsewhere (another machine, another Python, another
framework) and answers over HTTP. Declared in the models file with ``kind = "http"``
(agents/model_config.py); docs/agents.md ("The HTTP bridge") has the shapes.

For each turn the bridge POSTs the seat's view, exactly ``rules.view_for(state, role)``::

    {"protocol": "groundtalk-agent/1", "agent": "<name>", "game_id": "colors_v1",
     "role": "listener", "version": "<configured version>", "view": {...}}

and expects ``200`` with ``{"action": {...}}`` (the action a person in that seat would send) or
``{"action": null}`` (nothing to do yet). The action is checked with the game's typed schema
(``games/<game>/actions.py``) here, and again by the match service like any action. A timeout
(``timeout_s`` per connect / read / write, httpx's phases), a refused connection, another
status, a body that is not such JSON (or over 1 MB) or an action the schema refuses raises
:class:`BridgeError`; ``agents.services.agent_take_turn`` then lets the configured fallback act at
once and the person is told (the ``agent_timed_out`` notice). Without a worker the watchdog's
fallback acts after ``timeout_s`` as for every agent.

It imports no model code and no torch: it runs in ``agent_worker`` (threads pool) like the rule
agents, or in the web process's thread pool in the embedded mode.
"""
from __future__ import annotations

import json
import threading

import httpx

from agents.model_config import ModelAgentConfig
from games.base import IllegalAction
from games.registry import get_game

PROTOCOL = "groundtalk-agent/1"
MAX_RESPONSE_BYTES = 1 << 20


class BridgeError(RuntimeError):
    """The endpoint did not give a usable answer; ``fallback_reason`` is what the person is told
    (``error``: no answer, ``illegal``: an answer the game's schema refuses)."""

    def __init__(self, message: str, fallback_reason: str = "error"):
        super().__init__(message)
        self.fallback_reason = fallback_reason


class HttpAgent:
    """``act(view)`` by a POST to ``config.url``."""

    def __init__(self, config: ModelAgentConfig):
        self.config = config
        self.schema = get_game(config.game_id).actions
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.config.timeout_s), follow_redirects=False,
                    headers={"User-Agent": "GroundTalk-bridge/1", **self.config.headers})
            return self._client

    def request(self, view: dict) -> dict:
        return {"protocol": PROTOCOL, "agent": self.config.name, "game_id": self.config.game_id,
                "role": self.config.role, "version": self.config.version, "view": view}

    def act(self, view: dict) -> dict | None:
        url = self.config.url
        try:
            response = self.client().post(url, json=self.request(view))
        except httpx.TimeoutException as exc:
            raise BridgeError(f"{url} did not answer within {self.config.timeout_s:g} s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise BridgeError(f"{url} could not be reached: {exc!r}") from exc
        if response.status_code != 200:
            raise BridgeError(f"{url} answered HTTP {response.status_code}")
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise BridgeError(f"{url} answered {len(response.content)} bytes; the limit is {MAX_RESPONSE_BYTES}")
        try:
            body = json.loads(response.content)
        except ValueError as exc:
            raise BridgeError(f"{url} answered something that is not JSON: {exc}") from exc
        if not isinstance(body, dict) or "action" not in body:
            raise BridgeError(f'{url} answered JSON without "action" (expected {{"action": {{...}} | null}})',
                              "illegal")
        return self.checked(body["action"], url)

    def checked(self, action: dict | None, who: str) -> dict | None:
        """``action`` as the game's typed schema reads it (None: nothing to do yet); one it refuses
        raises :class:`BridgeError` (``illegal``) naming ``who`` answered it."""
        if action is None:
            return None
        try:
            return self.schema.validate(action)
        except IllegalAction as exc:
            raise BridgeError(f"{who} answered an action the game refuses: {exc.code}: {exc}", "illegal") from exc

    def seat_record(self) -> dict:
        return self.config.seat_record()
