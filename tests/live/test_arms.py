"""A batch's arms (issue 24, live/arms.py): the checks and their messages, blocked randomisation
and its balance, seatings at once from two processes, a restart, the Latin squares, within
subjects, and blind arms (human-human beside human-agent) that look the same to the person."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from itertools import pairwise

import pytest

from crowd import lobby
from crowd.models import Participant
from crowd.pages import seat_config
from live import arms
from live.batches import batch_problems, problems
from games.registry import get_game
from live.models import ArmCounter, Batch, Content, Match, MatchEvent, Seat
from tests.conftest import ROOT, child_env
from tests.support.factories import batch as make_batch
from tests.support.factories import participant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _agent_queues_served(agent_queues_served):
    """The lobby seats people with agents here without a Celery worker: every queue is served."""
    yield

SPEAKER, LITERAL, PRAGMATIC, RANDOM = ("colors_lexicon_speaker", "colors_literal_listener",
                                       "colors_pragmatic_listener", "colors_random_listener")


def two_arms(**kw) -> Batch:
    return make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], arms=[
        {"name": "literal", "agents": {"listener": LITERAL}, "weight": 2},
        {"name": "pragmatic", "agents": {"listener": PRAGMATIC}, "config": {"rounds": 2}}], **kw)


def check(**kw) -> list[tuple[str, str]]:
    base = dict(game_id="colors_v1", pairing="human-agent", human_roles=["speaker"], agents={}, on_timeout="leave",
                config={})
    return problems(**{**base, **kw})


def test_checks_name_the_arm_and_the_field():
    assert check(arms=[{"name": "a", "agents": {"listener": LITERAL}}, {"name": "b", "agents": {"listener": RANDOM}},
                       {"name": "people", "agents": {}}]) == []
    found = dict(check(arms=[
        {"name": "a", "agents": {"listener": "nope"}},
        {"name": "a", "agents": {"listener": SPEAKER}, "weight": 0, "config": {"rounds": 0}},
        5,
        {"agents": {"listener": LITERAL}, "colour": 1},
        {"name": "c", "agents": {"speaker": SPEAKER, "listener": LITERAL}, "config": {"nope": 1}, "weight": True},
    ], assignment="within"))
    assert found["arms[0].agents.listener"].startswith("arms[0].agents.listener (arm 'a'): Agent 'nope' for the "
                                                       "listener seat is not a registered agent")
    assert "plays colors_v1/speaker" in found["arms[1].agents.listener"]
    assert found["arms[1].name"] == "arms[1].name (arm 'a'): two arms are named 'a'; arm names must differ."
    assert "weight must be a positive integer, not 0" in found["arms[1].weight"]
    assert "must be a positive integer, not 0" in found["arms[1].config.rounds"]
    assert found["arms[2]"].startswith("arms[2]: an arm must be a JSON object")
    assert "unknown key(s) colour" in found["arms[3]"] and "every arm needs a name" in found["arms[3].name"]
    assert "Unknown setting 'nope'" in found["arms[4].config"] and "not True" in found["arms[4].weight"]
    assert "games per worker > 1" in found["assignment"]
    assert check(arms="x")[0][0] == "arms"
    # a human-human arm needs two human roles: the arm's own list, else the batch's
    assert check(arms=[{"name": "p", "agents": {}, "human_roles": ["speaker"]}])[0][0] == "arms[0].human_roles"
    # a batch whose arms cannot all run is refused (the entry links and the lobby use batch_problems)
    b = two_arms()
    assert batch_problems(b) == []
    b.arms[1]["agents"]["listener"] = "gone"
    assert batch_problems(b)[0].startswith("arms[1].agents.listener (arm 'pragmatic'): Agent 'gone'")


def test_seed_drawn_and_recorded():
    b = make_batch()
    assert isinstance(b.arm_seed, int) and Batch.objects.get(pk=b.pk).arm_seed == b.arm_seed
    assert make_batch(arm_seed=7).arm_seed == 7


def test_blocks_balance_every_prefix():
    weights = [2, 1, 3]
    seq = [arms.slot(11, i, weights)[0] for i in range(600)]
    size = sum(weights)
    for n in range(1, len(seq) + 1):
        counts = Counter(seq[:n])
        for i, w in enumerate(weights):   # within one block of its share
            assert abs(counts[i] - n * w / size) <= w
    assert Counter(seq[:size * 5]) == {0: 10, 1: 5, 2: 15}
    assert seq[:30] != [arms.slot(12, i, weights)[0] for i in range(30)]   # another seed, another order
    assert seq == [arms.slot(11, i, weights)[0] for i in range(600)]       # the same seed, the same order


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_latin_squares_are_balanced(n):
    rows = arms.latin_square(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    for row in rows:
        assert sorted(row) == list(range(n))
    for position in range(n):
        assert Counter(row[position] for row in rows) == {a: len(rows) // n for a in range(n)}
    follows = Counter(pair for row in rows for pair in pairwise(row))
    assert set(follows) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(follows.values()) == {1 if n % 2 == 0 else 2}


def seat_all(b: Batch, people) -> None:
    for p in people:
        assert lobby.lobby_poll(participant_id=p.pk).match_id


def test_seatings_follow_the_blocks_and_record_the_arm():
    b = two_arms()
    people = [participant(b, f"w{i}") for i in range(9)]
    left = participant(b, "left")
    lobby.participant_leave(participant_id=left.pk)   # leaves before being seated: spends no slot
    seat_all(b, people)
    matches = list(Match.objects.filter(batch=b).order_by("created_at"))
    expected = [["literal", "pragmatic"][arms.slot(b.arm_seed, i, [2, 1])[0]] for i in range(9)]
    assert [m.arm for m in matches] == expected
    assert Counter(expected) == {"literal": 6, "pragmatic": 3}
    for i, m in enumerate(matches):
        assert m.assignment == {"unit": "seating", "index": i, "block": i // 3, "seed": b.arm_seed}
        listener = Seat.objects.get(match=m, role="listener")
        assert listener.agent_name == (LITERAL if m.arm == "literal" else PRAGMATIC)
        assert m.config["rounds"] == (2 if m.arm == "pragmatic" else 3)   # the arm's override
    assert ArmCounter.objects.get(batch=b).seatings == 9


def test_a_batch_without_arms_records_its_implicit_arm():
    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], agents={"listener": LITERAL})
    seat_all(b, [participant(b, "x")])
    m = Match.objects.get(batch=b)
    assert (m.arm, m.assignment) == (LITERAL, {"unit": "implicit", "seed": b.arm_seed})
    assert not ArmCounter.objects.filter(batch=b).exists()


POLLER = """
import django, sys
django.setup()
from crowd import lobby
ids = [int(x) for x in sys.argv[1].split(",")]
print("ready", flush=True)
sys.stdin.readline()   # the go: both processes seat at once, whichever started faster
pending = list(ids)
for _ in range(50):
    pending = [pid for pid in pending if not lobby.lobby_poll(participant_id=pid).match_id]
    if not pending:
        break
print(len(pending))
"""


def run_pollers(groups) -> None:
    """One process per group of people, each polling the lobby for its people; every process is
    started and set up before any seats anyone, so their seatings overlap."""
    env = {**child_env(), "DJANGO_SETTINGS_MODULE": "groundtalk_web.settings"}
    procs = [subprocess.Popen([sys.executable, "-c", POLLER, ",".join(str(p.pk) for p in group)],
                              cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for group in groups]
    try:
        assert [p.stdout.readline().strip() for p in procs] == ["ready"] * len(groups)
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert all(p.returncode == 0 for p in procs) and outs == ["0"] * len(groups), outs


SEATINGS = 60   # a multiple of the block (weights 2 and 1): the arms balance exactly


@pytest.mark.django_db(transaction=True)
def test_seatings_from_two_processes_at_once_balance_exactly_and_survive_a_restart():
    spec = get_game("colors_v1")   # one stored stimulus: no colour science per seating, the seating alone is timed
    content = Content.objects.create(game_id="colors_v1", key="arms",
                                     data=spec.content.generate(1, {**spec.default_config, "rounds": 3}))
    b = two_arms(content_pool=[content.pk])
    n = SEATINGS
    people = [participant(b, f"p{i}") for i in range(n + 1)]
    run_pollers([people[:n:2], people[1:n:2]])   # two server processes at once, interleaved arrivals
    matches = list(Match.objects.filter(batch=b).order_by("assignment__index"))
    assert len(matches) == n and Seat.objects.filter(match__batch=b, kind="human").count() == n
    assert [m.assignment["index"] for m in matches] == list(range(n))   # no slot drawn twice
    expected = [["literal", "pragmatic"][arms.slot(b.arm_seed, i, [2, 1])[0]] for i in range(n)]
    assert [m.arm for m in matches] == expected
    assert Counter(m.arm for m in matches) == {"literal": n * 2 // 3, "pragmatic": n // 3}
    # "a restart": a process that seated none of them (this one, as a server started afresh would)
    # goes on from the counter row in PostgreSQL, slot n
    assert any(lobby.lobby_poll(participant_id=people[n].pk).match_id for _ in range(50))
    last = Match.objects.get(batch=b, seats__participant=people[n])
    assert last.assignment["index"] == n
    assert last.arm == ["literal", "pragmatic"][arms.slot(b.arm_seed, n, [2, 1])[0]]


def test_within_subjects_orders_are_latin_square_rows():
    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], games_per_worker=3,
                   assignment="within", arms=[{"name": n, "agents": {"listener": a}} for n, a in
                                              (("L", LITERAL), ("P", PRAGMATIC), ("R", RANDOM))])
    square = arms.latin_square(3)
    people = [participant(b, f"w{i}") for i in range(6)]
    for game in range(3):
        seat_all(b, people)
        for p in people:   # the game ends: back to the waiting room
            m = Match.objects.get(batch=b, seats__participant=p, status="active")
            Match.objects.filter(pk=m.pk).update(status="finished")
            Participant.objects.filter(pk=p.pk).update(state="waiting", games_played=game + 1)
    rows_seen = []
    for p in people:
        ms = list(Match.objects.filter(batch=b, seats__participant=p).order_by("created_at"))
        order = ms[0].assignment["order"]
        assert [m.arm for m in ms] == order and [m.assignment["position"] for m in ms] == [0, 1, 2]
        assert order == [["L", "P", "R"][i] for i in square[ms[0].assignment["row"]]]
        assert {m.assignment["seed"] for m in ms} == {b.arm_seed}
        rows_seen.append(ms[0].assignment["row"])
    assert sorted(rows_seen) == list(range(6))   # six people: each row of the 2n-row square once
    assert ArmCounter.objects.get(batch=b).people == 6


def test_blind_arms_look_the_same_to_the_person():
    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, arms=[
        {"name": "model", "agents": {"speaker": SPEAKER, "listener": LITERAL}},
        {"name": "person", "agents": {}}], arm_seed=3, blind_wait_min_s=0, blind_wait_max_s=0)
    assert arms.is_blind(b)
    people = [participant(b, f"w{i}") for i in range(8)]
    for _ in range(3):
        for p in people:
            lobby.lobby_poll(participant_id=p.pk)
    matches = list(Match.objects.filter(batch=b))
    kinds = {m.arm for m in matches}
    assert kinds == {"model", "person"}
    seen = set()
    for m in matches:
        started = MatchEvent.objects.get(match=m, seq=1)
        assert started.payload["seats"] == {"speaker": "seat", "listener": "seat"}
        for seat in Seat.objects.filter(match=m, kind="human").select_related("match"):
            config = seat_config(seat, "/next/")
            seen.add((config["partnerIsAgent"], config["partnerName"]))
    assert seen == {(False, "your partner")}
    # an unblinded batch still says so
    plain = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], agents={"listener": LITERAL})
    seat_all(plain, [participant(plain, "z")])
    m = Match.objects.get(batch=plain)
    assert MatchEvent.objects.get(match=m, seq=1).payload["seats"] == {"speaker": "human", "listener": "agent"}
    assert seat_config(Seat.objects.get(match=m, role="speaker"), "/")["partnerIsAgent"] is True


def test_batch_builder_saves_arms_and_shows_their_problems():
    from research.admin import BatchForm
    from tests.research.test_admin import form_data

    good = [{"name": "literal", "agents": {"listener": LITERAL}, "weight": 2},
            {"name": "people", "agents": {}}]
    form = BatchForm(data=form_data(slug="armed", arms=good, assignment="between", human_roles=["speaker"],
                                    agents={}))
    assert form.is_valid(), form.errors
    b = form.save()
    assert b.arms == good and b.assignment == "between" and isinstance(b.arm_seed, int)
    bad = BatchForm(data=form_data(slug="armed2", human_roles=["speaker"], agents={}, assignment="within",
                                   arms=[{"name": "x", "agents": {"listener": "nope"}}]))
    assert not bad.is_valid()
    assert bad.errors["arms"][0].startswith("arms[0].agents.listener (arm 'x'): Agent 'nope'")
    assert "games per worker > 1" in bad.errors["assignment"][0]


def test_export_records_carry_the_arm_order_position_and_seed():
    from research.records import match_record

    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], games_per_worker=2,
                   assignment="within", arms=[{"name": "L", "agents": {"listener": LITERAL}},
                                              {"name": "P", "agents": {"listener": PRAGMATIC}}])
    seat_all(b, [participant(b, "w")])
    record = match_record(Match.objects.get(batch=b))
    assert record["arm"] == record["arm_order"][0] and record["arm_position"] == 0
    assert record["arm_seed"] == b.arm_seed and record["assignment"]["row"] in (0, 1)


def blind_batch(**kw) -> Batch:
    seed = next(s for s in range(100) if arms.slot(s, 0, [1, 1])[0] == 0)   # the first seating: the model arm
    return make_batch(pairing=Batch.Pairing.HUMAN_AGENT, arms=[
        {"name": "model", "agents": {"speaker": SPEAKER, "listener": LITERAL}},
        {"name": "person", "agents": {}}], arm_seed=seed, **kw)


def test_blind_agent_arm_waits_like_a_person_partner_and_records_the_wait():
    from datetime import timedelta

    b = blind_batch(blind_wait_min_s=20, blind_wait_max_s=30, max_wait_s=120)
    p = participant(b, "alone")
    wait = arms.blind_wait_s(b, p, p.waiting_since)
    assert 20 <= wait <= 30 and wait == arms.blind_wait_s(b, p, p.waiting_since)   # one draw per wait
    status = lobby.lobby_poll(participant_id=p.pk)
    assert status.match_id is None and status.state == "waiting"   # an agent arm, but not at once
    assert not Match.objects.filter(batch=b).exists() and ArmCounter.objects.get(batch=b).seatings == 0
    Participant.objects.filter(pk=p.pk).update(waiting_since=p.waiting_since - timedelta(seconds=18))
    assert lobby.lobby_poll(participant_id=p.pk).match_id is None   # 18 s: short of any draw (20 to 30 s)
    # the wait is drawn per wait (seeded with when it began): a wait that began 31 s ago has its own
    # draw, at most 30 s, so it is over
    Participant.objects.filter(pk=p.pk).update(waiting_since=p.waiting_since - timedelta(seconds=31))
    p.refresh_from_db()
    wait = arms.blind_wait_s(b, p, p.waiting_since)
    assert 20 <= wait <= 30
    status = lobby.lobby_poll(participant_id=p.pk)
    m = Match.objects.get(pk=status.match_id)
    assert m.arm == "model" and m.assignment["blind_wait_s"] == wait and m.assignment["waited_s"] >= wait
    # a batch that is not blind seats at once, as before
    plain = two_arms()
    assert lobby.lobby_poll(participant_id=participant(plain, "q").pk).match_id


def test_blind_wait_drawn_from_observed_human_waits_never_past_the_batch_wait():
    b = blind_batch(blind_wait_min_s=20, blind_wait_max_s=30, max_wait_s=60)
    ann, bob = participant(b, "ann"), participant(b, "bob")
    # a human-human seating records both people's waits
    Match.objects.all().delete()
    ArmCounter.objects.create(batch=b, seatings=1)   # slot 1: the person arm (blocks of two)
    assert arms.slot(b.arm_seed, 1, [1, 1])[0] == 1
    lobby.lobby_poll(participant_id=ann.pk)
    m = Match.objects.get(pk=lobby.lobby_poll(participant_id=bob.pk).match_id)
    assert m.arm == "person" and set(m.assignment["waits_s"]) == {str(ann.pk), str(bob.pk)}
    assert all(w >= 0 for w in m.assignment["waits_s"].values())
    assert sorted(arms.observed_waits(b)) == sorted(m.assignment["waits_s"].values())
    # fewer than MIN_OBSERVED_WAITS: the configured range
    assert 20 <= arms.blind_wait_s(b, participant(b, "y"), m.created_at) <= 30
    # ten observed waits: the draw is one of them (capped under the batch's wait)
    observed = [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 500.0]
    Match.objects.filter(pk=m.pk).update(assignment={**m.assignment, "waits_s": {
        str(i): w for i, w in enumerate(observed)}})
    draws = {arms.blind_wait_s(b, participant(b, f"x{i}"), m.created_at) for i in range(40)}
    assert draws <= {*observed[:-1], 59.0} and len(draws) > 3
    assert all(not 20 <= d <= 30 for d in draws)   # not the configured range any more


def test_guesswhich_instructions_name_no_alice_in_a_blind_batch():
    from django.test import Client

    from tests.support.factories import lab_url

    def instructions(b: Batch) -> str:
        c = Client()
        url = c.get(lab_url(b, "ann")).url
        c.post(url, {"step": "consent", "agree": "yes"})
        return c.get(url).content.decode()

    blind = make_batch(slug="gw-blind", game_id="guesswhich_v1", pairing=Batch.Pairing.HUMAN_AGENT,
                       human_roles=["questioner"], arms=[
                           {"name": "alice", "agents": {"answerer": "alice_exact"}},
                           {"name": "person", "agents": {}, "human_roles": ["questioner", "answerer"]}])
    assert arms.is_blind(blind) and batch_problems(blind) == []
    html = instructions(blind)
    assert "How to play GuessWhich" in html and "ALICE" not in html and "AI program" not in html
    assert "find me a partner" in html
    plain = make_batch(slug="gw-plain", game_id="guesswhich_v1", pairing=Batch.Pairing.HUMAN_AGENT,
                       human_roles=["questioner"], agents={"answerer": "alice_exact"})
    assert "ALICE" in instructions(plain)
