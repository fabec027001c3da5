"""The pure contract every game's rules module follows (no Django, no I/O).

A rules module (``games/<game>/rules.py``) defines, at module level::

    GAME_ID = "colors_v1"                  # versioned id, stored on every Match
    ROLES = ("speaker", "listener")       # seat names, in display order

    def initial_state(content: dict, seed: int, config: dict) -> dict
    def start_events(state: dict) -> list[Event]   # facts that describe the initial state
    def to_act(state: dict) -> tuple[str, ...]      # roles the game is waiting on now; () when over
    def view_for(state: dict, role: str) -> dict    # JSON-safe; only what that seat may see
    def apply(state: dict, role: str, action: dict) -> tuple[dict, list[Event]]
    def is_over(state: dict) -> bool
    def outcome(state: dict) -> dict                # scores so far (final once is_over); the
                                                    # platform's record: never sent to a seat as is
    def outcome_for(state: dict, role: str) -> dict # what ``role`` may see of the outcome now

    STATIC_STATE_KEYS = ("rounds",)        # optional: state keys no action ever changes; stored
                                           # once per match, not with every snapshot
    TURN_ACTIONS = {"speaker": ("chat",),  # optional: per role, the action types that take its
                    "listener": ("click",)}  # turn (absent: any action of a role in ``to_act``)
    TURN_LIMIT_S = 120                     # optional: the default turn limit of a batch of this
                                           # game (seconds; absent: DEFAULT_TURN_LIMIT_S)

The turn clock (issue 20): a person whose turn it is takes it only with an action the game waits
for. In the colour game both players may chat at any time, but the speaker's turn is taken by
describing the target (its first message of the round) and the listener's only by the click;
chat from the listener, or more chat from the speaker, does not restart the clock.
:func:`turn_taken` is the one definition the platform uses (live/match_store.py writes the clock,
live/watchdog.py reads it): an action takes a turn when the acting role was in ``to_act`` and
the action's type is one of its ``TURN_ACTIONS``, or when the action changed who is to act.

Invariants every rules module keeps (the contract-test library, :mod:`games.testing`, checks them;
``tests/test_game_contract.py`` runs it for every registered game):

* State is a plain JSON-safe dict. ``apply`` never mutates the state it is given; it returns a new
  one, or raises :class:`IllegalAction` and changes nothing.
* ``action`` is a dict with a ``"type"`` and, stamped by the service (never trusted from a client),
  ``"at"``: the server's clock in integer milliseconds since the epoch. Rules read time only from
  there, so content + seed + the logged actions replay a match exactly.
* ``role`` is one of ``ROLES`` or :data:`SYSTEM` (timeouts and other actions the server takes on
  behalf of nobody in particular).
* Events are past-tense facts. ``payload`` is what every seat sees; ``private[role]`` is merged over
  it for that role only. Hidden information lives only in ``private``.

Hidden information (docs/architecture.md, "What a seat may know"). A seat receives only its
role's projection: ``view_for(state, role)``, events through ``Event.for_role`` (the service's
``project_event``) and, once the match is no longer active, ``outcome_for(state, role)``; never
the state, the content or ``outcome(state)``. Each game declares in ``games/<game>/hidden.py``
(:mod:`games.hidden`) the concrete values each role must not know in a state, a way to vary them
(the non-interference check) and its random legal moves; the leak audit plays every game and
role through the real websocket and HTTP server and fails on any declared value a seat receives.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYSTEM = "system"

# A batch's turn limit when its game's rules declare no TURN_LIMIT_S (seconds).
DEFAULT_TURN_LIMIT_S = 180


class IllegalAction(Exception):
    """A move the rules refuse. ``code`` is a stable machine-readable id, ``message`` is for people."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Event:
    """One fact appended to a match's log."""

    type: str
    payload: dict = field(default_factory=dict)
    private: dict[str, dict] | None = None

    def for_role(self, role: str | None) -> dict:
        """The payload as ``role`` sees it (``None``: an observer who sees only the shared part)."""
        if not self.private or role is None or role not in self.private:
            return dict(self.payload)
        return {**self.payload, **self.private[role]}

    def to_json(self) -> dict:
        data: dict[str, Any] = {"type": self.type, "payload": self.payload}
        if self.private:
            data["private"] = self.private
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Event":
        return cls(type=data["type"], payload=data.get("payload") or {}, private=data.get("private"))


def require(condition: bool, code: str, message: str) -> None:
    """Raise :class:`IllegalAction` unless ``condition`` holds."""
    if not condition:
        raise IllegalAction(code, message)


def text_field(action: dict, key: str, *, max_len: int, what: str = "message") -> str:
    """A non-empty text field of at most ``max_len`` characters, whitespace-trimmed."""
    value = action.get(key)
    require(isinstance(value, str), "bad_field", f"The {what} must be text.")
    value = value.strip()
    require(len(value) > 0, "empty_message", f"The {what} is empty.")
    require(len(value) <= max_len, "message_too_long",
            f"The {what} is {len(value)} characters long; the limit is {max_len}.")
    return value


def int_field(action: dict, key: str, *, lo: int, hi: int, what: str | None = None) -> int:
    """An integer field within ``lo..hi`` inclusive (booleans refused)."""
    value = action.get(key)
    what = what or key
    require(isinstance(value, int) and not isinstance(value, bool), "bad_field",
            f"The {what} must be a whole number.")
    require(lo <= value <= hi, "out_of_range", f"The {what} must be between {lo} and {hi}, not {value}.")
    return value


def action_type(action: Any, allowed: tuple[str, ...]) -> str:
    """The action's type, which must be one of ``allowed``."""
    require(isinstance(action, dict), "bad_action", "An action must be a JSON object.")
    kind = action.get("type")
    require(isinstance(kind, str), "bad_action", "An action needs a \"type\".")
    require(kind in allowed, "unknown_action",
            f"Unknown action type {kind!r}; this game accepts {', '.join(allowed)}.")
    return kind


def at_ms(action: dict) -> int:
    """The server timestamp the service stamped on the action."""
    value = action.get("at")
    require(isinstance(value, int) and not isinstance(value, bool), "bad_action",
            "The action carries no server timestamp.")
    return value


def turn_actions(rules, role: str) -> tuple[str, ...] | None:
    """The action types that take ``role``'s turn (``TURN_ACTIONS``), or None: any action does."""
    declared = getattr(rules, "TURN_ACTIONS", None)
    if declared is None:
        return None
    return tuple(declared.get(role, ()))


def turn_taken(rules, before: dict, after: dict, role: str, kind: str) -> bool:
    """Whether ``role``'s action of type ``kind`` (taking ``before`` to ``after``) took a turn: the
    clock of whose turn it is restarts. True when the roles to act changed (whoever acted, the
    system included), or when ``role`` was to act and ``kind`` is one of its turn actions."""
    waited_on = tuple(rules.to_act(before))
    if tuple(rules.to_act(after)) != waited_on:
        return True
    if role not in waited_on:
        return False
    allowed = turn_actions(rules, role)
    return allowed is None or kind in allowed


def turn_limit_s(rules) -> int:
    """The game's default turn limit (``TURN_LIMIT_S``, else :data:`DEFAULT_TURN_LIMIT_S`)."""
    return int(getattr(rules, "TURN_LIMIT_S", DEFAULT_TURN_LIMIT_S))
