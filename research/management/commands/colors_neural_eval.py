"""Accuracy per condition of the neural color listeners beside the rule listeners.

    python manage.py colors_neural_eval --rounds 600 --seed 1000 \
        --listener models/colors/colors_neural_listener.pt --speaker models/colors/colors_neural_speaker.pt \
        --write-docs

Prints a Markdown table per setting (games/colors/neural/eval.py); ``--write-docs`` puts it
between the results markers of docs/games/colors_neural.md and the plot at ``--plot``.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

DOC = Path("docs/games/colors_neural.md")
BEGIN, END = "<!-- colors_neural_eval:begin -->", "<!-- colors_neural_eval:end -->"


class Command(BaseCommand):
    help = "Accuracy per condition of neural and rule color listeners (agent-agent and people's phrasing)."

    def add_arguments(self, parser):
        parser.add_argument("--listener", default="models/colors/colors_neural_listener.pt")
        parser.add_argument("--speaker", default="models/colors/colors_neural_speaker.pt")
        parser.add_argument("--rounds", type=int, default=600, help="rounds per setting")
        parser.add_argument("--seed", type=int, default=1000)
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--plot", default="docs/games/colors_neural_accuracy.png")
        parser.add_argument("--write-docs", action="store_true", help=f"update the results block of {DOC}")

    def handle(self, *args, **opts):
        # here: the neural modules import torch (the optional `models` extra); they load only when this runs
        from games.colors import agents as rule_agents
        from games.colors.neural import eval as neural_eval
        from games.colors.neural.agents import NeuralLiteralListener, NeuralPragmaticListener, NeuralSpeaker

        for key in ("listener", "speaker"):
            if not Path(opts[key]).is_file():
                raise CommandError(f"No checkpoint at {opts[key]}; train one with manage.py train_agent.")
        if opts["rounds"] < 3:
            raise CommandError("Need --rounds >= 3 (one per condition).")
        try:
            l0 = NeuralLiteralListener.load(opts["listener"], opts["device"])
            l2 = NeuralPragmaticListener.load(opts["listener"], opts["device"], speaker=opts["speaker"])
            s0 = NeuralSpeaker.load(opts["speaker"], opts["device"])
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(str(exc)) from None
        listeners = {
            "rule literal L0": rule_agents.LiteralListener(),
            "rule pragmatic L1 (RSA)": rule_agents.PragmaticListener(),
            "neural L0": l0,
            "neural L2 (blended)": l2,
            "random": rule_agents.RandomListener(seed=opts["seed"]),
        }
        report = neural_eval.evaluate(listeners=listeners, neural_speaker=s0, n=opts["rounds"], seed=opts["seed"])
        table = neural_eval.markdown(report)
        header = (f"Checkpoints: listener `{Path(opts['listener']).name}` sha256 `{l0.checkpoint_sha256}`, "
                  f"speaker `{Path(opts['speaker']).name}` sha256 `{s0.checkpoint_sha256}`. Command: "
                  f"`python manage.py colors_neural_eval --rounds {opts['rounds']} --seed {opts['seed']} "
                  f"--write-docs`.\n\n")
        self.stdout.write(header + table)
        if opts["plot"]:
            neural_eval.plot(report, opts["plot"])
            self.stdout.write(f"plot written to {opts['plot']}")
        if opts["write_docs"]:
            text = DOC.read_text()
            if BEGIN not in text or END not in text:
                raise CommandError(f"{DOC} has no {BEGIN} ... {END} block.")
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            DOC.write_text(f"{head}{BEGIN}\n{header}{table}\n{END}{tail}")
            self.stdout.write(f"results written to {DOC}")
