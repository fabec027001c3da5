"""CoDraw Drawers on the hand-written validation set (games/codraw/drawer_validation.py).

    python manage.py codraw_drawer_validation [--drawer rule --drawer neural --drawer nn] \
        [--checkpoint models/codraw/codraw_neural_drawer.pt] [--phrasing both|human|rule_teller] \
        [--set games/codraw/data/drawer_validation.jsonl] [--json var/codraw_drawer_validation.json] \
        [--plot docs/games/codraw_drawer_validation.png] [--doc docs/games/codraw_agents.md]

Plays each Drawer on every message of the set (alone, on an empty canvas, the whole library as
its palette) and, with ``--phrasing both`` (the default), on the rule Teller's own descriptions
of the same scenes; prints one Markdown table per Drawer and phrasing (a row per category:
clip art right, recall, precision, position error, size, facing, expression/pose, worn and held
pieces on their wearer, left/right and above/below order, abstain on messages that name
nothing, scene similarity), then the comparison: every Drawer and phrasing on all messages,
on batch b alone, and per category. ``--doc`` writes the comparison between
the ``codraw_drawer_validation`` markers of that file. The neural Drawer (``--drawer neural``)
loads torch here, in this command's process only.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

BEGIN, END = "<!-- codraw_drawer_validation:begin -->", "<!-- codraw_drawer_validation:end -->"
DRAWERS = ("rule", "neural", "nn")


class Command(BaseCommand):
    help = "CoDraw Drawers (rule, neural, nearest-neighbour) on the hand-written human-style validation set."

    def add_arguments(self, parser):
        parser.add_argument("--drawer", action="append", choices=DRAWERS,
                            help="a Drawer to score (repeat for several; default: rule and neural)")
        parser.add_argument("--checkpoint", default="models/codraw/codraw_neural_drawer.pt",
                            help="the neural Drawer's checkpoint")
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--phrasing", choices=("both", "human", "rule_teller"), default="both")
        parser.add_argument("--set", dest="path", default="", help="the validation set (JSON lines)")
        parser.add_argument("--json", default="", help="write every report (per message too) here")
        parser.add_argument("--load", default="", help="read the reports from a file --json wrote instead of "
                            "playing the Drawers (to print, plot or write them again)")
        parser.add_argument("--plot", default="", help="write a bar chart (PNG) here")
        parser.add_argument("--doc", default="", help=f"write the comparison into this Markdown file, between "
                            f"{BEGIN} and {END}")

    def handle(self, *args, **opts):
        from games.codraw import drawer_validation as dv

        try:
            items = dv.load(opts["path"] or dv.DATA_PATH)
        except (OSError, dv.ValidationSetError) as exc:
            raise CommandError(str(exc)) from None
        counts = dv.counts(items)
        self.stdout.write(f"{len(items)} messages: " + ", ".join(f"{tag} {n}" for tag, n in counts.items()))
        if opts["load"]:
            try:
                reports = [dv.Report.from_dict(r) for r in json.loads(Path(opts["load"]).read_text())["reports"]]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise CommandError(f"{opts['load']}: not a file this command wrote with --json ({exc})") from None
        else:
            reports = self.play(items, opts)
        for report in reports:
            self.stdout.write("\n" + dv.table(report))
        comparison = dv.report_markdown(reports)
        self.stdout.write("\n" + comparison)
        if opts["json"]:
            Path(opts["json"]).parent.mkdir(parents=True, exist_ok=True)
            Path(opts["json"]).write_text(json.dumps({"set": str(opts["path"] or dv.DATA_PATH), "counts": counts,
                                                      "reports": [r.to_dict() for r in reports]}, indent=1))
        if opts["plot"]:
            dv.plot(reports, opts["plot"])
            self.stdout.write(f"plot: {opts['plot']}")
        if opts["doc"]:
            write_doc(opts["doc"], comparison)
            self.stdout.write(f"table written into {opts['doc']}")

    def play(self, items, opts) -> list:
        from games.codraw import drawer_validation as dv

        drawers = {}
        for kind in opts["drawer"] or ["rule", "neural"]:
            drawers[kind] = self.drawer(kind, opts)
        phrasings = ("human", "rule_teller") if opts["phrasing"] == "both" else (opts["phrasing"],)
        reports = []
        for phrasing in phrasings:
            for kind, (name, drawer) in drawers.items():
                def progress(done, total, label=f"{name}, {phrasing}"):
                    if done % 25 == 0 or done == total:
                        sys.stderr.write(f"  {label}: {done}/{total}\n")
                reports.append(dv.evaluate(drawer, items, name=name, phrasing=phrasing, progress=progress))
        return reports

    def drawer(self, kind: str, opts: dict):
        from games.codraw import agents

        if kind == "rule":
            return "rule", agents.RuleDrawer()
        if kind == "nn":
            return "nearest neighbour", agents.NearestNeighbourDrawer()
        if not Path(opts["checkpoint"]).is_file():
            raise CommandError(f"No checkpoint at {opts['checkpoint']}; train one with "
                               "`python manage.py train_agent codraw_neural_drawer`.")
        from games.codraw.neural.agents import NeuralDrawer   # torch: loaded here only

        try:
            drawer = NeuralDrawer.load(opts["checkpoint"], opts["device"])
            return f"neural @{drawer.checkpoint_sha256[:12]}", drawer
        except (ValueError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None


def write_doc(path: str, table: str) -> None:
    doc = Path(path)
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise CommandError(f"{path} has no {BEGIN} ... {END} markers")
    block = f"{BEGIN}\n{table}\n{END}"
    doc.write_text(re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S),
                   encoding="utf-8")
