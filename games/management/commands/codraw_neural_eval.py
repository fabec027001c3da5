"""Evaluate the neural CoDraw Drawer against the rule Drawer and trivial baselines (games/codraw/neural_eval.py).

    python manage.py codraw_neural_eval [--checkpoint models/codraw/codraw_neural_drawer.pt \
        --scenes 100 --json var/codraw_neural_eval.json --plot docs/games/codraw_neural_eval.png]

Plays every Drawer with the rule Teller (template and paraphrased wording) on ``--scenes`` scenes of
the test seed range (disjoint from training) and prints a Markdown table of mean scene similarity
with 95% bootstrap intervals.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Scene similarity of the neural CoDraw Drawer vs the rule Drawer on held-out scenes."

    def add_arguments(self, parser):
        parser.add_argument("--checkpoint", default="models/codraw/codraw_neural_drawer.pt")
        parser.add_argument("--scenes", type=int, default=100)
        parser.add_argument("--offset", type=int, default=0, help="first test scene (offset in the test range)")
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--threads", type=int, default=0)
        parser.add_argument("--json", default="", help="write the results (scores per scene) here")
        parser.add_argument("--plot", default="", help="write a bar chart (PNG) here")

    def handle(self, *args, **opts):
        import torch

        from games.codraw import neural_data, neural_eval
        from games.codraw.neural_agents import NeuralDrawer

        if opts["scenes"] < 1:
            raise CommandError("Need --scenes >= 1.")
        if not Path(opts["checkpoint"]).is_file():
            raise CommandError(f"No checkpoint at {opts['checkpoint']}; train one with "
                               "`python manage.py train_agent codraw_neural_drawer`.")
        if opts["threads"]:
            torch.set_num_threads(opts["threads"])
        try:
            drawer = NeuralDrawer.load(opts["checkpoint"], opts["device"])
        except (ValueError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
        training = drawer_training(opts["checkpoint"])
        train_seeds = neural_data.scene_seeds("train", training.get("dialogs", 0), training.get("seed", 0) * 100_000)
        test_seeds = neural_data.scene_seeds("test", opts["scenes"], opts["offset"])
        neural_eval.check_disjoint(train_seeds, test_seeds)
        results = neural_eval.evaluate(neural_eval.default_drawers(drawer), opts["scenes"], opts["offset"],
                                       progress=opts["verbosity"] > 0)
        self.stdout.write(f"{opts['scenes']} held-out scenes (seeds {test_seeds.start}..{test_seeds.stop - 1}); "
                          f"checkpoint {drawer.version}")
        self.stdout.write(neural_eval.table(results))
        if opts["json"]:
            Path(opts["json"]).parent.mkdir(parents=True, exist_ok=True)
            Path(opts["json"]).write_text(json.dumps({"checkpoint_sha256": drawer.checkpoint_sha256,
                                                      "test_seeds": [test_seeds.start, test_seeds.stop],
                                                      "results": results}, indent=1))
        if opts["plot"]:
            neural_eval.plot(results, opts["plot"])
            self.stdout.write(f"plot {opts['plot']}")


def drawer_training(path: str) -> dict:
    from games.codraw.neural import load_checkpoint

    return load_checkpoint(path).meta.get("training", {})
