"""A batch's arms and how people are assigned to them (issue 24; docs/crowd.md, "Arms").

An *arm* is one condition of an experiment: the agents of its agent seats, its setting overrides
and its weight (``Batch.arms``; live/batches.py checks them). A batch without arms has one
implicit arm, its own agents, named after them (``"human-human"`` without agents).

**Between subjects** (the default): the unit is a *seating*, one match created for people in the
lobby (a human-human arm seats two people in one match). Seatings draw consecutive slots of one
sequence made of blocks; block ``b`` holds each arm ``weight`` times, shuffled by
``random.Random(f"{seed}:{b}")`` (``Batch.arm_seed``). After any number of seatings each arm's
count is within one block of its share. The slot counter is a row (``ArmCounter``), locked
(``SELECT ... FOR UPDATE``) in the transaction that creates the match and advanced in it: slots
are spent only by matches that exist (a person who leaves before being seated spends none), two
processes never draw the same slot, and a restart changes nothing (the state is in PostgreSQL).

**Within subjects** (``assignment = "within"``, ``games_per_worker > 1``): each person plays the
arms in the order of one row of a balanced Latin square (Williams' design: every arm once in every
position; for an even number of arms every arm follows every other exactly once; for an odd
number the square and its mirror, 2n rows). Rows go to people by the same blocked scheme (each row
weight 1, generator ``f"{seed}:rows:{b}"``), drawn at the person's first seating; their k-th arm
match is ``order[k % n]``.

Every match records its arm (``Match.arm``) and ``Match.assignment``: ``unit``, ``index`` (the
slot), ``block``, ``seed``, and within subjects ``row``, ``order`` (arm names) and ``position``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from django.db.models import F

from live.models import ArmCounter, Batch, Match

ARM_KEYS = ("name", "agents", "config", "weight", "human_roles")


@dataclass(frozen=True)
class Arm:
    name: str
    agents: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    weight: int = 1
    human_roles: tuple = ()

    @property
    def human_human(self) -> bool:
        """People on both sides: an arm that names no agent."""
        return not any(self.agents.values())


def implicit_name(agents: dict | None) -> str:
    names = [name for _, name in sorted((agents or {}).items()) if name]
    return "+".join(names) if names else "human-human"


def arms_of(batch: Batch) -> list[Arm]:
    """The batch's arms (checked by live.batches.problems); the implicit one when it has none."""
    if not batch.arms:
        return [Arm(implicit_name(batch.agents), dict(batch.agents or {}), {}, 1, tuple(batch.human_roles or ()))]
    out = []
    for a in batch.arms:
        agents = dict(a.get("agents") or {})
        # people's roles: the arm's own; else a human-human arm's are all, an agent arm's the batch's
        roles = a.get("human_roles") or (batch.human_roles if any(agents.values()) else ())
        out.append(Arm(str(a["name"]), agents, dict(a.get("config") or {}), int(a.get("weight", 1)),
                       tuple(roles or ())))
    return out


def is_blind(batch: Batch | None) -> bool:
    """Human-human arms beside arms with an agent: the person must not learn which they are in."""
    if batch is None or not batch.arms:
        return False
    kinds = {arm.human_human for arm in arms_of(batch)}
    return len(kinds) == 2


def block(seed: int, number: int, weights: list[int], salt: str = "") -> list[int]:
    """Block ``number``: each arm index ``weights[i]`` times, shuffled by a generator seeded with
    the batch's seed and the block number (a string seed: the same in every process)."""
    items = [i for i, w in enumerate(weights) for _ in range(w)]
    random.Random(f"{seed}:{salt}{number}").shuffle(items)
    return items


def slot(seed: int, index: int, weights: list[int], salt: str = "") -> tuple[int, int]:
    """(arm index, block number) of slot ``index`` of the blocked sequence."""
    number, k = divmod(index, sum(weights))
    return block(seed, number, weights, salt)[k], number


def latin_square(n: int) -> list[list[int]]:
    """A balanced Latin square over ``n`` arms (Williams 1949): rows of arm indices; every arm once
    per position; for even ``n`` every arm immediately follows every other once (n rows), for odd
    ``n`` the square and its mirror (2n rows) do so twice."""
    if n < 1:
        return []
    first = [0] + [(j + 1) // 2 if j % 2 else n - j // 2 for j in range(1, n)]
    rows = [[(x + r) % n for x in first] for r in range(n)]
    return rows if n % 2 == 0 else rows + [list(reversed(row)) for row in rows]


def counter(batch: Batch) -> ArmCounter:
    """The batch's counter row, locked until the transaction ends (created on first use)."""
    ArmCounter.objects.bulk_create([ArmCounter(batch=batch)], ignore_conflicts=True)
    return ArmCounter.objects.select_for_update().get(batch=batch)


@dataclass
class Draw:
    """The arm a seating would get, before it is spent (``spend``, in the same transaction)."""
    arm: Arm
    assignment: dict
    people: int = 0        # new Latin-square rows this draw takes (within subjects)
    seatings: int = 0      # slots of the between-subjects sequence it takes


def within(batch: Batch) -> bool:
    return batch.assignment == Batch.Assignment.WITHIN and batch.games_per_worker > 1


def _seed(batch: Batch) -> int:
    if batch.arm_seed is None:   # a batch saved before seeds were drawn on save
        batch.save(update_fields=["arm_seed"])
    return batch.arm_seed


def draw_between(batch: Batch, row: ArmCounter) -> Draw:
    arms = arms_of(batch)
    seed = _seed(batch)
    index = row.seatings
    i, number = slot(seed, index, [a.weight for a in arms])
    return Draw(arms[i], {"unit": "seating", "index": index, "block": number, "seed": seed}, seatings=1)


def person_order(batch: Batch, participant) -> dict | None:
    """The Latin-square row a person was given at their first seating, and how many arm matches
    they have played since (from their matches' records); None before their first."""
    rows = (Match.objects.filter(batch=batch, seats__participant=participant, assignment__unit="person")
            .order_by("created_at").values_list("assignment", flat=True))
    # a human-human match seats two people, each with their own row ("people": {participant id: ...})
    done = [a.get("people", {}).get(str(participant.pk), a) for a in rows]
    if not done:
        return None
    return {**done[0], "played": len(done)}


def draw_within(batch: Batch, row: ArmCounter, participant, *, new_before: int = 0) -> Draw:
    """The person's next arm. ``new_before``: rows already promised in this seating to people
    drawn first (a human-human arm seats two people at once)."""
    arms = arms_of(batch)
    by_name = {a.name: a for a in arms}
    seed = _seed(batch)
    mine = person_order(batch, participant)
    if mine is not None and all(name in by_name for name in mine.get("order", ())):
        order, position = mine["order"], mine["played"] % len(mine["order"])
        info = {k: mine[k] for k in ("unit", "index", "block", "seed", "row") if k in mine}
        return Draw(by_name[order[position]], {**info, "order": order, "position": position})
    square = latin_square(len(arms))
    index = row.people + new_before
    r, number = slot(seed, index, [1] * len(square), salt="rows:")
    order = [arms[i].name for i in square[r]]
    return Draw(by_name[order[0]], {"unit": "person", "index": index, "block": number, "seed": seed, "row": r,
                                    "order": order, "position": 0}, people=1)


def draw(batch: Batch, row: ArmCounter, participant, *, new_before: int = 0) -> Draw:
    if within(batch):
        return draw_within(batch, row, participant, new_before=new_before)
    return draw_between(batch, row)


def spend(row: ArmCounter, *draws: Draw) -> None:
    """Advance the counter by what these draws took (inside the seating's transaction)."""
    seatings = max((d.seatings for d in draws), default=0)   # one slot per match
    people = sum(d.people for d in draws)
    if seatings or people:
        ArmCounter.objects.filter(pk=row.pk).update(seatings=F("seatings") + seatings, people=F("people") + people)
        row.seatings += seatings
        row.people += people


# Blind batches (human-human arms beside agent arms): an agent arm must not seat the person at once,
# or the wait would tell them their partner is not a person. It seats them after a wait drawn like a
# person partner's arrival: a quantile of the waits people had in the batch's human-human arm
# matches (recorded at their seating, ``assignment["waits_s"]``), once there are ``MIN_OBSERVED_WAITS``
# of them, else uniform over the batch's ``blind_wait_min_s`` .. ``blind_wait_max_s``; never past
# the batch's own wait (``max_wait_s``), where a person waiting for a partner would time out.
MIN_OBSERVED_WAITS = 10
OBSERVED_WAITS_USED = 200    # the most recent human-human matches' waits


def observed_waits(batch: Batch) -> list[float]:
    """The waits (s) people had before being seated in the batch's human-human arm matches, newest
    matches first (each match records its people's waits)."""
    human = [a.name for a in arms_of(batch) if a.human_human]
    rows = (Match.objects.filter(batch=batch, arm__in=human, assignment__has_key="waits_s")
            .order_by("-created_at").values_list("assignment", flat=True)[:OBSERVED_WAITS_USED])
    return [float(w) for a in rows for w in (a.get("waits_s") or {}).values()
            if isinstance(w, (int, float)) and w >= 0]


def blind_wait_s(batch: Batch, participant, waiting_since) -> float:
    """How long an agent arm of a blind batch keeps this person waiting before seating them (this
    wait of theirs: the draw's generator is seeded with the batch's seed, the person and when their
    wait began, so every poll of the same wait finds the same quantile)."""
    u = random.Random(f"{_seed(batch)}:blindwait:{participant.pk}:"
                      f"{waiting_since.isoformat() if waiting_since else ''}").random()
    waits = sorted(observed_waits(batch))
    if len(waits) >= MIN_OBSERVED_WAITS:
        wait = waits[min(int(u * len(waits)), len(waits) - 1)]
    else:
        lo, hi = sorted((batch.blind_wait_min_s, batch.blind_wait_max_s))
        wait = lo + u * (hi - lo)
    return round(max(0.0, min(wait, max(batch.max_wait_s - 1, 0))), 1)
