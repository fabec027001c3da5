"""The LLM agent: a chat model behind an OpenAI-compatible endpoint plays one role of one game.

One turn (:meth:`LlmAgent.act_turn`, called by ``agents.services.agent_take_turn`` with the turn's
:class:`agents.base.TurnContext`):

1. the request: the role's adapter (``games/<game>/llm.py``) makes the messages from the seat's
   view; the decision is asked for in a strict ``json_schema`` response format (request.py);
2. the call, with the ``openai`` library (``max_retries=0``: the retries are ours): a slot of the
   endpoint's ``max_concurrency`` first (slots.py), then the request, streamed when ``stream``
   (``stream_options.include_usage``, so streamed answers report their tokens too), the partner
   shown the ``stream_field`` as it is written (typing_frames.py). A 408, 409, 429, a 5xx, a
   connection error, a timeout or a stream cut off is tried again after a backoff (0.5 s doubling
   to 8 s, each drawn in its upper half; at least what ``Retry-After`` / ``retry-after-ms`` asks),
   as long as the turn's time lasts; any other status is not;
3. the answer: parsed (``games.llm.parse_decision``), made an action (the adapter's
   ``to_action``) and checked by the game's schema and rules (``turn.check``: a copy of the
   state). When the game's ``llm`` module has ``turn_actions(decision, view)`` (CoDraw: a
   drawer's removals, moves and placements, then its reply; a teller's ``close_peek``, then its
   message), the decision is ALL of them: each is checked in order on one copy of the state
   (``turn.check_all``) and ``act_turn`` returns the list, which the service applies in one
   transaction: one model call per turn, not one per canvas change. An answer that fails any of
   these gets ONE repair request: the same messages, the answer as an assistant turn and a user
   turn that says what was wrong;
4. the pacing (``reply_pacing``): the action is returned no sooner than a person would have
   written the reply, counted from when the turn became due; typing frames meanwhile;
5. the record: one :class:`agents.models.AgentCall` per request (record.py), with the actions
   the answer became (``actions``, in the order applied).

Everything is bounded by the agent's ``timeout_s`` (capped by ``GT_AGENT_TIMEOUT_S``, as the
watchdog's is) counted from when the turn became due (less a
margin of a tenth of it, at most 1 s, so that the agent's own answer or failure comes before the
watchdog's): waiting for a slot, the retries, the repair and the pacing. When no usable answer
comes, :class:`LlmError` is raised with the reason the person is told (``fallback_reason``:
``timeout``, ``busy`` (no slot, or the endpoint's 429s, until the time ran out), ``error`` (a status
that is not tried again, e.g. 401 or 404) or ``illegal`` (the repair's answer was not usable
either)); the service then lets the agent's fallback act at once (agents/services.py).

The key (the variable ``api_key_env`` names) is read once, when the agent is built, and is only
ever sent in the request's Authorization header: never logged, recorded or exported.
"""
from __future__ import annotations

import email.utils
import logging
import os
import random
import threading
import time

import openai
from django.conf import settings
from openai import OpenAI

from agents.base import TurnContext
from agents.llm import record, slots
from agents.llm.connections import release_connection
from agents.llm.record import Call
from agents.llm.request import body_for, for_record, messages_for, params_of, repair_messages, response_format
from agents.llm.typing_frames import Pacing, Typing
from agents.model_config import ModelAgentConfig, ModelConfigError
from games.base import IllegalAction
from games.llm import DecisionError, parse_decision
from games.registry import get_game

log = logging.getLogger(__name__)
BACKOFF_FIRST_S, BACKOFF_MAX_S = 0.5, 8.0
RETRY_STATUSES = {408, 409, 429}
NO_KEY = "none"   # what the library sends as the key of an endpoint that needs none


class LlmError(RuntimeError):
    """No usable answer for this turn; ``fallback_reason`` is what the person is told."""

    def __init__(self, message: str, fallback_reason: str = "error"):
        super().__init__(message)
        self.fallback_reason = fallback_reason


class _Retry(Exception):
    """A failure worth another try (after ``delay_s``, at least)."""

    def __init__(self, message: str, delay_s: float = 0.0, busy: bool = False):
        super().__init__(message)
        self.delay_s = delay_s
        self.busy = busy


class LlmAgent:
    """``act_turn(view, turn)`` by a call to ``config.base_url`` (see the module docstring)."""

    def __init__(self, config: ModelAgentConfig):
        self.config = config
        self.adapter = config.llm_role()
        if self.adapter is None:
            raise ModelConfigError(f"agent {config.name}: {config.game_id}/{config.role} has no LLM adapter")
        game = get_game(config.game_id)
        self.schema = game.actions
        # a decision that is a whole turn of several actions (games/codraw/llm.py)
        self.turn_actions = getattr(game.llm, "turn_actions", None) if game.llm is not None else None
        self.template = config.prompt_text
        self.prompt_sha256 = config.prompt_sha256
        key = os.environ.get(config.api_key_env, "") if config.api_key_env else NO_KEY
        if not key:
            raise ModelConfigError(f"agent {config.name}: api_key_env names {config.api_key_env}, which is not set")
        cap = settings.GT_AGENT_TIMEOUT_S   # the watchdog's limit too (agents.registry.all_agents)
        self.timeout_s = min(config.timeout_s, cap) if cap else config.timeout_s
        self.client = OpenAI(base_url=config.base_url, api_key=key, max_retries=0, timeout=self.timeout_s)
        self.slot_key = slots.key_for(config.endpoint, config.model)
        self.params = params_of(config)

    # -- the agent interface ---------------------------------------------------------------------

    def act(self, view: dict) -> dict | None:
        """A turn outside a live match (``simulate``): the schema checks the action (no rules, no
        partner to show the typing to, no pacing, no record)."""
        now = time.time()
        turn = TurnContext(match_id="", role=self.config.role, expected_seq=0, due_at=now,
                           check=self.schema.validate, publish=lambda frame: None)
        actions = self._turn(view, turn, live=False)
        return actions[0]   # the caller applies it and asks again with the next view

    def act_turn(self, view: dict, turn: TurnContext) -> dict | list[dict]:
        """The turn's action, or its actions in order when the decision takes several (the
        service applies them one after the other in one transaction)."""
        actions = self._turn(view, turn, live=True)
        return actions if len(actions) > 1 else actions[0]

    def turn_unused(self, turn: TurnContext, outcome: str) -> None:
        """The service could not apply the answer (the game moved on meanwhile): the record says so."""
        record.mark(turn=turn, agent=self.config.name, outcome=outcome)

    def seat_record(self) -> dict:
        return self.config.seat_record()

    # -- one turn --------------------------------------------------------------------------------

    def _turn(self, view: dict, turn: TurnContext, *, live: bool) -> list[dict]:
        cfg = self.config
        margin = min(1.0, 0.1 * self.timeout_s)
        end_wall = turn.due_at + self.timeout_s - margin
        deadline = time.monotonic() + (end_wall - time.time())
        pacing = Pacing.draw(cfg.reply_pacing, f"{turn.match_id}:{turn.role}:{turn.expected_seq}:{cfg.name}") \
            if live else None
        typing = Typing(turn.publish if live else None, self.adapter.stream_field, stream=cfg.stream,
                        pacing=pacing, due_at=turn.due_at)
        messages = messages_for(self.adapter, self.template, view, images=cfg.images)
        fmt = response_format(self.adapter, view)
        body = body_for(cfg, messages, fmt)
        calls: list[Call] = []
        typing.start()
        for attempt in (1, 2):
            call = self._call(attempt, body, deadline, typing)
            calls.append(call)
            if not call.answered:
                self._finish(turn, calls, "error", live)
                raise LlmError(f"{cfg.name}: {call.error}", call.reason)
            problem = self._check(call, view, turn)
            if not problem:
                outcome = "acted" if attempt == 1 else "repaired"
                self._pace(call, turn, typing, pacing, end_wall)
                self._finish(turn, calls, outcome, live)
                return call.actions
            call.error = problem
            log.info("agent %s: answer %d of %s@%s not usable: %s", cfg.name, attempt, turn.role,
                     turn.expected_seq, problem)
            body = body_for(cfg, repair_messages(messages, call.text, problem), fmt)
        self._finish(turn, calls, "fallback", live)
        raise LlmError(f"{cfg.name}: no usable answer after the repair request: {calls[-1].error}", "illegal")

    def _check(self, call: Call, view: dict, turn: TurnContext) -> str:
        """'' when the answer is a legal action, or legal actions in order (kept in
        ``call.actions``), else what was wrong."""
        try:
            call.decision = parse_decision(call.text)
            if self.turn_actions is not None:
                actions = list(self.turn_actions(call.decision, view))
                if not actions:
                    raise DecisionError("That decision makes no move; answer with one that does.")
            else:
                actions = [self.adapter.to_action(call.decision, view)]
            if len(actions) > 1 and turn.check_all is not None:
                turn.check_all(actions)
            else:
                for action in actions:   # outside a match (``act``): the schema, action by action
                    turn.check(action)
        except DecisionError as exc:
            return str(exc)
        except IllegalAction as exc:
            return f"the game refuses that move ({exc.code}): {exc.message}"
        except Exception as exc:   # an adapter that failed on an odd decision: said to the model too
            log.exception("agent %s: the adapter failed on the decision %r", self.config.name, call.decision)
            return f"that decision cannot be played ({type(exc).__name__}: {exc})."
        call.actions = actions
        return ""

    def _pace(self, call: Call, turn: TurnContext, typing: Typing, pacing: Pacing | None, end_wall: float) -> None:
        field = self.adapter.stream_field
        text = call.decision.get(field) if field and isinstance(call.decision, dict) else None
        text = text if isinstance(text, str) else ""
        if pacing is None:
            return
        delay = pacing.delay_s(len(text))
        call.pacing_ms = 1000 * delay
        typing.hold_until(text, min(turn.due_at + delay, end_wall))

    def _finish(self, turn: TurnContext, calls: list[Call], outcome: str, live: bool) -> None:
        if live:
            record.write(turn=turn, config=self.config, adapter_version=self.adapter.version,
                         prompt_sha256=self.prompt_sha256, params=self.params, calls=calls, outcome=outcome)

    # -- one request, tried again while it may ----------------------------------------------------

    def _call(self, attempt: int, body: dict, deadline: float, typing: Typing) -> Call:
        cfg = self.config
        release_connection()
        call = Call(attempt=attempt, request=for_record(body))
        started = time.monotonic()
        tries = 0
        busy = False
        while True:
            if deadline - time.monotonic() <= 0:
                call.error = call.error or f"no answer within {self.timeout_s:g} s"
                call.reason = "busy" if busy else "timeout"
                break
            try:
                with slots.slot(self.slot_key, cfg.max_concurrency, deadline=deadline, lease_s=self.timeout_s) as waited:
                    call.queue_ms += 1000 * waited
                    self._request(body, call, deadline, typing)
                break
            except slots.NoSlot:
                call.error = (f"no free slot of max_concurrency {cfg.max_concurrency} for {cfg.model} at "
                              f"{cfg.endpoint} within {self.timeout_s:g} s")
                call.reason = "busy"
                break
            except _Retry as exc:
                busy = exc.busy
                delay = max(exc.delay_s, _backoff(tries))
                call.error = str(exc)
                if time.monotonic() + delay >= deadline:
                    call.error += f"; no time left to try again within {self.timeout_s:g} s"
                    call.reason = "busy" if busy else "timeout"
                    break
                tries += 1
                call.retries = tries
                log.info("agent %s: %s; again in %.2f s (try %d)", cfg.name, exc, delay, tries + 1)
                time.sleep(delay)
            except openai.APIStatusError as exc:
                call.error = f"HTTP {exc.status_code} from {cfg.endpoint}: {_message(exc)}"
                call.reason = "error"
                break
        call.total_ms = 1000 * (time.monotonic() - started) - call.queue_ms
        if call.reason:
            call.text = ""
        return call

    def _request(self, body: dict, call: Call, deadline: float, typing: Typing) -> None:
        """One HTTP request; the answer into ``call``; :class:`_Retry` for what may be tried again."""
        left = max(0.05, deadline - time.monotonic())
        sent = time.monotonic()
        try:
            if not body.get("stream"):
                response = self.client.chat.completions.create(**body, timeout=left)
                call.ttft_ms = 1000 * (time.monotonic() - sent)
                call.model_reported = response.model or ""
                call.text = (response.choices[0].message.content or "") if response.choices else ""
                _usage(call, response.usage)
                return
            stream = self.client.chat.completions.create(**body, timeout=left)
            # the read timeout bounds each read, not the whole answer: a stream that stalls is
            # closed at the deadline
            timer = threading.Timer(left, _close, args=(stream,))
            timer.daemon = True
            timer.start()
            parts: list[str] = []
            finished = False
            try:
                for chunk in stream:
                    if chunk.model:
                        call.model_reported = chunk.model
                    if chunk.usage is not None:
                        _usage(call, chunk.usage)
                    for choice in chunk.choices or ():
                        piece = choice.delta.content if choice.delta is not None else None
                        if piece:
                            if call.ttft_ms is None:
                                call.ttft_ms = 1000 * (time.monotonic() - sent)
                            parts.append(piece)
                            typing.generated("".join(parts))
                        finished = finished or bool(choice.finish_reason)
            except openai.APIStatusError:
                raise
            except Exception as exc:   # a cut connection, an error event, or closed at the deadline
                got = len("".join(parts))
                if time.monotonic() >= deadline - 0.05:
                    raise _Retry(f"the stream from {self.config.endpoint} stalled and was cut at the deadline "
                                 f"after {got} characters") from exc
                raise _Retry(f"the stream from {self.config.endpoint} broke off after {got} characters "
                             f"({type(exc).__name__}: {exc})") from exc
            finally:
                timer.cancel()
                _close(stream)
            if not finished:
                cut = "was cut at the deadline" if time.monotonic() >= deadline else "ended"
                raise _Retry(f"the stream from {self.config.endpoint} {cut} before the answer was finished "
                             f"({len(''.join(parts))} characters)")
            call.text = "".join(parts)
        except openai.APIStatusError as exc:
            if exc.status_code in RETRY_STATUSES or exc.status_code >= 500:
                raise _Retry(f"HTTP {exc.status_code} from {self.config.endpoint}: {_message(exc)}",
                             _retry_after(exc.response.headers), busy=exc.status_code == 429) from exc
            raise
        except openai.APIError as exc:   # timeouts, a refused connection, an error event in the stream
            raise _Retry(f"{type(exc).__name__} from {self.config.endpoint}: {exc}") from exc


def _close(stream) -> None:
    try:
        stream.close()
    except Exception:   # already closed, or closing a broken connection
        pass


def _usage(call: Call, usage) -> None:
    if usage is None:
        return
    call.prompt_tokens = getattr(usage, "prompt_tokens", None)
    call.completion_tokens = getattr(usage, "completion_tokens", None)


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"][:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(exc.message)[:300]


def _backoff(tries: int) -> float:
    """The pause before try ``tries + 2``: 0.5 s doubling to 8 s, drawn in its upper half."""
    return min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** tries) * random.uniform(0.5, 1.0)


def _retry_after(headers) -> float:
    """What the server asked us to wait (``retry-after-ms``, ``Retry-After`` in seconds or as a
    date), or 0."""
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return 0.0
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return 0.0
