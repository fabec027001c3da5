"""QBot: reading answers, belief over the pool, questions, and beating a random guesser."""
from __future__ import annotations

import pytest

from clevr.alice import Alice, execute, parse_question, replay
from clevr.metrics import compare_versions, mean_rank
from clevr.qbot import QBot, candidate_questions, consistent, interpret
from games.guesswhich import agents as gw_agents
from games.guesswhich import content as gw_content
from games.guesswhich import rules


def test_interpret_reads_human_and_bot_answers():
    assert interpret("yes")["polarity"] is True
    assert interpret("No, there are 3")["polarity"] is False
    assert interpret("No, there are 3")["number"] == 3
    assert interpret("three of them")["number"] == 3
    assert interpret("none")["number"] == 0
    assert interpret("It's a shiny red ball")["values"] == {"material": {"metal"}, "color": {"red"},
                                                            "shape": {"sphere"}}
    assert interpret("I can't tell.")["refusal"] == "unknown"
    assert interpret("I can't tell which cube you mean; I see 2.")["refusal"] == "ambiguous"
    assert interpret("There are four things to the right of the cyan cube; which one do you mean?")["refusal"] == \
        "ambiguous"
    assert interpret("There aren't any purple things.")["refusal"] == "missing"
    assert interpret("I don't see any purple cube.")["refusal"] == "missing"


def test_consistent_compares_a_prediction_with_an_answer(scene5):
    disc = replay(scene5, None, [])
    count = execute(parse_question("how many cubes are there?"), scene5, disc)
    assert consistent(count, "2") is True and consistent(count, "there are three") is False
    assert consistent(count, "I can't tell.") is None
    color = execute(parse_question("what color is the large cube?"), scene5, disc)
    assert consistent(color, "red") is True and consistent(color, "it is blue") is False
    described = execute(parse_question("what is the leftmost object?"), scene5, disc)
    assert consistent(described, "a big red ball") is True
    assert consistent(described, "a cube") is False
    missing = execute(parse_question("what color is the purple cube?"), scene5, disc)
    assert consistent(missing, "I don't see any purple cube.") is True
    assert consistent(missing, "red") is False


def test_candidate_questions_cover_clevr_dialog_kinds():
    dialog = [{"question": "How many things are to its left?", "answer": "2"}]
    fams = {fam for _, fam in candidate_questions(dialog, "A large red cube is present in the image.")}
    assert {"count-all", "count-attr", "exist-attr", "seek-extreme", "seek-attr-imm",
            "count-obj-rel-imm2", "seek-attr-rel-imm", "seek-attr-early"} <= fams
    for q, _ in candidate_questions(dialog, "A large red cube is present in the image."):
        assert parse_question(q)[0] != "fail", q  # ALICE understands every QBot question


def _play(content, seed, qbot, alice):
    state = rules.initial_state(content, seed, {"rounds": 9})
    t = 0
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        action = (qbot if role == "questioner" else alice).act(rules.view_for(state, role))
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})
    return rules.outcome(state)


@pytest.fixture(scope="module")
def contents():
    return [gw_content.generate(200 + k, {"pool_size": 20, "difficulty": "medium"}) for k in range(12)]


def test_qbot_with_exact_alice_beats_a_random_guesser(contents):
    alice = Alice()
    smart = [_play(c, k, QBot(), alice) for k, c in enumerate(contents)]
    rand = [_play(c, k, QBot(name="qbot_random", strategy="random"), alice) for k, c in enumerate(contents)]
    smart_ranks = [o["rank"] for o in smart]
    rand_ranks = [o["rank"] for o in rand]
    assert all(o["found"] for o in smart + rand)
    assert mean_rank(smart_ranks) <= 3.0, smart_ranks
    assert mean_rank(smart_ranks) + 4 < mean_rank(rand_ranks), (smart_ranks, rand_ranks)
    assert compare_versions(smart_ranks, rand_ranks)["p_value"] < 0.01
    # the belief sharpens over the dialog: the late coarse ranks beat the first round's
    curve = gw_agents.summary(smart)["per_round_mean_coarse_rank"]
    assert curve[-1] < curve[0]
    text = gw_agents.summarize(smart)
    assert "mean rank" in text and "MRR" in text


def test_qbot_belief_follows_the_answers(contents):
    content = contents[0]
    state = rules.initial_state(content, 0, {"rounds": 9})
    qbot, alice = QBot(), Alice()
    t = 0
    while state["phase"] != "final":
        role = rules.to_act(state)[0]
        action = (qbot if role == "questioner" else alice).act(rules.view_for(state, role))
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})
    belief = qbot.belief(rules.view_for(state, "questioner"))
    assert abs(sum(belief.values()) - 1) < 1e-9
    assert max(belief, key=belief.get) == content["secret_id"]
    assert belief[content["secret_id"]] > 0.5


def test_qbot_is_stateless_and_deterministic(contents):
    state = rules.initial_state(contents[1], 1, {"rounds": 9})
    view = rules.view_for(state, "questioner")
    assert QBot().act(view) == QBot().act(view)
    assert QBot().act(rules.view_for(state, "answerer")) is None
