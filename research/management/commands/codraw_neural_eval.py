"""The CoDraw paper's Table 1 for the neural agents (games/codraw/neural/eval.py ``table1``).

    python manage.py codraw_neural_eval [--drawer models/codraw/codraw_neural_drawer.pt \
        --teller models/codraw/codraw_neural_teller.pt --same-half-teller PATH --scenes 100 \
        --json var/codraw_neural_eval.json --plot docs/games/codraw_neural_eval.png \
        --doc docs/games/codraw_neural.md]

On ``--scenes`` scenes of the test seed range (disjoint from every checkpoint's training scenes,
checked): script-based Drawer evaluation (recorded rule-Teller dialogs, paraphrased) of the
neural, nearest-neighbour, rule and random Drawers, and machine-machine pairs of the neural, rule
and nearest-neighbour Tellers and Drawers; the neural Teller and Drawer must come from disjoint
training halves (crosstalk, checked). ``--same-half-teller``: a second neural Teller trained on the
Drawer's half, paired with it (the co-adaptation crosstalk avoids). Prints ONE Markdown table of
mean scene similarity with 95% bootstrap intervals; ``--doc`` writes it into that file between
the ``codraw_neural_eval`` markers.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

BEGIN, END = "<!-- codraw_neural_eval:begin -->", "<!-- codraw_neural_eval:end -->"


class Command(BaseCommand):
    help = "Table 1 of the CoDraw paper (script-based and machine-machine) for the neural CoDraw agents."

    def add_arguments(self, parser):
        parser.add_argument("--drawer", "--checkpoint", dest="drawer", default="models/codraw/codraw_neural_drawer.pt")
        parser.add_argument("--teller", default="models/codraw/codraw_neural_teller.pt")
        parser.add_argument("--same-half-teller", default="", help="a neural Teller trained on the Drawer's half")
        parser.add_argument("--scenes", type=int, default=100)
        parser.add_argument("--offset", type=int, default=0, help="first test scene (offset in the test range)")
        parser.add_argument("--nn-dialogs", type=int, default=0, help="generated dialogs per nearest-neighbour "
                            "database (0: the agents' default, 150)")
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--threads", type=int, default=0)
        parser.add_argument("--json", default="", help="write the results (scores per scene) here")
        parser.add_argument("--plot", default="", help="write a bar chart (PNG) here")
        parser.add_argument("--doc", default="", help="write the table into this Markdown file, between "
                            f"{BEGIN} and {END}")

    def handle(self, *args, **opts):
        import torch   # here: torch and the neural modules (the optional `models` extra) load only when this runs

        from games.codraw.neural import data as neural_data
        from games.codraw.neural import eval as neural_eval
        from games.codraw.agents import NearestNeighbourDrawer, NearestNeighbourTeller, RuleDrawer, RuleTeller
        from games.codraw.neural.agents import NeuralDrawer, NeuralTeller
        from games.codraw.neural.eval import SCRIPT, Pair

        if opts["scenes"] < 1:
            raise CommandError("Need --scenes >= 1.")
        for key, kind in (("drawer", "codraw_neural_drawer"), ("teller", "codraw_neural_teller"),
                          ("same_half_teller", "codraw_neural_teller")):
            if opts[key] and not Path(opts[key]).is_file():
                raise CommandError(f"No checkpoint at {opts[key]}; train one with "
                                   f"`python manage.py train_agent {kind}`.")
        if opts["threads"]:
            torch.set_num_threads(opts["threads"])
        try:
            drawer = NeuralDrawer.load(opts["drawer"], opts["device"])
            teller = NeuralTeller.load(opts["teller"], opts["device"])
            same = NeuralTeller.load(opts["same_half_teller"], opts["device"]) if opts["same_half_teller"] else None
        except (ValueError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
        test_seeds = neural_data.scene_seeds("test", opts["scenes"], opts["offset"])
        drawer_half, drawer_seeds = training_seeds(opts["drawer"])
        teller_half, teller_seeds = training_seeds(opts["teller"])
        for seeds in (drawer_seeds, teller_seeds):
            neural_eval.check_disjoint(seeds, test_seeds)
        try:
            neural_eval.check_disjoint(teller_seeds, drawer_seeds)
        except ValueError:
            raise CommandError("The neural Teller and Drawer were trained on overlapping scenes: no crosstalk "
                               "(train them on different halves: train_agent ... --half a|b).") from None
        neural_t, neural_d = f"neural (half {teller_half})", f"neural (half {drawer_half})"
        nn = {"dialogs": opts["nn_dialogs"]} if opts["nn_dialogs"] else {}
        tellers = {neural_t: teller, "rule": RuleTeller(peek=False), "nearest neighbour": NearestNeighbourTeller(**nn)}
        drawers = {neural_d: drawer, "rule": RuleDrawer(), "nearest neighbour": NearestNeighbourDrawer(**nn),
                   "random": neural_eval.RandomDrawer}
        script = "script-based"
        pairs = [Pair(SCRIPT, name, script) for name in drawers]
        for t in tellers:
            for d in (neural_d, "rule", "nearest neighbour"):
                pairs.append(Pair(t, d, "machine-machine, crosstalk"))
        if same is not None:
            same_half, same_seeds = training_seeds(opts["same_half_teller"])
            neural_eval.check_disjoint(same_seeds, test_seeds)
            if same_half != drawer_half:
                raise CommandError(f"--same-half-teller was trained on half {same_half}, the Drawer on {drawer_half}.")
            tellers[f"neural (half {same_half})"] = same
            pairs.append(Pair(f"neural (half {same_half})", neural_d, "machine-machine, same half"))
        rows = neural_eval.table1(tellers, drawers, pairs, opts["scenes"], opts["offset"],
                                  progress=opts["verbosity"] > 0)
        text = neural_eval.table(rows)
        self.stdout.write(f"{opts['scenes']} held-out scenes (seeds {test_seeds.start}..{test_seeds.stop - 1}); "
                          f"Teller {teller.version}, Drawer {drawer.version}")
        self.stdout.write(text)
        if opts["json"]:
            Path(opts["json"]).parent.mkdir(parents=True, exist_ok=True)
            Path(opts["json"]).write_text(json.dumps({
                "drawer_sha256": drawer.checkpoint_sha256, "teller_sha256": teller.checkpoint_sha256,
                "same_half_teller_sha256": same.checkpoint_sha256 if same else None,
                "test_seeds": [test_seeds.start, test_seeds.stop], "rows": rows}, indent=1))
        if opts["plot"]:
            neural_eval.plot(rows, opts["plot"])
            self.stdout.write(f"plot {opts['plot']}")
        if opts["doc"]:
            write_into(Path(opts["doc"]), f"{opts['scenes']} held-out scenes (seeds {test_seeds.start}.."
                                          f"{test_seeds.stop - 1}), mean with 95% bootstrap interval:\n\n{text}")
            self.stdout.write(f"table written into {opts['doc']}")


def training_seeds(path: str) -> tuple[str, range]:
    """(training half, scene seeds) of a neural CoDraw checkpoint (its training record)."""
    from games.codraw.neural import data as neural_data
    from games.codraw.neural.model import load_checkpoint

    training = load_checkpoint(path).meta.get("training", {})
    half = training.get("half", "a")                # the first Drawer checkpoints predate halves: a
    split = neural_data.HALVES[half]
    return half, neural_data.scene_seeds(split, training.get("dialogs", 0), training.get("seed", 0) * 100_000)


def write_into(doc: Path, text: str) -> None:
    old = doc.read_text()
    if BEGIN not in old or END not in old:
        raise CommandError(f"{doc} has no {BEGIN} ... {END} markers to write the table between.")
    new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: f"{BEGIN}\n{text}\n{END}", old, flags=re.S)
    doc.write_text(new)
