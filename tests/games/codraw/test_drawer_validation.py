"""The hand-written CoDraw Drawer validation set and its scorer (games/codraw/drawer_validation.py)."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from games.codraw import agents
from games.codraw import clipart as ca
from games.codraw import drawer_validation as dv
from games.codraw.scenes import Piece

ISSUE_EXAMPLES = ("a big tree on the left", "a sun in the top right corner", "a boy standing in the middle",
                  "on", "not yet", "ok", "hmm let me look")


@pytest.fixture(scope="module")
def items():
    return dv.load()


@pytest.fixture(scope="module")
def rule_report(items):
    return dv.evaluate(agents.RuleDrawer(), items, name="rule")


def _by_text(items, text):
    return next(item for item in items if item.text == text)


# ------------------------------------------------------------------------------------------ the set
def test_the_set_has_every_category_and_the_issue_examples(items):
    assert len(items) >= 150
    counts = dv.counts(items)
    assert set(counts) == set(dv.CATEGORIES)
    for tag, count in counts.items():
        assert count >= (7 if tag == "issue" else 8), (tag, count)
    assert counts["nothing"] >= 25
    texts = {item.text for item in items}
    assert set(ISSUE_EXAMPLES) <= texts
    for item in items:
        assert item.abstain == ("nothing" in item.tags)
    assert {item.batch for item in items} == set(dv.BATCHES)


def test_scenes_are_in_the_game_representation(items):
    tree = _by_text(items, "a big tree on the left").pieces[0]
    assert tree.piece == Piece(idx=16, x=95, y=190, depth=0, flip=0)
    assert tree.said == {"place", "size"}
    boy = _by_text(items, "a boy standing in the middle").pieces[0]
    assert boy.piece.idx == ca.MIKE and ca.POSES[boy.piece.pose] == "arms out"
    assert boy.said == {"place", "pose"}
    # a worn piece sits where the art's anchors put it, with its wearer's size and facing
    item = _by_text(items, "jenny wears a baseball cap, she is on the right facing left")
    jenny, cap = (e.piece for e in item.pieces)
    assert cap.idx == ca.NAMES.index("cap") and (cap.depth, cap.flip) == (jenny.depth, jenny.flip) == (1, 1)
    head = ca.anchor_point(ca.JENNY, jenny.subtype, "hat", jenny.x, jenny.y, jenny.depth, jenny.flip)
    wear = ca.anchor_point(cap.idx, 0, "wear", cap.x, cap.y, cap.depth, cap.flip)
    assert max(abs(head[0] - wear[0]), abs(head[1] - wear[1])) <= 1
    # the scene string reads back
    assert dv.parse_line('{"id": "x", "text": "t", "tags": ["names"], "pieces": [{"name": "sun", "x": 1, '
                         '"y": 2}]}').scene_string.startswith("1,")


@pytest.mark.parametrize("line, error", [
    ('{"id": "x", "text": "a tre", "tags": ["names"], "pieces": [{"name": "tre", "x": 1, "y": 1}]}',
     "not a clip art's canonical name"),
    ('{"id": "x", "text": "ok", "tags": ["nothing"], "pieces": [{"name": "sun", "x": 1, "y": 1}]}',
     "tagged 'nothing'"),
    ('{"id": "x", "text": "a hat", "tags": ["worn"], "pieces": [{"name": "cap", "on": "Mike\'s head"}]}',
     "list the wearer before"),
    ('{"id": "x", "text": "a hat", "tags": ["worn"], "pieces": [{"name": "Mike", "x": 1, "y": 1}, '
     '{"name": "cap", "on": "Mike\'s knee"}]}', "head|face|hand"),
    ('{"id": "x", "text": "a sun", "tags": ["sky"], "pieces": []}', "tags must be"),
    ('{"id": "x", "text": "a sun", "tags": ["names"], "pieces": [{"name": "sun", "x": 900, "y": 1}]}',
     "off the 500x400 canvas"),
    ('{"id": "x", "text": "a sun", "tags": ["names"], "pieces": [{"name": "sun", "x": 1, "y": 1, '
     '"pose": "sitting"}]}', "only Mike and Jenny"),
    ('{"id": "x", "text": "a sun", "tags": ["names"], "pieces": [{"name": "sun", "x": 1, "y": 1, '
     '"colour": "red"}]}', "unknown keys"),
    ("not json", "not JSON"),
])
def test_bad_lines_get_a_clear_error(line, error):
    with pytest.raises(dv.ValidationSetError, match=re.escape(error)):
        dv.parse_line(line, "set.jsonl:3")


def test_repeated_messages_are_refused(tmp_path):
    line = '{"id": "%s", "text": "ok", "tags": ["nothing"], "pieces": []}\n'
    path = tmp_path / "set.jsonl"
    path.write_text(line % "a" + line % "b")
    with pytest.raises(dv.ValidationSetError, match="repeated texts"):
        dv.load(path)


# ------------------------------------------------------------------------------------------ scoring
def test_scoring_the_scene_itself_is_perfect_and_mistakes_count(items):
    item = _by_text(items, "sitting boy on the left in a witch hat, sad")
    exact = dv.score_item(item, [e.piece for e in item.pieces]).summary()
    assert exact["clipart"] == 1 and exact["position"] == 0 and exact["score"] == pytest.approx(5.0)
    assert exact["expr_pose"] == exact["on_wearer"] == exact["order"] == 1
    boy, hat = (e.piece for e in item.pieces)
    cap = Piece(idx=ca.NAMES.index("cap"), x=hat.x, y=hat.y, depth=hat.depth)    # "witch hat" is not a cap
    wrong = dv.score_item(item, [boy.moved(subtype=ca.subtype_of(0, 3)), cap]).summary()
    assert wrong["clipart"] == 0 and wrong["recall"] == 0.5 and wrong["on_wearer"] == 0
    assert wrong["expr_pose"] == 0.5                  # the pose is wrong, the expression right
    off = dv.score_item(item, [boy, hat.moved(x=hat.x + 100)]).summary()
    assert off["clipart"] == 1 and off["on_wearer"] == 0
    nothing = _by_text(items, "hmm let me look")
    assert dv.score_item(nothing, []).summary()["abstain"] == 1
    assert dv.score_item(nothing, [boy]).summary()["abstain"] == 0


def test_an_empty_drawer_abstains_everywhere_and_draws_nothing_right(items):
    class Silent:
        def act(self, view):
            mine = view.get("role") == "drawer" and view.get("your_turn") and not view.get("over")
            return {"type": "chat", "text": "ok"} if mine else None

    few = [item for item in items if item.id in ("v001", "v004", "v123")]
    report = dv.evaluate(Silent(), few, name="silent")
    assert report.categories["nothing"]["abstain"] == 1
    assert report.categories["all"]["drew"] == 0 and report.categories["all"]["clipart"] == 0


# ----------------------------------------------------------------------------------- the rule Drawer
def test_the_rule_drawer_keeps_every_stated_detail(rule_report, items):
    for batch in ("batch a", "batch b"):           # the batches the rule Drawer's fixes looked at
        figures = rule_report.categories[batch]
        for key in ("size", "facing", "expr_pose", "on_wearer", "abstain"):
            assert figures[key] == 1, (batch, key, figures[key])
    batches = {item.id: item.batch for item in items}
    typos = [row for row in rule_report.per_item if "typos" in row["tags"] and batches[row["id"]] in "ab"]
    assert typos and all(row["clipart_right"] for row in typos)
    drawn = {row["id"]: {p["idx"] for p in row["drawn"]} for row in rule_report.per_item}
    for item in items:
        if any(e.piece.idx == ca.NAMES.index("witch hat") for e in item.pieces):
            assert ca.NAMES.index("cap") not in drawn[item.id], item.text
    for text in ISSUE_EXAMPLES:
        item = _by_text(items, text)
        assert drawn[item.id] == {e.piece.idx for e in item.pieces}, text


def test_the_rule_teller_phrasing_is_scored_the_same_way(items):
    few = [item for item in items if item.id in ("v001", "v004", "v109", "v123")]
    report = dv.evaluate(agents.RuleDrawer(), few, name="rule", phrasing="rule_teller")
    assert report.categories["all"]["items"] == 3                      # nothing to say for "on"
    assert report.categories["all"]["clipart"] == 1
    assert report.categories["expression_pose"]["expr_pose"] == 1
    with pytest.raises(ValueError, match="phrasing"):
        dv.draw(agents.RuleDrawer(), few[0], phrasing="llm")


def test_table_and_plot(rule_report, items, tmp_path):
    text = dv.table(rule_report)
    nothing = rule_report.categories["nothing"]["items"]
    assert f"| nothing | {nothing} | – |" in text and "| 100% | – | – |" in text
    both = dv.compare([rule_report, rule_report])
    assert both.count("\n") == 3 and both.splitlines()[2].startswith(f"| rule | human | {len(items)} |")
    rows = dv.by_category([rule_report])
    assert rows.count("\n") == len(rule_report.categories) + 1 and f"| nothing | {nothing} | abstain 100% |" in rows
    assert "Batch c only" in dv.report_markdown([rule_report])
    path = tmp_path / "plot.png"
    dv.plot([rule_report], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------- never trained on
def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


def test_no_neural_training_module_reads_the_set():
    neural = Path(dv.__file__).with_name("neural")
    for path in neural.glob("*.py"):
        assert "drawer_validation" not in path.read_text(), path


def test_the_neural_training_data_holds_none_of_its_messages(items):
    """The generator's messages (a sample of its training examples, and of its messages that name
    nothing when it has them) include no message of the set; one- and two-word chat (``ok``,
    ``not yet``) is common to any list of such words and is allowed."""
    data = pytest.importorskip("games.codraw.neural.data")
    generated = {_norm(example["text"]) for example in data.make_examples("train", 12)}
    if hasattr(data, "nothing_message"):
        generated |= {_norm(data.nothing_message(random.Random(k))) for k in range(2000)}
    held = {_norm(item.text) for item in items}
    shared = sorted(text for text in generated & held if len(text.split()) > 2)
    assert not shared, f"the neural training data contains validation messages: {shared}"
