"""Train a neural agent on data the project generates and write its checkpoint.

    python manage.py train_agent colors_neural_listener [--examples 12000 --epochs 8 --seed 0 \
        --out models/colors/colors_neural_listener.pt --device cpu]
    python manage.py train_agent guesswhich_neural_alice [--dialogs 1200 --epochs 6 --threads 1]
    python manage.py train_agent codraw_neural_drawer [--dialogs 300 --epochs 12 --threads 1]
    python manage.py train_agent codraw_neural_teller [--dialogs 300 --epochs 15 --half b --threads 1]
    python manage.py train_agent guesswhich_coop [--from models/guesswhich/guesswhich_neural_alice.pt \
        --games 512 --epochs 15 --anchor 0.2 --threads 1]   # writes guesswhich_coop_alice.pt and _qbot.pt

Unset options take the kind's recipe (``RECIPES``: what the committed checkpoints were trained with).

Writes the checkpoint (state dict + vocabulary + config + version, see games/colors/neural/model.py),
a loss / held-out accuracy plot next to it (same name, ``.png``), and prints the file's sha256
and the weights' sha256 (games/colors/neural/model.py weights_sha256).
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

KINDS = ("colors_neural_listener", "colors_neural_speaker", "guesswhich_neural_alice", "guesswhich_coop",
         "codraw_neural_drawer", "codraw_neural_teller")
# per kind: the recipe of the committed checkpoints (docs/games/colors_neural.md); flags override
RECIPES = {
    "colors_neural_listener": {"examples": 12000, "epochs": 8, "hidden": 48, "embed": 32, "lr": 3e-3},
    "colors_neural_speaker": {"examples": 12000, "epochs": 8, "hidden": 64, "embed": 32, "lr": 3e-3},
    # GuessWhich neural ALICE (games/guesswhich/neural/, docs/games/guesswhich_neural.md)
    "guesswhich_neural_alice": {"dialogs": 1200, "epochs": 6, "hidden": 64, "embed": 32, "lr": 3e-3},
    # cooperative fine-tune of ALICE and the QBot's answer model from the supervised ALICE (games/guesswhich/neural/coop.py)
    "guesswhich_coop": {"games": 512, "epochs": 15, "lr": 1e-3, "batch_size": 32, "anchor": 0.2},
    # CoDraw neural Drawer (games/codraw/neural/, docs/games/codraw_neural.md)
    "codraw_neural_drawer": {"dialogs": 300, "epochs": 12, "hidden": 64, "embed": 32, "lr": 5e-3},
    # CoDraw neural Teller (games/codraw/neural/teller_model.py, teller_train.py), training half b (crosstalk with the Drawer's a)
    "codraw_neural_teller": {"dialogs": 300, "epochs": 15, "hidden": 80, "embed": 32, "lr": 5e-3},
}


class Command(BaseCommand):
    help = "Train a neural color agent (listener L0 or speaker S0) on generated data."

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("--examples", type=int, help="generated training examples (recipe: 12000)")
        parser.add_argument("--dialogs", type=int, help="guesswhich_neural_alice: generated dialogs of 10 "
                            "rounds (recipe: 1200)")
        parser.add_argument("--epochs", type=int, help="recipe: 8")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--batch-size", type=int, help="examples (games for guesswhich_coop) per update "
                            "(recipe: 64; guesswhich_coop 32)")
        parser.add_argument("--lr", type=float, help="Adam learning rate (recipe: 0.003)")
        parser.add_argument("--hidden", type=int, help="GRU size (recipe: listener 48, speaker 64)")
        parser.add_argument("--embed", type=int, help="word embedding size (recipe: 32)")
        parser.add_argument("--out", default="", help="checkpoint path (default models/colors/KIND.pt)")
        parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
        parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
        parser.add_argument("--from", dest="base", default="models/guesswhich/guesswhich_neural_alice.pt",
                            help="guesswhich_coop: the supervised ALICE checkpoint both bots start from")
        parser.add_argument("--games", type=int, help="guesswhich_coop: generated games, played again each epoch "
                            "(recipe: 512)")
        parser.add_argument("--pool-size", type=int, default=20, help="guesswhich_coop: images per pool")
        parser.add_argument("--rounds", type=int, default=5, help="guesswhich_coop: dialog rounds per game")
        parser.add_argument("--anchor", type=float,
                            help="guesswhich_coop: weight of the supervised anchor loss (recipe: 0.2)")
        parser.add_argument("--half", choices=("a", "b"), default="b",
                            help="codraw_neural_teller: the training half of the scenes (the Drawer's is a)")

    def handle(self, *args, **opts):
        import torch   # here: torch and the neural modules (the optional `models` extra) load only when a model trains

        from games.colors.neural.train import plot_history, train

        for key, value in {"batch_size": 64, **RECIPES[opts["kind"]]}.items():
            if opts.get(key) is None:
                opts[key] = value
        if opts["batch_size"] < 1 or not opts["lr"] > 0:
            raise CommandError("Need --batch-size >= 1 and --lr > 0.")
        if opts["kind"] == "guesswhich_neural_alice":
            from games.guesswhich.neural.train import plot_history, train as train_alice

            if opts["dialogs"] < 2 or opts["epochs"] < 1:
                raise CommandError("Need --dialogs >= 2 and --epochs >= 1.")
            train = lambda kind, *, examples, **kw: train_alice(dialogs=opts["dialogs"], **kw)  # noqa: E731
        elif opts["kind"] == "guesswhich_coop":
            from games.guesswhich.neural.coop import train as train_coop
            from games.guesswhich.neural.model import load_checkpoint
            from games.guesswhich.neural.coop import plot_history

            if not Path(opts["base"]).is_file():
                raise CommandError(f"No supervised checkpoint at {opts['base']}; train one first with "
                                   "`python manage.py train_agent guesswhich_neural_alice`.")
            if opts["games"] < 2 or opts["epochs"] < 1 or not 2 <= opts["pool_size"] <= 50 or opts["rounds"] < 1 \
                    or opts["anchor"] < 0:
                raise CommandError("Need --games >= 2, --epochs >= 1, --pool-size in 2..50, --rounds >= 1 and "
                                   "--anchor >= 0.")
            try:
                load_checkpoint(opts["base"])      # before minutes of game generation
            except (ValueError, RuntimeError, OSError) as exc:
                raise CommandError(f"--from: {exc}") from None
            train = lambda kind, *, examples, embed, hidden, **kw: train_coop(  # noqa: E731
                base=opts["base"], games=opts["games"], pool_size=opts["pool_size"], rounds=opts["rounds"],
                anchor=opts["anchor"], **kw)
        elif opts["kind"] == "codraw_neural_drawer":
            from games.codraw.neural.drawer_train import plot_history, train as train_drawer

            if opts["dialogs"] < 2 or opts["epochs"] < 1:
                raise CommandError("Need --dialogs >= 2 and --epochs >= 1.")
            train = lambda kind, *, examples, **kw: train_drawer(kind, examples=opts["dialogs"], **kw)  # noqa: E731
        elif opts["kind"] == "codraw_neural_teller":
            from games.codraw.neural.teller_train import plot_history, train as train_teller

            if opts["dialogs"] < 2 or opts["epochs"] < 1:
                raise CommandError("Need --dialogs >= 2 and --epochs >= 1.")
            train = lambda kind, *, examples, **kw: train_teller(  # noqa: E731
                kind, examples=opts["dialogs"], half=opts["half"], **kw)
        elif opts["examples"] < 10 or opts["epochs"] < 1:
            raise CommandError("Need --examples >= 10 and --epochs >= 1.")
        device = opts["device"]
        try:
            torch.empty(1, device=device)
        except (RuntimeError, AssertionError) as exc:
            raise CommandError(f"Device {device!r} is not usable here: {exc}") from None
        if opts["threads"]:
            torch.set_num_threads(opts["threads"])
        folder = opts["kind"].split("_")[0]          # models/colors/..., models/guesswhich/...
        default = f"{opts['kind']}_alice" if opts["kind"] == "guesswhich_coop" else opts["kind"]
        out = Path(opts["out"] or f"models/{folder}/{default}.pt")
        result = train(opts["kind"], examples=opts["examples"], epochs=opts["epochs"], seed=opts["seed"],
                       device=device, batch_size=opts["batch_size"], lr=opts["lr"], embed=opts["embed"],
                       hidden=opts["hidden"], progress=opts["verbosity"] > 0)
        sha256, weights = result.save(out)
        plot = out.with_suffix(".png")
        plot_history(result, plot)
        last = result.history[-1]
        self.stdout.write("final: " + ", ".join(f"{k}={v:.3f}" for k, v in last.items() if k != "epoch"))
        self.stdout.write(f"checkpoint {out} ({out.stat().st_size // 1024} KB)")
        if opts["kind"] == "guesswhich_coop":
            self.stdout.write(f"checkpoint {result.qbot_path(out)} (the QBot's answer model, for NeuralQBot)")
        self.stdout.write(f"plot {plot}")
        self.stdout.write(f"sha256 {sha256}")
        self.stdout.write(f"weights_sha256 {weights} (same training, same value; the file's bytes "
                          "also hold torch.save's random serialization id)")
