"""``manage.py codraw_score``: scene similarity of scene pairs (no database needed)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from games.codraw.metric import scene_similarity

# the CoDraw README's target scene and the README Drawer's canvas after its first round
TARGET = ("7,s_3s.png,0,3,0,469,31,2,0,p_7s.png,1,7,1,178,89,2,1,hb0_10s.png,2,10,2,100,250,1,0,"
          "hb1_4s.png,3,4,3,391,248,1,1,a_4s.png,4,4,4,205,98,1,0,c_7s.png,5,7,5,87,181,1,0,"
          "t_4s.png,6,4,7,279,115,1,1")
# Mike (hb0_10) and the soccer ball (t_4) where the target has them, Jenny with another subtype
PRED = ("3,hb0_10s.png,0,10,2,100,250,1,0,hb1_18s.png,1,18,3,128,269,0,0,t_4s.png,2,4,7,279,115,1,1,")
SWAPPED = "2,hb0_10s.png,0,10,2,400,250,1,0,hb1_4s.png,1,4,3,100,248,1,1"


def run(*args, stdin: str | None = None) -> list[str]:
    out = io.StringIO()
    if stdin is not None:
        import sys
        old, sys.stdin = sys.stdin, io.StringIO(stdin)
        try:
            call_command("codraw_score", *args, stdout=out)
        finally:
            sys.stdin = old
    else:
        call_command("codraw_score", *args, stdout=out)
    return out.getvalue().splitlines()


def test_one_pair():
    assert run(TARGET, TARGET) == ["5.0"]
    assert run(TARGET, "") == ["0.0"]
    # 3 of the 7 target pieces (5 * 3/7 at best): Mike and the ball exact, Jenny in another pose,
    # expression, size and place
    expected = scene_similarity(PRED, TARGET)
    assert run(TARGET, PRED) == [repr(expected)]
    assert 0.5 < expected < 2.0


def test_what_the_reference_reader_accepts():
    """The authors' reader (abs_util_orig.AbsUtil) reads "0,," as an empty scene, skips the png
    and slot fields, and never reads what follows the counted pieces."""
    assert run(TARGET, "0,,") == ["0.0"]
    assert run("0,,", "") == ["0.0"]
    assert run(TARGET, PRED + ",,junk") == [repr(scene_similarity(PRED, TARGET))]
    renamed = PRED.replace("hb0_10s.png,0", "whatever,x")
    assert run(TARGET, renamed) == [repr(scene_similarity(PRED, TARGET))]
    with pytest.raises(CommandError, match="needs 9 fields"):
        run(TARGET, "1,s_3s.png,0,3,0,1,1")


def test_known_values():
    # two people with swapped places: each order wrong in x, the y order kept; flips, depths fine
    # n0 = 2, U = 2 -> 5; n5 = 2 * min(1, 300/500) = 1.2 -> -0.6; n6 = 1 of 2*1 -> -0.5
    two = "2,hb0_10s.png,0,10,2,100,250,1,0,hb1_4s.png,1,4,3,400,248,1,1"
    assert run(two, SWAPPED) == [repr(5.0 - 1.2 / 2 - 1 / 2)]


def test_pairs_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    lines = [json.dumps({"target": TARGET, "pred": TARGET}), "",
             json.dumps({"target": TARGET, "pred": PRED}),
             json.dumps({"pred": "", "target": TARGET})]
    path.write_text("\n".join(lines) + "\n")
    assert run("--pairs", str(path)) == ["5.0", repr(scene_similarity(PRED, TARGET)), "0.0"]
    assert run("--pairs", "-", stdin="\n".join(lines)) == ["5.0", repr(scene_similarity(PRED, TARGET)), "0.0"]


@pytest.mark.parametrize("line, message", [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: expected a JSON object"),
    (json.dumps({"target": TARGET}), "line 2: missing 'pred'"),
    (json.dumps({"target": TARGET, "pred": 7}), "line 2: \"pred\" must be a scene string, not int"),
    (json.dumps({"target": "2,s_3s.png,0,3,0,1,1,0,0", "pred": ""}),
     "line 2: \"target\" is not a valid scene string: a scene of 2 pieces needs 17 fields; this one has only 9"),
    (json.dumps({"target": TARGET, "pred": "1,s_3s.png,0,3,0,x,1,0,0"}),
     "line 2: \"pred\" is not a valid scene string: piece 0: x 'x' is not a number"),
])
def test_malformed_pairs_name_the_line(tmp_path, line, message):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"target": TARGET, "pred": TARGET}) + "\n" + line + "\n")
    out = io.StringIO()
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace("[", r"\[")):
        call_command("codraw_score", "--pairs", str(path), stdout=out)
    assert out.getvalue() == ""                     # nothing printed for a bad file


def test_argument_errors(tmp_path):
    with pytest.raises(CommandError, match="give TARGET and PRED"):
        call_command("codraw_score", TARGET)
    with pytest.raises(CommandError, match="not both"):
        call_command("codraw_score", TARGET, TARGET, "--pairs", "x.jsonl")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("codraw_score", "--pairs", str(tmp_path / "missing.jsonl"))
    with pytest.raises(CommandError, match="PRED is not a valid scene string"):
        call_command("codraw_score", TARGET, "3,nonsense")
