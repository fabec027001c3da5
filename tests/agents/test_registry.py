"""In-process agents are built when their Celery worker starts (agents.registry.warm_up_for_worker,
connected to worker_ready in groundtalk_web/celery.py), not inside their first turn: the CoDraw
nearest-neighbour agents generate their database of dialogs when built."""
from __future__ import annotations

from types import SimpleNamespace

from agents import registry
from games.codraw import agents as codraw_agents


def _consumer(queues):
    return SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(
        consume_from={q: object() for q in queues}))))


def test_a_worker_builds_the_agents_of_its_queues_at_start(monkeypatch):
    monkeypatch.setattr(registry, "_built", {})
    assert registry.worker_agents(["agent.codraw_rule_drawer", "agent.codraw_nn_teller", "control"]) == [
        "codraw_rule_drawer", "codraw_nn_teller"]
    assert registry.worker_agents(["control"]) == []
    built = []
    monkeypatch.setattr(codraw_agents, "database_for", lambda *a, **k: built.append(a) or codraw_agents.Database([]))
    registry.warm_up_for_worker(_consumer(["agent.codraw_rule_drawer", "agent.codraw_nn_teller"])).join(60)
    assert set(registry._built) == {"codraw_rule_drawer", "codraw_nn_teller"} and built == [("teller", None, 150)]
    teller = registry._built["codraw_nn_teller"]
    assert registry.agent_instance("codraw_nn_teller") is teller and len(built) == 1    # the first turn builds nothing


def test_an_agent_that_fails_to_build_is_left_to_its_first_turn(monkeypatch, caplog):
    monkeypatch.setattr(registry, "_built", {})

    def broken(*a, **k):
        raise OSError("no database")

    monkeypatch.setattr(codraw_agents, "database_for", broken)
    took = registry.warm_up(["codraw_nn_drawer", "codraw_rule_teller"])
    assert list(took) == ["codraw_rule_teller"] and "codraw_nn_drawer" not in registry._built
    assert "codraw_nn_drawer could not be built" in caplog.text


def test_a_turn_never_waits_for_another_agent_being_built(monkeypatch):
    import threading

    monkeypatch.setattr(registry, "_built", {})
    release, started = threading.Event(), threading.Event()

    def slow(*a, **k):
        started.set()
        release.wait(60)
        return codraw_agents.Database([])

    monkeypatch.setattr(codraw_agents, "database_for", slow)
    warming = threading.Thread(target=registry.warm_up, args=(["codraw_nn_drawer"],))
    warming.start()
    assert started.wait(60)
    other = threading.Thread(target=registry.agent_instance, args=("codraw_rule_drawer",))
    other.start()
    other.join(30)                     # it would block until release with one lock for all names
    try:
        assert not other.is_alive() and "codraw_rule_drawer" in registry._built
        assert warming.is_alive() and "codraw_nn_drawer" not in registry._built
    finally:
        release.set()
        warming.join(60)
    assert "codraw_nn_drawer" in registry._built


def test_a_worker_warms_the_games_of_its_agents_first(monkeypatch):
    """A colour agent's worker imports colour-science at start-up (the game's ``warm_up``:
    games/colors/content.py imports it on first use), not inside the first turn."""
    from games.colors import content

    monkeypatch.setattr(registry, "_built", {})
    warmed = []
    monkeypatch.setattr(content, "warm_up", lambda: warmed.append("colors_v1"))
    took = registry.warm_up(["colors_lexicon_speaker", "codraw_rule_teller"])
    assert warmed == ["colors_v1"]                       # once, for the colour agent's game only
    assert list(took)[:1] == ["game colors_v1"] and {"colors_lexicon_speaker", "codraw_rule_teller"} <= set(took)
