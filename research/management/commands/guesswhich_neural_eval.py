"""The neural ALICE beside the grounded ALICE (games/guesswhich/neural/eval.py).

    python manage.py guesswhich_neural_eval --alice models/guesswhich/guesswhich_neural_alice.pt \
        --dialogs 100 --games 30 --write-docs

Answer agreement with the exact grounded ALICE on held-out scenes per question type, and GuessWhich
games (rule QBot + each ALICE: mean rank / MRR with bootstrap CIs, Mann-Whitney vs the exact ALICE).
With the cooperative fine-tune's checkpoints (``train_agent guesswhich_coop``; ``--coop-alice``,
``--coop-qbot``, used when present) it also plays the supervised and fine-tuned pairs on the same
pools (each fine-tuned pair tested against its supervised counterpart) and plots them at
``--coop-plot``.
Prints the Markdown tables; ``--write-docs`` writes them between the results markers of
docs/games/guesswhich_neural.md and the plot at ``--plot``; ``--json`` writes the raw report.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

DOC = Path("docs/games/guesswhich_neural.md")
COOP_ALICE, COOP_QBOT = "models/guesswhich/guesswhich_coop_alice.pt", "models/guesswhich/guesswhich_coop_qbot.pt"
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
        parser.add_argument("--coop-alice", default="", help=f"the cooperatively fine-tuned ALICE (default "
                            f"{COOP_ALICE}, used when it and the QBot are there)")
        parser.add_argument("--coop-qbot", default="", help=f"its QBot answer model (default {COOP_QBOT})")
        parser.add_argument("--no-coop", action="store_true", help="leave the cooperative fine-tune out")
        parser.add_argument("--plot", default="docs/games/guesswhich_neural.png")
        parser.add_argument("--coop-plot", default="docs/games/guesswhich_coop.png")
        parser.add_argument("--json", default="", help="also write the raw report here")
        parser.add_argument("--write-docs", action="store_true", help=f"update the results block of {DOC}")

    def handle(self, *args, **opts):
        import torch   # here: torch and the neural modules (the optional `models` extra) load only when this runs

        from clevr.alice import make_alice
        from games.guesswhich.neural import eval as neural_eval
        from clevr.qbot import QBot
        from games.guesswhich.neural.agents import NeuralAliceAgent
        from games.guesswhich.neural.qbot import NeuralQBot

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
        # the fine-tune's checkpoints are loaded and checked before any evaluation: a wrong path or
        # a checkpoint that is no fine-tune is refused at once, not after minutes of games
        coop = self.load_cooperative(opts, agent) if self.coop_paths(opts) else None
        trained = agent.meta["training"]       # the majority answer is taken from the same training dialogs
        accuracy = neural_eval.answer_accuracy(agent, dialogs=opts["dialogs"], seed=opts["seed"],
                                               train_dialogs=trained["dialogs"], train_seed=trained["seed"])
        answerers = {"alice_exact (grounded)": make_alice("alice_exact"), "neural ALICE": agent,
                     "alice_weak (weaker colour vision)": make_alice("alice_weak")}
        games = neural_eval.games(answerers, n=opts["games"], seed=opts["seed"], pool_size=opts["pool_size"],
                                  rounds=opts["rounds"], progress=opts["verbosity"] > 0)
        grounded = make_alice("alice_exact")
        neural_qbot = NeuralQBot.load(opts["alice"], opts["device"])   # its answer model: the same network
        questioners = neural_eval.games(
            {"qbot_random (random questions and guesses)": (QBot(name="qbot_random", strategy="random"), grounded),
             "neural QBot": (neural_qbot, grounded),
             "qbot (rule, information gain)": (QBot(), grounded)},
            n=opts["games"], seed=opts["seed"], pool_size=opts["pool_size"], rounds=opts["rounds"],
            progress=opts["verbosity"] > 0)
        report = {"accuracy": accuracy, "games": games, "questioners": questioners, "pool_size": opts["pool_size"],
                  "rounds": opts["rounds"], "n_games": opts["games"], "checkpoint_sha256": agent.checkpoint_sha256}
        if coop is not None:
            report["cooperative"] = self.cooperative(opts, agent, neural_qbot, coop, trained,
                                                     accuracy["per_type"]["all"])
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
        if opts["coop_plot"] and report.get("cooperative"):
            neural_eval.plot_cooperative(report["cooperative"], report, opts["coop_plot"])
            self.stdout.write(f"plot {opts['coop_plot']}")
        if opts["write_docs"]:
            text = DOC.read_text()
            if BEGIN not in text or END not in text:
                raise CommandError(f"{DOC} lacks the markers {BEGIN} ... {END}.")
            head, rest = text.split(BEGIN, 1)
            plots = "\n![results](guesswhich_neural.png)\n"
            if report.get("cooperative") and opts["coop_plot"]:
                plots += f"\n![cooperative fine-tune]({Path(opts['coop_plot']).name})\n"
            DOC.write_text(head + BEGIN + "\n" + header + table + plots + END + rest.split(END, 1)[1])
            self.stdout.write(f"wrote {DOC}")

    @staticmethod
    def coop_paths(opts) -> bool:
        """Whether to evaluate the fine-tune: named paths must exist; the defaults are used if present."""
        if opts["no_coop"]:
            return False
        if opts["coop_alice"] or opts["coop_qbot"]:
            for key in ("coop_alice", "coop_qbot"):
                if not opts[key] or not Path(opts[key]).is_file():
                    raise CommandError(f"--{key.replace('_', '-')}: no checkpoint at {opts[key] or '(not given)'}; "
                                       "give both, from `python manage.py train_agent guesswhich_coop`.")
            return True
        opts["coop_alice"], opts["coop_qbot"] = COOP_ALICE, COOP_QBOT
        return Path(COOP_ALICE).is_file() and Path(COOP_QBOT).is_file()

    def load_cooperative(self, opts, supervised):
        """The fine-tuned ALICE and QBot, refused (CommandError) unless ALICE is a cooperative fine-tune."""
        from games.guesswhich.neural.agents import NeuralAliceAgent
        from games.guesswhich.neural.qbot import NeuralQBot

        try:
            alice = NeuralAliceAgent.load(opts["coop_alice"], opts["device"])
            qbot = NeuralQBot.load(opts["coop_qbot"], opts["device"])
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(str(exc)) from None
        training = alice.meta["training"].get("cooperative")
        if not training:
            raise CommandError(f"{opts['coop_alice']} is not a cooperative fine-tune (train_agent guesswhich_coop).")
        if training["base_sha256"] != supervised.checkpoint_sha256:
            self.stderr.write(f"note: {opts['coop_alice']} was fine-tuned from {training['base']} "
                              f"({training['base_sha256'][:12]}), not from {opts['alice']}.")
        return alice, qbot

    def cooperative(self, opts, supervised, sl_qbot, coop, trained, supervised_agreement: dict) -> dict:
        """The supervised and the fine-tuned pairs on the same pools, and ALICE's drift."""
        from clevr.qbot import QBot
        from games.guesswhich.neural import eval as neural_eval

        alice, qbot = coop
        training = alice.meta["training"]["cooperative"]
        sl, co = "neural ALICE (supervised)", "neural ALICE (cooperative)"
        pairs = {f"neural QBot + {sl}": (sl_qbot, supervised),
                 f"neural QBot (cooperative) + {co}": (qbot, alice),
                 f"neural QBot + {co}": (sl_qbot, alice),
                 f"rule QBot + {sl}": (QBot(), supervised),
                 f"rule QBot + {co}": (QBot(), alice)}
        names = list(pairs)
        played = neural_eval.games(pairs, n=opts["games"], seed=opts["seed"], pool_size=opts["pool_size"],
                                   rounds=opts["rounds"], progress=opts["verbosity"] > 0,
                                   against={names[1]: names[0], names[2]: names[0], names[4]: names[3]})
        agree = {"supervised": supervised_agreement,
                 "cooperative": neural_eval.answer_accuracy(alice, dialogs=opts["dialogs"], seed=opts["seed"],
                                                            train_dialogs=trained["dialogs"],
                                                            train_seed=trained["seed"])["per_type"]["all"]}
        return {"pairs": played, "agreement": agree, "training": training,
                "history": alice.meta.get("history") or [], "alice_sha256": alice.checkpoint_sha256,
                "qbot_sha256": qbot.checkpoint_sha256}
