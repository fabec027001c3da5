"""What the partner sees while an LLM agent writes its reply: ``typing`` frames.

Only the role's ``stream_field`` (:class:`games.llm.LlmRole`, e.g. ``"message"``) is ever shown,
never another field of the decision (a CoDraw drawer's pieces): a role without one sends no frame.
With ``stream`` on, a frame carries the field's text so far, read from the partial JSON the model
has written (:func:`partial_field`, jiter's partial mode); with ``stream`` off, frames say only
that the partner is typing (``text: ""``).

With ``reply_pacing`` (:class:`Pacing`), the reply is applied no sooner than a person would have
written it: ``max(min_s, len(text) / chars_per_s)`` from the moment the turn became due, both
scaled by a factor drawn per turn in ``[1 - jitter, 1 + jitter]`` from a generator seeded with the
turn (the same turn draws the same delay), capped by ``max_s``; the frames show no more of the
text than the drawn typing speed would have typed by then.

Frames go out at most every ``INTERVAL_S`` and only when their text changes (or every
``KEEPALIVE_S``, so a page that hides a silent partner after 15 s keeps showing a slow one).
"""
from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass
from typing import Callable

import jiter

log = logging.getLogger(__name__)
INTERVAL_S = 0.15
KEEPALIVE_S = 5.0


def partial_field(text: str, field: str) -> str | None:
    """The value of the string ``field`` in a JSON object still being written (``'{"message":
    "Hel'`` -> ``"Hel"``), or None while it has not started."""
    body = (text or "").strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
        body = body.strip()
    if not body.startswith("{"):
        return None
    try:
        value = jiter.from_json(body.encode("utf-8"), partial_mode="trailing-strings")
    except ValueError:
        return None
    found = value.get(field) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


@dataclass(frozen=True)
class Pacing:
    """One turn's drawn pacing (see the module docstring)."""

    factor: float
    min_s: float
    chars_per_s: float
    max_s: float | None = None

    @classmethod
    def draw(cls, config: dict, seed: str) -> "Pacing | None":
        """The turn's pacing from the agent's ``reply_pacing`` ({} : none); ``seed`` names the turn."""
        if not config:
            return None
        jitter = config.get("jitter", 0.0)
        factor = random.Random(seed).uniform(1 - jitter, 1 + jitter)
        return cls(factor=factor, min_s=config.get("min_s", 0.0), chars_per_s=config["chars_per_s"],
                   max_s=config.get("max_s"))

    @property
    def speed(self) -> float:
        """Characters per second this turn (a factor above 1 is slower)."""
        return self.chars_per_s / self.factor

    def delay_s(self, chars: int) -> float:
        """Seconds from the turn becoming due until a reply of ``chars`` characters is applied."""
        delay = max(self.min_s * self.factor, chars / self.speed)
        return min(delay, self.max_s) if self.max_s is not None else delay

    def visible(self, elapsed_s: float, chars: int) -> int:
        """How many of ``chars`` characters a person typing at this speed has written by now."""
        return min(chars, max(0, math.floor(elapsed_s * self.speed)))


class Typing:
    """The frames of one turn. ``publish(frame)`` sends ``{"text": ...}`` (the turn context's)."""

    def __init__(self, publish: Callable[[dict], None] | None, field: str | None, *, stream: bool,
                 pacing: Pacing | None, due_at: float):
        self.publish = publish
        self.field = field
        self.stream = stream
        self.pacing = pacing
        self.due_at = due_at
        self.enabled = publish is not None and field is not None
        self.sent_text: str | None = None
        self.sent_at = 0.0
        self.frames = 0

    def start(self) -> None:
        """The partner starts typing (an empty frame)."""
        self._send("", time.time(), force=True)

    def generated(self, raw: str) -> None:
        """The model's answer so far (the raw partial JSON); throttled."""
        if not self.enabled or not self.stream:
            return
        now = time.time()
        if now - self.sent_at < INTERVAL_S:
            return
        self._show(partial_field(raw, self.field) or "", now)

    def hold_until(self, text: str, until: float) -> None:
        """Wait until ``until`` (epoch seconds), showing ``text`` (the final value of the field) as a
        person typing at the drawn speed would have written it."""
        while True:
            now = time.time()
            if now >= until:
                return
            if self.enabled:
                self._show(text if self.stream else "", now)
            time.sleep(min(INTERVAL_S, until - now))

    def _show(self, text: str, now: float) -> None:
        if self.pacing is not None:
            text = text[:self.pacing.visible(now - self.due_at, len(text))]
        self._send(text, now)

    def _send(self, text: str, now: float, force: bool = False) -> None:
        if not self.enabled:
            return
        if not force and text == self.sent_text and now - self.sent_at < KEEPALIVE_S:
            return
        if not force and now - self.sent_at < INTERVAL_S:
            return
        try:
            self.publish({"text": text})
        except Exception as exc:   # a frame is best effort: the reply itself is in the match log
            log.info("typing frame not sent: %r", exc)
        self.sent_text, self.sent_at = text, now
        self.frames += 1
