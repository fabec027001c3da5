"""What a seat must not know, as values, and a scanner that finds them in what a seat receives.

Every game declares, in ``games/<game>/hidden.py``::

    def hidden_from(state: dict, role: str) -> list[Hidden]
        # the concrete values ``role`` must not learn in this state (empty once they may know)
    def vary(state: dict, role: str, rng: random.Random) -> dict | None
        # the same state with what ``role`` must not know changed (another secret image, another
        # target scene, another colour as the target), everything ``role`` may know kept; None
        # when nothing is hidden from ``role`` now. The non-interference check: ``role``'s view
        # and outcome must not change (small values such as a colour's position 0..2 or the
        # number of target pieces cannot be found by value; they are caught this way)
    def random_action(view: dict, rng: random.Random) -> dict | None
        # a random legal move for the seat whose view this is (None: nothing to do now)
    SECRET_ROLES = ("listener",)
        # the roles something is hidden from at some point of a match (() when none): the
        # contract checks that what is declared for them really appears somewhere else
    OUTCOME_HIDES_FROM = ()
        # optional: the roles whose secrets the full record (rules.outcome) holds while the
        # match runs, so it must never reach them as it is

The pure checks of these declarations are in the contract-test library (games/testing.py). The
leak audit (``tests/test_game_contract.py``, ``tests/support/leak_audit.py``) plays matches through
the real websocket and HTTP server and runs :func:`leaks` over every frame and page a seat gets,
against the values hidden in the state the frame was built from. It checks values, never key
names: a leak under any key, in any shape the value keeps, is found.

Matching (:func:`leaks`):

* a string is found as a substring of any string (so ``img07`` inside ``/img/img07.png`` too);
  strings shorter than 4 characters are refused at declaration (they would match by chance);
* a float is found only as a JSON float close to it (1e-9); whole numbers are refused at
  declaration (``0.0`` would match every ``0``): whole-number secrets are the differential
  check's job;
* a list or a dict is found as an equal node (lists also as a run of consecutive items; a dict
  declared with ``part=True`` in any dict holding all its items);
* ``allowed_in``: containers (lists or dicts) in which the value may appear as such, e.g. the
  GuessWhich secret id as one element of the pool the questioner legitimately sees, or the colour
  target's HSL in the listener's own three colours. A node equal to one of them is not searched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

MIN_STRING = 4


@dataclass(frozen=True)
class Hidden:
    """One value a role must not know now. ``name`` says what it is (for the failure message)."""

    name: str
    value: Any
    allowed_in: tuple = field(default_factory=tuple)
    part: bool = False       # a dict: found in any dict that holds all its items (more keys too)

    def __post_init__(self):
        value = self.value
        if isinstance(value, bool) or value is None or isinstance(value, int):
            raise ValueError(f"{self.name}: a bool, None or whole number cannot be found by value; "
                             "leave it to the differential check (hidden.vary)")
        if isinstance(value, float) and (not math.isfinite(value) or value == int(value)):
            raise ValueError(f"{self.name}: the whole number {value!r} cannot be found by value")
        if isinstance(value, str) and len(value) < MIN_STRING:
            raise ValueError(f"{self.name}: {value!r} is too short to be found by value")


@dataclass(frozen=True)
class Leak:
    name: str
    path: str
    found: Any

    def __str__(self) -> str:
        shown = repr(self.found)
        return f"{self.name} at {self.path}: {shown[:160]}"


def _walk(node: Any, path: str, allowed: list) -> Iterator[tuple[str, Any]]:
    if isinstance(node, (list, dict)) and any(node == a for a in allowed):
        return
    yield path, node
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _walk(child, f"{path}.{key}", allowed)
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _walk(child, f"{path}[{index}]", allowed)


def _matches(node: Any, value: Any, part: bool = False) -> bool:
    if isinstance(value, str):
        return isinstance(node, str) and value in node
    if isinstance(value, float):
        return isinstance(node, float) and math.isclose(node, value, rel_tol=0, abs_tol=1e-9)
    if isinstance(value, (list, tuple)):
        value = list(value)
        if not isinstance(node, list):
            return False
        if node == value:
            return True
        n = len(value)
        return n > 1 and any(node[i:i + n] == value for i in range(len(node) - n + 1))
    if isinstance(value, dict):
        if part:
            return isinstance(node, dict) and all(k in node and node[k] == v for k, v in value.items())
        return isinstance(node, dict) and node == value
    return False


def leaks(data: Any, hidden: list[Hidden], path: str = "$") -> list[Leak]:
    """Every place in ``data`` (JSON-like: dicts, lists, strings, numbers) where a hidden value
    appears outside its allowed containers."""
    found = []
    for item in hidden:
        for where, node in _walk(data, path, [*item.allowed_in]):
            if _matches(node, item.value, item.part):
                found.append(Leak(item.name, where, node))
                break
    return found


def text_leaks(text: str, hidden: list[Hidden]) -> list[Leak]:
    """Hidden strings in a page's raw text (HTML, headers), allowed containers or not: a page
    brings what a seat may see over the socket, so no hidden string belongs in its text."""
    return [Leak(item.name, "text", item.value) for item in hidden
            if isinstance(item.value, str) and item.value in text]
