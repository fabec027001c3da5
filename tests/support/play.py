"""Real matches of each game, played through the one write path (live.services), for the monitor's
tests (unit and browser)."""
from __future__ import annotations

from live.models import Match, Seat
from live.services import SeatSpec, match_apply_action, match_create


def seats(roles, agents: dict | None = None) -> dict:
    agents = agents or {}
    return {r: SeatSpec(Seat.Kind.AGENT, agent_name=agents[r]) if r in agents else SeatSpec(Seat.Kind.HUMAN)
            for r in roles}


def act(match, role, action):
    return match_apply_action(match_id=match.id, role=role, action=action)


def colors(batch=None, *, rounds=2, hits=(True, False), agents=None, seed=7, finish=True) -> Match:
    """A colors match whose listener clicks the target in the rounds ``hits`` says."""
    m = match_create(game_id="colors_v1", seats=seats(("speaker", "listener"), agents), batch=batch, seed=seed,
                     config={"rounds": rounds}, wake_agents=False)
    for k in range(rounds if finish else rounds - 1):
        m.refresh_from_db()
        positions = m.state["rounds"][m.state["round"]]["positions"]["listener"]
        act(m, "speaker", {"type": "chat", "text": f"the color number {k + 1}"})
        act(m, "listener", {"type": "click", "round": k + 1, "position": positions[0] if hits[k] else positions[1]})
    m.refresh_from_db()
    return m


def guesswhich(batch=None, *, agents=None, seed=3, wrong_first=1) -> Match:
    """A two-round GuessWhich match over a pool of 6: the round guesses miss, the final clicks
    find the secret after ``wrong_first`` wrong ones (rank ``wrong_first + 1``)."""
    m = match_create(game_id="guesswhich_v1", seats=seats(("questioner", "answerer"), agents), batch=batch,
                     seed=seed, config={"rounds": 2, "pool_size": 6}, wake_agents=False)
    secret = m.content["secret_id"]
    others = [p["id"] for p in m.content["pool"] if p["id"] != secret]
    for r in range(2):
        act(m, "questioner", {"type": "ask", "text": f"is there a red cube, question {r + 1}?"})
        act(m, "answerer", {"type": "answer", "text": "yes, a small one" if r else "no"})
        act(m, "questioner", {"type": "guess", "image_id": others[r]})
    for k in range(wrong_first):
        act(m, "questioner", {"type": "guess", "image_id": others[k]})
    act(m, "questioner", {"type": "guess", "image_id": secret})
    act(m, "questioner", {"type": "skip_feedback"})
    m.refresh_from_db()
    return m


def visdial(batch=None, *, rounds=2, seed=4) -> Match:
    m = match_create(game_id="visdial_v1", seats=seats(("questioner", "answerer")), batch=batch, seed=seed,
                     config={"rounds": rounds}, wake_agents=False)
    for r in range(rounds):
        act(m, "questioner", {"type": "ask", "text": f"what color is object {r + 1}?"})
        act(m, "answerer", {"type": "answer", "text": "it is blue"})
    m.refresh_from_db()
    return m


def codraw(batch=None, *, seed=5, pieces=1) -> Match:
    """A CoDraw match: the Teller describes, the Drawer places ``pieces`` pieces of the target where
    they are, replies, and the Teller ends the game."""
    m = match_create(game_id="codraw_v1", seats=seats(("teller", "drawer")), batch=batch, seed=seed, config={},
                     wake_agents=False)
    from games.codraw.rules import canvas_actions, canvas_scene, target_scene

    act(m, "teller", {"type": "chat", "text": "there is a tree on the left and a sun above it"})
    m.refresh_from_db()
    for action in canvas_actions(canvas_scene(m.state), target_scene(m.state))[:pieces]:
        act(m, "drawer", action)
    act(m, "drawer", {"type": "chat", "text": "done, what next?"})
    act(m, "teller", {"type": "end"})
    m.refresh_from_db()
    return m
