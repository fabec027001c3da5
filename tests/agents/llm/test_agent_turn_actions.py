"""One model decision is one whole turn (agents/llm/agent.py with ``games.codraw.llm.turn_actions``):
a CoDraw drawer's canvas changes and its reply come from ONE call to the stand-in, applied by the
service one after the other in one transaction, each checked by the rules; the record lists them."""
from __future__ import annotations

import json
import textwrap

import pytest

from agents.models import AgentCall
from agents.services import agent_take_turn
from games.codraw import clipart as ca
from games.registry import get_game
from live.models import Match, MatchEvent, Seat
from live.services import SeatSpec, match_apply_action, match_create

from tests.support.llm_agents import reset_registry, write_models_file


def _entry(base_url: str, role: str, fallback: str) -> str:
    return textwrap.dedent(f"""
    [[agent]]
    name = "llm_{role}"
    kind = "openai"
    game_id = "codraw_v1"
    role = "{role}"
    base_url = "{base_url}"
    model = "standin-1"
    api_key_env = ""
    timeout_s = 10
    fallback = "{fallback}"
    version = "test-1"
    """)


@pytest.fixture
def drawer_match(tmp_path, monkeypatch, openai_standin):
    write_models_file(tmp_path, monkeypatch, _entry(openai_standin.base_url, "drawer", "codraw_rule_drawer"))
    seats = {"teller": SeatSpec(Seat.Kind.HUMAN), "drawer": SeatSpec(Seat.Kind.AGENT, agent_name="llm_drawer")}
    # on_commit never fires in a test transaction: the agent is not woken, the test plays its turn
    match = match_create(game_id="codraw_v1", seats=seats, seed=5, config={})
    match_apply_action(match_id=match.id, role="teller", action={"type": "chat", "text": "a tree and a sun"},
                       client_action_id="t1")
    match.refresh_from_db()
    yield match
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


def _piece(name: str, x: int, y: int, action: str = "add") -> dict:
    return {"action": action, "clipart": name, "x": x, "y": y, "size": "medium", "facing": "left",
            "pose": "none", "expression": "none"}


def _not_human(palette: list[dict]) -> list[str]:
    return [p["name"] for p in palette if not ca.is_human(p["idx"])]


@pytest.mark.django_db
def test_one_answer_plays_the_drawers_whole_turn(drawer_match, openai_standin):
    match = drawer_match
    view = get_game("codraw_v1").rules.view_for(match.state, "drawer")
    first, second = _not_human(view["palette"])[:2]
    openai_standin.script({"content": json.dumps({"pieces": [_piece(first, 120, 200), _piece(second, 300, 90)],
                                                  "message": "placed both"})})
    seq = match.seq
    assert agent_take_turn(match_id=match.id, role="drawer", expected_seq=seq) == "acted"
    # one request for the three actions
    assert len(openai_standin.chat_requests()) == 1
    events = list(MatchEvent.objects.filter(match=match, seq__gt=seq).order_by("seq"))
    acted = [e.action["type"] for e in events if e.action]
    assert acted == ["place", "place", "chat"]
    assert [e.client_action_id for e in events if e.action] == [f"agent:drawer:{e.seq - 1}" for e in events if e.action]
    assert next(e for e in events if e.type == "message_sent").payload["text"] == "placed both"
    match.refresh_from_db()
    assert "drawer" not in get_game("codraw_v1").rules.to_act(match.state)   # the turn is the teller's
    names = {p["idx"]: p["name"] for p in view["palette"]}
    assert {names[int(k)] for k in match.state["canvas"]} == {first, second}
    (call,) = AgentCall.objects.filter(match=match)
    assert call.outcome == "acted" and call.seq == seq
    assert [a["type"] for a in call.actions] == ["place", "place", "chat"]
    assert call.actions[0]["x"] == 120 and call.actions[2]["text"] == "placed both"
    # the wake-ups of the turn's intermediate seqs find it taken: no second call to the model
    for stale_seq in range(seq + 1, match.seq):
        assert agent_take_turn(match_id=match.id, role="drawer", expected_seq=stale_seq) == "stale"
    assert len(openai_standin.chat_requests()) == 1


@pytest.mark.django_db
def test_an_unusable_decision_gets_the_repair_request_and_nothing_of_it_is_applied(drawer_match, openai_standin):
    match = drawer_match
    view = get_game("codraw_v1").rules.view_for(match.state, "drawer")
    first, second = _not_human(view["palette"])[:2]
    good = {"pieces": [_piece(first, 120, 200), _piece(second, 300, 90)], "message": "ok then"}
    bad = {"pieces": [_piece(first, 120, 200), _piece(first, 130, 210, "move")], "message": "twice"}
    openai_standin.script({"content": json.dumps(bad)}, {"content": json.dumps(good)})
    seq = match.seq
    assert agent_take_turn(match_id=match.id, role="drawer", expected_seq=seq) == "acted"
    first_call, repair = AgentCall.objects.filter(match=match).order_by("attempt")
    assert "more than once" in first_call.error and first_call.actions == []
    assert repair.outcome == "repaired" and [a["type"] for a in repair.actions] == ["place", "place", "chat"]
    sent = openai_standin.chat_requests()[1]["body"]["messages"][-1]["content"]
    assert "more than once" in sent
    acted = [e.action["type"] for e in MatchEvent.objects.filter(match=match, seq__gt=seq).order_by("seq") if e.action]
    assert acted == ["place", "place", "chat"]


@pytest.mark.django_db
def test_the_turn_is_all_or_nothing(drawer_match, openai_standin, monkeypatch):
    """An action the service refuses midway (the game moved on meanwhile) rolls back the ones
    before it: the canvas is as it was, the record says the answer was not used."""
    import live.services as live_services
    import agents.services as services

    match = drawer_match
    view = get_game("codraw_v1").rules.view_for(match.state, "drawer")
    first, second = _not_human(view["palette"])[:2]
    openai_standin.script({"content": json.dumps({"pieces": [_piece(first, 120, 200), _piece(second, 300, 90)],
                                                  "message": "placed"})})
    real = live_services.match_apply_action
    applied = []

    def apply_then_refuse(**kw):
        if applied:
            from games.base import IllegalAction
            raise IllegalAction("stale", "The game moved on before this action arrived.")
        applied.append(kw["action"]["type"])
        return real(**kw)

    monkeypatch.setattr(services, "match_apply_action", apply_then_refuse)
    seq = match.seq
    assert agent_take_turn(match_id=match.id, role="drawer", expected_seq=seq) == "stale"
    assert applied == ["place"]
    match.refresh_from_db()
    assert match.seq == seq and match.status == Match.Status.ACTIVE
    assert not MatchEvent.objects.filter(match=match, seq__gt=seq).exists()
    assert AgentCall.objects.get(match=match).outcome == "stale"


@pytest.mark.django_db
def test_check_all_checks_each_action_on_the_state_the_ones_before_it_left(drawer_match):
    from agents.services import _turn_context
    from games.base import IllegalAction

    match = drawer_match
    turn = _turn_context(match, "drawer", match.seq)
    view = get_game("codraw_v1").rules.view_for(match.state, "drawer")
    idx = next(p["idx"] for p in view["palette"] if not ca.is_human(p["idx"]))
    place = {"type": "place", "idx": idx, "x": 100, "y": 200, "depth": 1, "flip": 0}
    turn.check(place)   # alone, on the state at expected_seq: legal
    assert [a["type"] for a in turn.check_all([place, {"type": "update", "idx": idx, "x": 140}])] == \
        ["place", "update"]   # the update is legal only after the place
    with pytest.raises(IllegalAction) as refused:
        turn.check_all([place, place])
    assert refused.value.code == "already_placed" and refused.value.message.startswith("action 2 of 2 (place): ")
    with pytest.raises(IllegalAction):
        turn.check({"type": "update", "idx": idx, "x": 140})   # alone: nothing to move
