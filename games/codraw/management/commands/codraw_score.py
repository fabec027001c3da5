"""Score CoDraw scene pairs with the scene similarity metric (games/codraw/metric.py).

    python manage.py codraw_score TARGET PRED          # one pair: prints the score
    python manage.py codraw_score --pairs pairs.jsonl  # JSON lines {"target": ..., "pred": ...}
    python manage.py codraw_score --pairs -            # the same from standard input

Scene strings are in the Abstract Scenes format of CoDraw_1_0.json (``abs_t``, ``abs_d``), read
as the authors' reader reads them (scenes.parse_scene: ``"0,,"`` is an empty scene, fields after
the counted pieces and the png/slot fields are not read). Each
score is printed on its own line at full precision (``repr`` of the float), one per input pair in
input order; blank lines in the pairs file are skipped. Malformed input stops with an error that
names the line (``line 3: ...``) and prints nothing for that file.
"""
from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from games.codraw.metric import scene_similarity
from games.codraw.scenes import SceneFormatError, parse_scene


def _scene(text, what: str, where: str):
    if not isinstance(text, str):
        raise CommandError(f"{where}{what} must be a scene string, not {type(text).__name__}")
    try:
        return parse_scene(text)
    except SceneFormatError as exc:
        raise CommandError(f"{where}{what} is not a valid scene string: {exc}") from None


def score_pairs(lines) -> list[float]:
    """Scores of the JSON-lines pairs in ``lines`` (raises CommandError naming the bad line)."""
    scores = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {number}: "
        try:
            pair = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{where}not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(pair, dict):
            raise CommandError(f"{where}expected a JSON object {{\"target\": ..., \"pred\": ...}}")
        missing = [key for key in ("target", "pred") if key not in pair]
        if missing:
            raise CommandError(f"{where}missing {', '.join(repr(k) for k in missing)}")
        target = _scene(pair["target"], "\"target\"", where)
        pred = _scene(pair["pred"], "\"pred\"", where)
        scores.append(scene_similarity(pred, target))
    return scores


class Command(BaseCommand):
    help = "Print the CoDraw scene similarity (0-5) of scene pairs, one score per line."

    def add_arguments(self, parser):
        parser.add_argument("target", nargs="?", help="target scene string (abs_t)")
        parser.add_argument("pred", nargs="?", help="predicted (drawn) scene string (abs_d)")
        parser.add_argument("--pairs", metavar="FILE",
                            help="JSON lines {\"target\": scene, \"pred\": scene}; - for stdin")

    def handle(self, *args, **opts):
        if opts["pairs"]:
            if opts["target"] is not None or opts["pred"] is not None:
                raise CommandError("give either --pairs FILE or TARGET PRED, not both")
            if opts["pairs"] == "-":
                scores = score_pairs(sys.stdin)
            else:
                try:
                    with open(opts["pairs"], encoding="utf-8") as handle:
                        scores = score_pairs(handle)
                except OSError as exc:
                    raise CommandError(f"cannot read {opts['pairs']}: {exc.strerror}") from None
                except UnicodeDecodeError as exc:
                    raise CommandError(f"{opts['pairs']} is not UTF-8 text: {exc.reason}") from None
            for score in scores:
                self.stdout.write(repr(score))
            return
        if opts["target"] is None or opts["pred"] is None:
            raise CommandError("give TARGET and PRED scene strings, or --pairs FILE")
        target = _scene(opts["target"], "TARGET", "")
        pred = _scene(opts["pred"], "PRED", "")
        self.stdout.write(repr(scene_similarity(pred, target)))
