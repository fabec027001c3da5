"""The neural ALICE beside the grounded ALICE (games/guesswhich/neural_eval.py).

    python manage.py guesswhich_neural_eval --alice models/guesswhich/guesswhich_neural_alice.pt \
        --dialogs 100 --games 30 --write-docs

Answer agreement with the exact grounded ALICE on held-out scenes per question type, and GuessWhich
games (rule QBot + each ALICE: mean rank / MRR with bootstrap CIs, Mann-Whitney vs the exact ALICE).
Prints the Markdown tables; ``--write-docs`` writes them between the results markers of
docs/games/guesswhich_neural.md and the plot at ``--plot``; ``--json`` writes the raw report.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

DOC = Path("docs/games/guesswhich_neural.md")
BEGIN, END = "<!-- guesswhich_neural_eval:begin -->", "<!-- guesswhich_neural_eval:end -->"


class Command(BaseCommand):
    help = "Evaluate the neural ALICE against the grounded ALICE (answers per type; GuessWhich mean rank / MRR)."

    def add_arguments(self, parser):
        parser.add_argument("--alice", default="models/guesswhich/guesswhich_neural_alice.pt")
        parser.add_argument("--dialogs", type=int, default=100, help="held-out dialogs (10 rounds each)")
        parser.add_argument("--games", type=int, default=30)
        parser.add_argument("--pool-size", type=int, default=20)
        parser.add_argument("--rounds", type=int, default=9)
        parser.add_argument("--seed", type=int, default=5000)
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--threads", type=int, default=1)
        parser.add_argument("--plot", default="docs/games/guesswhich_neural.png")
        parser.add_argument("--json", default="", help="also write the raw report here")
        parser.add_argument("--write-docs", action="store_true", help=f"update the results block of {DOC}")

    def handle(self, *args, **opts):
        import torch

        from games.clevr.alice import make_alice
        from games.guesswhich import neural_eval
        from games.clevr.qbot import QBot
        from games.guesswhich.neural_agents import NeuralAliceAgent
        from games.guesswhich.neural_qbot import NeuralQBot

        if not Path(opts["alice"]).is_file():
            raise CommandError(f"No checkpoint at {opts['alice']}; train one with "
                               "`python manage.py train_agent guesswhich_neural_alice`.")
        if opts["dialogs"] < 1 or opts["games"] < 1 or not 2 <= opts["pool_size"] <= 50 or opts["rounds"] < 1:
            raise CommandError("Need --dialogs >= 1, --games >= 1, --pool-size in 2..50 and --rounds >= 1.")
        if opts["threads"]:
            torch.set_num_threads(opts["threads"])
        try:
            agent = NeuralAliceAgent.load(opts["alice"], opts["device"])
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(str(exc)) from None
        trained = agent.meta["training"]       # the majority answer is taken from the same training dialogs
        accuracy = neural_eval.answer_accuracy(agent, dialogs=opts["dialogs"], seed=opts["seed"],
                                               train_dialogs=trained["dialogs"], train_seed=trained["seed"])
        answerers = {"alice_exact (grounded)": make_alice("alice_exact"), "neural ALICE": agent,
                     "alice_weak (weaker colour vision)": make_alice("alice_weak")}
        games = neural_eval.games(answerers, n=opts["games"], seed=opts["seed"], pool_size=opts["pool_size"],
                                  rounds=opts["rounds"], progress=opts["verbosity"] > 0)
        grounded = make_alice("alice_exact")
        questioners = neural_eval.games(
            {"qbot_random (random questions and guesses)": (QBot(name="qbot_random", strategy="random"), grounded),
             "neural QBot": (NeuralQBot.load(opts["alice"], opts["device"]), grounded),
             "qbot (rule, information gain)": (QBot(), grounded)},
            n=opts["games"], seed=opts["seed"], pool_size=opts["pool_size"], rounds=opts["rounds"],
            progress=opts["verbosity"] > 0)
        report = {"accuracy": accuracy, "games": games, "questioners": questioners, "pool_size": opts["pool_size"],
                  "rounds": opts["rounds"], "n_games": opts["games"], "checkpoint_sha256": agent.checkpoint_sha256}
        table = neural_eval.markdown(report)
        header = (f"Checkpoint `{Path(opts['alice']).name}` sha256 `{agent.checkpoint_sha256}`. Command: "
                  f"`python manage.py guesswhich_neural_eval --dialogs {opts['dialogs']} --games {opts['games']} "
                  f"--pool-size {opts['pool_size']} --rounds {opts['rounds']} --seed {opts['seed']} --write-docs`.\n\n")
        self.stdout.write(header + table)
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(report, indent=1))
        if opts["plot"]:
            neural_eval.plot(report, opts["plot"])
            self.stdout.write(f"plot {opts['plot']}")
        if opts["write_docs"]:
            text = DOC.read_text()
            if BEGIN not in text or END not in text:
                raise CommandError(f"{DOC} lacks the markers {BEGIN} ... {END}.")
            head, rest = text.split(BEGIN, 1)
            DOC.write_text(head + BEGIN + "\n" + header + table + "\n![results](guesswhich_neural.png)\n"
                           + END + rest.split(END, 1)[1])
            self.stdout.write(f"wrote {DOC}")
