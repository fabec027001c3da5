"""VisDial's metrics as its evaluation code computes them (ranks by sort position), and scoring a
model's predictions on an exported file."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from clevr import metrics
from games.visdial import exports as vd_exports
from games.visdial import scoring
from tests.games.visdial.test_exports import visdial_record
from games.visdial import content as vd_content


def reference_scores_to_ranks(scores):
    """VisDial's ``scores_to_ranks`` procedure in torch: sort descending (stable), then the rank
    of the option at sorted position j is j + 1."""
    torch = pytest.importorskip("torch")
    s = torch.tensor(scores, dtype=torch.float64).view(1, 1, -1)
    batch, rounds, n = s.size()
    flat = s.view(-1, n)
    _, ranked_idx = flat.sort(dim=1, descending=True, stable=True)
    ranks = ranked_idx.clone().fill_(0)
    for i in range(ranked_idx.size(0)):
        for j in range(n):
            ranks[i][ranked_idx[i][j]] = j
    return (ranks + 1).view(-1).tolist()


@pytest.mark.parametrize("scores", [
    [0.1, 0.9, 0.5],
    [0.5, 0.5, 0.1],
    [1.0, 1.0, 1.0, 1.0],
    [0.0, 2.0, 2.0, -1.0, 2.0, 0.0],
    list(np.random.default_rng(3).integers(0, 4, size=100).astype(float)),   # many ties
    list(np.random.default_rng(4).normal(size=100)),
])
def test_ranks_match_the_reference_sort_positions(scores):
    ref = reference_scores_to_ranks(scores)
    assert metrics.scores_to_ranks(scores).tolist() == ref
    for gt in range(len(scores)):
        assert metrics.ranks_from_scores(scores, gt) == ref[gt]


def test_ties_rank_by_position_not_worst_case():
    # the old worst-case rule gave 2 for both tied options; the reference gives 1 and 2
    assert metrics.ranks_from_scores([0.5, 0.5, 0.1], 0) == 1
    assert metrics.ranks_from_scores([0.5, 0.5, 0.1], 1) == 2
    assert metrics.ranks_from_scores([0.1, 0.9, 0.5], 2) == 2
    assert metrics.scores_to_ranks([[3, 1, 2], [1, 1, 0]]).tolist() == [[1, 3, 2], [1, 2, 3]]


def test_ndcg_uses_the_same_ranking():
    rel = [0, 1.0, 0.5, 0, 0]
    # options 1 and 2 tie: sort position puts 1 first, which is the ideal order
    assert metrics.ndcg([0, 3, 3, 0, 0], rel) == pytest.approx(1.0)
    assert metrics.ndcg_from_ranks([3, 1, 2, 4, 5], rel) == pytest.approx(1.0)
    swapped = metrics.ndcg_from_ranks([3, 2, 1, 4, 5], rel)
    assert swapped == pytest.approx((0.5 + 1.0 / math.log2(3)) / (1.0 + 0.5 / math.log2(3)))
    assert math.isnan(metrics.ndcg([1, 2, 3], [0, 0, 0]))


@pytest.fixture(scope="module")
def export():
    recs = [visdial_record(vd_content.generate(s), s, f"score-{s}") for s in (11, 12)]
    return vd_exports.to_visdial(recs)


def oracle_predictions(export, *, miss_every: int = 0):
    """Rows ranking the ground truth first (or second every ``miss_every`` rounds), as scores."""
    rows = []
    k = 0
    for d in export["data"]["dialogs"]:
        for r, turn in enumerate(d["dialog"]):
            n = len(turn["answer_options"])
            scores = [0.0] * n
            scores[turn["gt_index"]] = 1.0
            if miss_every and k % miss_every == 0:
                other = (turn["gt_index"] + 1) % n
                scores[other] = 1.0                    # a tie: sort position decides
                if other > turn["gt_index"]:
                    scores[other] = 2.0
            rows.append({"image_id": d["image_id"], "round_id": r + 1, "scores": scores})
            k += 1
    return rows


def test_scoring_an_export(export, tmp_path):
    perfect = scoring.score(export, oracle_predictions(export))
    assert perfect["n"] == 20 and perfect["r@1"] == 1.0 and perfect["mrr"] == 1.0 and perfect["mean_rank"] == 1.0
    noisy = oracle_predictions(export, miss_every=4)
    result = scoring.score(export, noisy)
    expected = []
    rounds = {(d["image_id"], r + 1): t for d in export["data"]["dialogs"] for r, t in enumerate(d["dialog"])}
    for row in noisy:
        expected.append(metrics.ranks_from_scores(row["scores"], rounds[(row["image_id"], row["round_id"])]["gt_index"]))
    assert result == {**metrics.retrieval_metrics(expected), "ndcg": result["ndcg"], "n_dense": 0}
    assert 1.0 < result["mean_rank"] < 2.0
    # the EvalAI shape: ranks instead of scores
    ranked = [{"image_id": r["image_id"], "round_id": r["round_id"],
               "ranks": metrics.scores_to_ranks(r["scores"]).tolist()} for r in noisy]
    assert scoring.score(export, ranked) == result
    # dense relevance: the ground truth fully relevant, one other option half
    dense = []
    for d in export["data"]["dialogs"]:
        turn = d["dialog"][0]
        rel = [0.0] * 100
        rel[turn["gt_index"]] = 1.0
        rel[(turn["gt_index"] + 5) % 100] = 0.5
        dense.append({"image_id": d["image_id"], "round_id": 1, "gt_relevance": rel})
    with_dense = scoring.score(export, ranked, dense)
    assert with_dense["n_dense"] == 2 and 0 < with_dense["ndcg"] <= 1
    # the command
    paths = {}
    for name, obj in (("export", export), ("pred", ranked), ("dense", dense)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(obj))
    from io import StringIO
    out = StringIO()
    call_command("visdial_score", str(paths["export"]), str(paths["pred"]), "--dense", str(paths["dense"]),
                 "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["r@1"] == pytest.approx(with_dense["r@1"]) and printed["ndcg"] == pytest.approx(with_dense["ndcg"])


@pytest.mark.parametrize("bad,message", [
    ([{"image_id": 1, "round_id": 1, "ranks": list(range(1, 101))}], "not in the export"),
    ("dup", "predicted twice"),
    ("badranks", "permutation"),
    ([{"image_id": "x", "round_id": 1}], "integer image_id"),
    ({"not": "a list"}, "must be a list"),
])
def test_bad_predictions_are_refused(export, bad, message):
    d = export["data"]["dialogs"][0]
    row = {"image_id": d["image_id"], "round_id": 1, "ranks": list(range(1, 101))}
    if bad == "dup":
        bad = [row, row]
    elif bad == "badranks":
        bad = [{**row, "ranks": [1] * 100}]
    with pytest.raises(scoring.ScoringError, match=message):
        scoring.score(export, bad)


def test_command_errors_are_clear(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(CommandError, match="no such file"):
        call_command("visdial_score", str(missing), str(missing))


@pytest.mark.django_db(transaction=True)
def test_an_answerer_agent_scored_on_exported_dialogs(tmp_path):
    """ALICE ranks the options of dialogs ALICE answered: it finds its own answers (R@1 = 1); the
    noisy ALICE does not always; the side file leads to each dialog's scene."""
    from clevr.alice import Alice
    from live.models import Seat
    from research.records import match_record
    from live.services import SeatSpec, match_apply_action, match_create
    from games.visdial import rules as vd_rules

    human = SeatSpec(Seat.Kind.HUMAN)
    records = []
    for seed in (21, 22):
        match = match_create(game_id="visdial_v1", seed=seed, config={"rounds": 10},
                             seats={"questioner": human, "answerer": human})
        for k, q in enumerate(["how many cubes?", "is there a red thing?", "what color is the leftmost thing?",
                               "how many small things?", "are there any metal cylinders?", "what shape is it?",
                               "how many spheres are there?", "what color are they?", "is there a blue cube?",
                               "how many things are there?"]):
            match.refresh_from_db()
            match_apply_action(match_id=match.id, role="questioner", action={"type": "ask", "text": q},
                               client_action_id=f"q{k}", expected_seq=match.seq)
            match.refresh_from_db()
            action = Alice().act(vd_rules.view_for(match.state, "answerer"))
            match_apply_action(match_id=match.id, role="answerer", action=action, client_action_id=f"a{k}",
                               expected_seq=match.seq)
        match.refresh_from_db()
        records.append(match_record(match))
    export_path, side_path = tmp_path / "visdial.json", tmp_path / "ids.json"
    export_path.write_text(json.dumps(vd_exports.to_visdial(records)))
    side_path.write_text(json.dumps(vd_exports.image_id_map(records)))

    def run(agent):
        from io import StringIO
        out = StringIO()
        call_command("visdial_score", str(export_path), "--agent", agent, "--image-ids", str(side_path),
                     "--json", stdout=out)
        return json.loads(out.getvalue())

    exact = run("visdial_alice_exact")
    assert exact["n"] == 20 and exact["r@1"] == 1.0 and exact["mean_rank"] == 1.0
    noisy = run("visdial_alice_noisy")
    assert noisy["n"] == 20 and noisy["r@1"] < 1.0 and noisy["mean_rank"] > 1.0
    with pytest.raises(CommandError, match="not an answerer"):
        run("visdial_qbot")
    with pytest.raises(CommandError, match="needs --image-ids"):
        call_command("visdial_score", str(export_path), "--agent", "visdial_alice_exact")
    side_path.write_text(json.dumps({"format": "x", "images": [{"image_id": 1, "match_id": "nope"}]}))
    with pytest.raises(CommandError, match="cannot exist|not in this database"):
        run("visdial_alice_exact")
