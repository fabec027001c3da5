"""Score ranked answers on an exported VisDial file (see :mod:`games.visdial.scoring`).

    python manage.py visdial_score visdial.json predictions.json [--dense dense.json] [--json]
    python manage.py visdial_score visdial.json --agent visdial_alice_exact --image-ids visdial-ids.json

The second form scores an answerer agent on the exported (e.g. human) dialogs: it answers each
round about the scene the dialog was played on (the side file's match id leads to the match's
content) and ranks the 100 options by their similarity to its answer.
"""
from __future__ import annotations

import json
import math

from django.core.management.base import BaseCommand, CommandError

from agents.registry import UnknownAgent, get_agent_spec
from live.models import Match
from games.visdial.scoring import ScoringError, load_json, answerer_predictions, score


def dialog_images(side: dict) -> dict:
    """image_id -> {"scene", "caption"} for the rows of a visdial-image-ids side file, read from
    the matches' content (a GuessWhich dialog's image is its secret)."""
    rows = side.get("images") if isinstance(side, dict) else None
    if not isinstance(rows, list):
        raise ScoringError("the image-ids file is not a visdial-image-ids side file")
    ids = [r.get("match_id") for r in rows if isinstance(r, dict)]
    try:
        contents = dict(Match.objects.filter(id__in=ids).values_list("id", "content"))
    except Exception as exc:  # noqa: BLE001 - malformed ids (not UUIDs)
        raise ScoringError(f"the image-ids file names matches that cannot exist ({exc})") from None
    contents = {str(k): v for k, v in contents.items()}
    out = {}
    for r in rows:
        content = contents.get(str(r.get("match_id")))
        if content is None:
            raise ScoringError(f"match {r.get('match_id')} of the image-ids file is not in this database")
        scene = content.get("scene")
        if scene is None and "pool" in content:
            scene = next((p["scene"] for p in content["pool"] if p["id"] == content.get("secret_id")), None)
        out[r["image_id"]] = {"scene": scene or {}, "caption": content.get("caption")}
    return out


class Command(BaseCommand):
    help = "VisDial's metrics (R@1/5/10, mean rank, MRR, NDCG) of predictions, or of an answerer agent, on an exported VisDial file."

    def add_arguments(self, parser):
        parser.add_argument("export", help="a --format visdial (or guesswhich-visdial) export")
        parser.add_argument("predictions", nargs="?", default="", help="[{image_id, round_id, ranks | scores}, ...]")
        parser.add_argument("--dense", default="", help="[{image_id, round_id, gt_relevance}, ...] for NDCG")
        parser.add_argument("--agent", default="", help="score this answerer agent instead of a predictions file")
        parser.add_argument("--image-ids", default="", help="with --agent: the export's visdial-image-ids side file")
        parser.add_argument("--json", action="store_true", help="print the metrics as one JSON object")

    def handle(self, *args, **opts):
        if bool(opts["predictions"]) == bool(opts["agent"]):
            raise CommandError("Give a predictions file or --agent (with --image-ids), not both.")
        try:
            export = load_json(opts["export"])
            dense = load_json(opts["dense"]) if opts["dense"] else None
            if opts["agent"]:
                if not opts["image_ids"]:
                    raise CommandError("--agent needs --image-ids (the export's visdial-image-ids side file)")
                try:
                    spec = get_agent_spec(opts["agent"])
                except UnknownAgent as exc:
                    raise CommandError(str(exc)) from None
                agent = spec.build()
                if spec.role != "answerer" or not hasattr(agent, "respond"):
                    raise CommandError(f"{opts['agent']} is not an answerer that can be asked questions")
                predictions = answerer_predictions(export, dialog_images(load_json(opts["image_ids"])), agent)
            else:
                predictions = load_json(opts["predictions"])
            result = score(export, predictions, dense)
        except ScoringError as exc:
            raise CommandError(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v)
                                          for k, v in result.items()}))
            return
        self.stdout.write(f"rounds scored: {result['n']}")
        for key in ("r@1", "r@5", "r@10", "mean_rank", "mrr"):
            self.stdout.write(f"{key}: {result[key]:.4f}")
        if result["n_dense"]:
            self.stdout.write(f"ndcg: {result['ndcg']:.4f} (over {result['n_dense']} annotated rounds)")
