"""Train a neural agent on generated data (colors kinds, the CoDraw Drawer and Teller, GuessWhich ALICE: also on people's data, --data); write its checkpoint.

    python manage.py train_agent colors_neural_listener [--examples 12000 --epochs 8 --seed 0 \
        --out models/colors/colors_neural_listener.pt --device cpu]
    python manage.py train_agent colors_neural_listener --data filteredCorpus.csv [--from CHECKPOINT \
        --val-fraction 0.15 --examples 0]    # people's rounds (or GroundTalk's colors-csv export)
    python manage.py train_agent guesswhich_neural_alice [--dialogs 1200 --epochs 6 --threads 1]
    python manage.py train_agent guesswhich_neural_alice --data visdial.json --image-ids visdial-ids.json \
        [--from CHECKPOINT --val-fraction 0.15 --dialogs 1200]   # people's dialogs (GroundTalk's visdial export)
    python manage.py train_agent codraw_neural_drawer [--dialogs 600 --epochs 15 --threads 1]
    python manage.py train_agent codraw_neural_drawer --data CoDraw_1_0.json [--from CHECKPOINT \
        --val-fraction 0.15 --dialogs 600]   # people's dialogs (or GroundTalk's codraw export)
    python manage.py train_agent codraw_neural_teller --data CoDraw_1_0.json [--from CHECKPOINT \
        --val-fraction 0.15 --dialogs 300 --val-dialogs 40]   # people's Teller messages beside generated ones
    python manage.py train_agent codraw_neural_teller [--dialogs 300 --epochs 15 --half b --threads 1]
    python manage.py train_agent guesswhich_coop [--from models/guesswhich/guesswhich_neural_alice.pt \
        --games 512 --epochs 15 --anchor 0.2 --threads 1]   # writes guesswhich_coop_alice.pt and _qbot.pt

Unset options take the kind's recipe (``RECIPES``: what the committed checkpoints were trained with).

Writes the checkpoint (state dict + vocabulary + config + version, see games/colors/neural/model.py),
a loss / held-out accuracy plot next to it (same name, ``.png``), and prints the file's sha256
and the weights' sha256 (games/colors/neural/model.py weights_sha256).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from live.models import Match

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
    "codraw_neural_drawer": {"dialogs": 600, "epochs": 15, "hidden": 64, "embed": 32, "lr": 5e-3},
    # CoDraw neural Teller (games/codraw/neural/teller_model.py, teller_train.py), training half b (crosstalk with the Drawer's a)
    "codraw_neural_teller": {"dialogs": 300, "epochs": 15, "hidden": 80, "embed": 32, "lr": 5e-3},
}


COOP_BASE = "models/guesswhich/guesswhich_neural_alice.pt"
# with --data: the recipe of the committed listener trained on people's rounds (docs/games/colors_neural.md)
DATA_RECIPES = {
    # people's rounds plus 6000 generated ones; dropout 0.3, the learning rate on a half cosine
    "colors_neural_listener": {"examples": 6000, "epochs": 12, "hidden": 64, "embed": 48, "lr": 3e-3,
                               "dropout": 0.3, "cosine": True},
    "colors_neural_speaker": {"examples": 6000, "epochs": 8, "hidden": 64, "embed": 32, "lr": 3e-3, "cosine": True},
    # people's dialogs beside the generated recipe's 600 dialogs (--dialogs 0: people's only)
    "codraw_neural_drawer": RECIPES["codraw_neural_drawer"],
    # people's Teller messages beside the generated recipe's 300 dialogs (--dialogs 0: people's only)
    "codraw_neural_teller": RECIPES["codraw_neural_teller"],
    # people's dialogs beside the generated recipe's 1200 dialogs (--dialogs 0: people's only)
    "guesswhich_neural_alice": RECIPES["guesswhich_neural_alice"],
}


class Command(BaseCommand):
    help = "Train a neural agent on generated data (colors kinds: also on people's rounds, --data FILE)."

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
        parser.add_argument("--from", dest="base", default="",
                            help="guesswhich_coop: the supervised ALICE checkpoint both bots start from (default "
                            f"{COOP_BASE}); colors kinds and the CoDraw Drawer and Teller: a checkpoint of the "
                            "same kind to fine-tune")
        parser.add_argument("--data", default="",
                            help="colors kinds: people's rounds to train on, Colors in Context's filteredCorpus.csv "
                            "or GroundTalk's colors-csv export (told apart by the header); split by game id. "
                            "codraw_neural_drawer and codraw_neural_teller: people's dialogs, CoDraw's CoDraw_1_0.json or GroundTalk's codraw "
                            "export; split by dialog key (the train_/val_ prefixes when the file has both, else seeded), "
                            "beside --dialogs generated ones (0: people's only). guesswhich_neural_alice (also the visdial_neural_alice "
                            "model): GroundTalk's visdial or guesswhich-visdial export (VisDial v1.0 JSON) with "
                            "--image-ids; split by dialog, seeded, beside --dialogs generated ones (0: people's only)")
        parser.add_argument("--image-ids", default="",
                            help="guesswhich_neural_alice with --data: the export's side file (--format visdial-image-ids "
                            "or guesswhich-visdial-image-ids) that leads each dialog to its scene")
        parser.add_argument("--min-count", type=int, default=2,
                            help="guesswhich_neural_alice with --data from scratch: a people's answer outside the "
                            "answer vocabulary joins it when given this often in training (rarer: skipped, counted)")
        parser.add_argument("--dropout", type=float, help="colors listener with --data: dropout on the utterance and "
                            "colour vectors (data recipe: see DATA_RECIPES)")
        parser.add_argument("--cosine", action=argparse.BooleanOptionalAction, default=None,
                            help="colors kinds with --data: the learning rate falls to 0 along a half cosine")
        parser.add_argument("--val-fraction", type=float, default=0.15,
                            help="with --data: the share of games held out for validation (seeded by --seed)")
        parser.add_argument("--games", type=int, help="guesswhich_coop: generated games, played again each epoch "
                            "(recipe: 512)")
        parser.add_argument("--pool-size", type=int, default=20, help="guesswhich_coop: images per pool")
        parser.add_argument("--rounds", type=int, default=5, help="guesswhich_coop: dialog rounds per game")
        parser.add_argument("--anchor", type=float,
                            help="guesswhich_coop: weight of the supervised anchor loss (recipe: 0.2)")
        parser.add_argument("--half", choices=("a", "b"), default="b",
                            help="codraw_neural_teller: the training half of the scenes (the Drawer's is a)")
        parser.add_argument("--val-dialogs", type=int, default=40,
                            help="codraw_neural_teller: generated held-out dialogs (validation scenes) for the "
                            "choice and word accuracy; with --data (CoDraw_1_0.json or GroundTalk's codraw export: "
                            "people's Teller messages, split by dialog key as for the Drawer) people's held-out "
                            "messages are scored too")

    held: list | None = None   # with --data: the held-out games' rounds

    def handle(self, *args, **opts):
        import torch   # here: torch and the neural modules (the optional `models` extra) load only when a model trains

        from games.colors.neural.train import plot_history, train

        colors = opts["kind"].startswith("colors_")
        people = colors or opts["kind"] in ("codraw_neural_drawer", "guesswhich_neural_alice")
        people = people or opts["kind"] == "codraw_neural_teller"
        if (opts["data"] or (opts["base"] and opts["kind"] != "guesswhich_coop")) and not people:
            raise CommandError("--data and --from (fine-tuning) are for the colors kinds, codraw_neural_drawer, "
                               "codraw_neural_teller and guesswhich_neural_alice; guesswhich_coop's --from names its "
                               "supervised ALICE.")
        if opts["image_ids"] and not (opts["data"] and opts["kind"] == "guesswhich_neural_alice"):
            raise CommandError("--image-ids goes with guesswhich_neural_alice --data (the export's side file).")
        recipe = DATA_RECIPES if opts["data"] else RECIPES
        for key, value in {"batch_size": 64, **recipe[opts["kind"]]}.items():
            if opts.get(key) is None:
                opts[key] = value
        if opts["batch_size"] < 1 or not opts["lr"] > 0:
            raise CommandError("Need --batch-size >= 1 and --lr > 0.")
        if opts["kind"] == "guesswhich_neural_alice":
            from games.guesswhich.neural.train import plot_history, train as train_alice

            if opts["data"] or opts["base"]:
                train = self.alice_data(opts, train_alice)
            elif opts["dialogs"] < 2 or opts["epochs"] < 1:
                raise CommandError("Need --dialogs >= 2 and --epochs >= 1.")
            else:
                train = lambda kind, *, examples, **kw: train_alice(dialogs=opts["dialogs"], **kw)  # noqa: E731
        elif opts["kind"] == "guesswhich_coop":
            opts["base"] = opts["base"] or COOP_BASE
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

            if opts["data"] or opts["base"]:
                train = self.codraw_data(opts, train_drawer)
            elif opts["dialogs"] < 2 or opts["epochs"] < 1:
                raise CommandError("Need --dialogs >= 2 and --epochs >= 1.")
            else:
                train = lambda kind, *, examples, **kw: train_drawer(kind, examples=opts["dialogs"], **kw)  # noqa: E731
        elif opts["kind"] == "codraw_neural_teller":
            from games.codraw.neural.teller_train import plot_history, train as train_teller

            if opts["data"] or opts["base"]:
                train = self.codraw_teller_data(opts, train_teller)
            elif opts["dialogs"] < 2 or opts["epochs"] < 1 or opts["val_dialogs"] < 1:
                raise CommandError("Need --dialogs >= 2, --epochs >= 1 and --val-dialogs >= 1.")
            else:
                train = lambda kind, *, examples, **kw: train_teller(  # noqa: E731
                    kind, examples=opts["dialogs"], half=opts["half"], val_examples=opts["val_dialogs"], **kw)
        elif opts["data"] or opts["base"]:
            train = self.colors_data(opts, train)
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
        if (result_data := getattr(result, "data", None)) and opts["kind"] == "colors_neural_listener" and self.held:
            from games.colors.neural.train import compare_listeners

            self.stdout.write(f"held-out games ({len(result_data['val_games'])}, {len(self.held)} rounds): accuracy %")
            self.stdout.write("| listener | all | far | split | close |\n| --- | --- | --- | --- | --- |")
            for name, row in compare_listeners(result, self.held, device).items():
                cells = [row.get(f"val_{c}", float("nan")) * 100 for c in ("accuracy", "far", "split", "close")]
                self.stdout.write(f"| {name} | " + " | ".join(f"{v:.1f}" for v in cells) + " |")
        if (result_data := getattr(result, "data", None)) and opts["kind"] == "codraw_neural_drawer":
            conditions = [k for k in last if k.startswith("val_") and k.endswith("_accuracy")]
            self.stdout.write(f"held-out dialogs ({len(result_data['val_dialogs'])}, {result_data['val_rounds']} rounds, "
                              f"split by {result_data['split']}): accuracy % (chance: 1 in the palette's clip arts)")
            self.stdout.write("| " + " | ".join(k[4:-9] for k in conditions) + " |\n|" + " --- |" * len(conditions))
            self.stdout.write("| " + " | ".join(f"{last[k] * 100:.1f}" for k in conditions) + " |")
            self.stdout.write(f"data {result_data['path']} ({result_data['format']}) sha256 {result_data['sha256']}: "
                              f"{result_data['train_rounds']} rounds of {result_data['train_dialogs']} dialogs trained "
                              f"on, {result_data['val_rounds']} rounds of {len(result_data['val_dialogs'])} dialogs held out")
        elif opts["kind"] == "codraw_neural_teller" and (getattr(result, "data", None) or opts["base"]):
            self.teller_report(result, last)
        elif (result_data := getattr(result, "data", None)) and opts["kind"] == "guesswhich_neural_alice":
            self.alice_report(result, last)
        elif result_data := getattr(result, "data", None):
            self.stdout.write(f"data {result_data['path']} ({result_data['format']}) sha256 {result_data['sha256']}: "
                              f"{result_data['train_rounds']} rounds of {result_data['train_games']} games trained "
                              f"on, {result_data['val_rounds']} rounds of {len(result_data['val_games'])} games held out")
        self.stdout.write(f"checkpoint {out} ({out.stat().st_size // 1024} KB)")
        if opts["kind"] == "guesswhich_coop":
            self.stdout.write(f"checkpoint {result.qbot_path(out)} (the QBot's answer model, for NeuralQBot)")
        self.stdout.write(f"plot {plot}")
        self.stdout.write(f"sha256 {sha256}")
        self.stdout.write(f"weights_sha256 {weights} (same training, same value; the file's bytes "
                          "also hold torch.save's random serialization id)")

    @staticmethod
    def base_checkpoint(opts: dict, load_checkpoint):
        """The ``--from`` checkpoint loaded with the game's ``load_checkpoint`` (None without one)."""
        if not opts["base"]:
            return None
        if not Path(opts["base"]).is_file():
            raise CommandError(f"--from: no checkpoint at {opts['base']}.")
        try:
            return load_checkpoint(opts["base"], opts["device"], expect=opts["kind"])
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(f"--from: {exc}") from None

    @staticmethod
    def bound(train):
        """The training call ``handle`` makes (``train(kind, examples=..., epochs=..., ...)``), bound
        by a ``*_data`` method: ``examples`` is the generated data's size, which that method has
        chosen already (``--dialogs``); a ValueError of the training (data it cannot use) is a
        CommandError."""
        def call(kind, *, examples, **kw):
            try:
                return train(kind, **kw)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        return call

    @staticmethod
    def read_data(opts: dict, read_corpus, split, errors: tuple):
        """The ``--data`` file read with the game's ``read_corpus`` and its split (``split(corpus)``);
        a missing file, or one the reader or the split refuses with ``errors``, is a CommandError."""
        if not Path(opts["data"]).is_file():
            raise CommandError(f"--data: no file at {opts['data']}.")
        try:
            corpus = read_corpus(opts["data"])
            return corpus, split(corpus)
        except errors as exc:
            raise CommandError(f"--data: {exc}") from None

    @staticmethod
    def provenance(opts: dict, corpus) -> dict:
        """What every checkpoint trained ``--data`` records of its data (and every seat it plays,
        ``data_sha256``): the file's name, format and sha256, and how it was split."""
        return {"path": Path(opts["data"]).name, "format": corpus.format, "sha256": corpus.sha256,
                "val_fraction": opts["val_fraction"], "split_seed": opts["seed"]}

    def colors_data(self, opts: dict, train):
        """``train`` bound to people's rounds (``--data``, split by game) and a ``--from`` checkpoint."""
        from games.colors.neural.corpus import read_corpus, split_by_game
        from games.colors.neural.model import load_checkpoint

        if opts["epochs"] < 1 or opts["examples"] < 0 or not 0 < opts["val_fraction"] < 1:
            raise CommandError("Need --epochs >= 1, --examples >= 0 and 0 < --val-fraction < 1.")
        base = self.base_checkpoint(opts, load_checkpoint)
        data, val, meta = None, None, None
        if opts["data"]:
            corpus, (data, val, val_games) = self.read_data(
                opts, read_corpus, lambda c: split_by_game(c.rounds, opts["val_fraction"], opts["seed"]),
                (ValueError, KeyError, UnicodeDecodeError))
            meta = {**self.provenance(opts, corpus),
                    "rows": corpus.rows, "rounds": len(corpus.rounds), "games": len(corpus.games),
                    "train_rounds": len(data), "train_games": len(corpus.games) - len(val_games),
                    "val_rounds": len(val), "val_games": val_games}
            self.stdout.write(f"{corpus.format} {opts['data']}: {len(corpus.rounds)} rounds of {len(corpus.games)} "
                              f"games; {len(val_games)} games ({len(val)} rounds) held out for validation")
        elif opts["examples"] < 10:
            raise CommandError("Need --examples >= 10 without --data.")
        self.held = val
        extra = {"dropout": opts.get("dropout") or 0.0, "cosine": bool(opts.get("cosine"))}
        return lambda kind, **kw: train(kind, data=data, val_data=val, base=base, data_meta=meta, **extra, **kw)

    def codraw_data(self, opts: dict, train):
        """``train`` (the Drawer's) bound to people's dialogs (``--data``, split by dialog key) and a
        ``--from`` checkpoint; with --data, ``--dialogs`` generated dialogs are trained on beside them."""
        from games.codraw.neural.corpus import read_corpus, split_by_dialog
        from games.codraw.neural.model import load_checkpoint

        if opts["epochs"] < 1 or opts["dialogs"] < 0 or not 0 < opts["val_fraction"] < 1:
            raise CommandError("Need --epochs >= 1, --dialogs >= 0 and 0 < --val-fraction < 1.")
        base = self.base_checkpoint(opts, load_checkpoint)
        data, val, meta = None, None, None
        if opts["data"]:
            corpus, (data, val, val_dialogs, how) = self.read_data(
                opts, read_corpus, lambda c: split_by_dialog(c.examples, opts["val_fraction"], opts["seed"]),
                (ValueError, KeyError, TypeError))
            meta = {**self.provenance(opts, corpus),
                    "dialogs": len(corpus.dialogs), "rounds": len(corpus.examples),
                    "skipped_rounds": corpus.skipped_rounds, "train_rounds": len(data),
                    "train_dialogs": len({e["dialog"] for e in data}), "val_rounds": len(val),
                    "val_dialogs": val_dialogs, "split": how}
            self.stdout.write(f"{corpus.format} {opts['data']}: {len(corpus.examples)} rounds of {len(corpus.dialogs)} "
                              f"dialogs ({corpus.skipped_rounds} rounds skipped: no Teller message or only removals); "
                              f"{len(val_dialogs)} dialogs ({len(val)} rounds) held out, split by {how}")
        elif opts["dialogs"] < 2:
            raise CommandError("Need --dialogs >= 2 without --data.")

        return self.bound(lambda kind, **kw: train(kind, examples=opts["dialogs"], data=data, val_data=val, base=base,
                                                   data_meta=meta, **kw))

    def codraw_teller_data(self, opts: dict, train):
        """``train`` (the Teller's) bound to people's Teller messages (``--data``: the Drawer's reader
        and split by dialog key, teller_train.people_examples) and a ``--from`` checkpoint; ``--dialogs``
        generated dialogs of ``--half`` are trained on beside them."""
        from games.codraw.neural.corpus import read_corpus, split_by_dialog
        from games.codraw.neural.model import load_checkpoint
        from games.codraw.neural.teller_train import people_examples

        if opts["epochs"] < 1 or opts["dialogs"] < 0 or opts["val_dialogs"] < 0 or not 0 < opts["val_fraction"] < 1:
            raise CommandError("Need --epochs >= 1, --dialogs >= 0, --val-dialogs >= 0 and 0 < --val-fraction < 1.")
        base = self.base_checkpoint(opts, load_checkpoint)
        data, val, meta = None, None, None
        if opts["data"]:
            corpus, (rounds, held, val_dialogs, how) = self.read_data(
                opts, read_corpus, lambda c: split_by_dialog(c.examples, opts["val_fraction"], opts["seed"]),
                (ValueError, KeyError, TypeError))
            data, left_train = people_examples(rounds, corpus.targets)
            val, left_val = people_examples(held, corpus.targets)
            if not val:
                raise CommandError(f"--data: in the {len(val_dialogs)} held-out dialogs no Teller message was followed "
                                   "by the Drawer drawing a piece of the target: nothing to validate the Teller on.")
            meta = {**self.provenance(opts, corpus),
                    "dialogs": len(corpus.dialogs), "rounds": len(corpus.examples),
                    "skipped_rounds": corpus.skipped_rounds, "train_turns": len(data),
                    "train_dialogs": len({e["dialog"] for e in data}), "train_left_out": left_train,
                    "val_turns": len(val), "val_left_out": left_val, "val_dialogs": val_dialogs, "split": how}
            self.stdout.write(f"{corpus.format} {opts['data']}: {len(corpus.examples)} rounds of {len(corpus.dialogs)} "
                              f"dialogs; Teller turns whose Drawer drew a target piece: {len(data)} trained on, "
                              f"{len(val)} of {len(val_dialogs)} dialogs held out (split by {how}); "
                              f"{left_train + left_val} rounds without one left out")
        elif opts["dialogs"] < 2:
            raise CommandError("Need --dialogs >= 2 without --data.")

        return self.bound(lambda kind, **kw: train(kind, examples=opts["dialogs"], half=opts["half"],
                                                   val_examples=opts["val_dialogs"], data=data, val_data=val,
                                                   base=base, data_meta=meta, **kw))

    def teller_report(self, result, last: dict) -> None:
        """The Teller's held-out figures beside their baselines (and the ``--from`` checkpoint's, before)."""
        before, data = result.args.get("before"), result.data
        rows = [("neural Teller", last)] + ([("before fine-tuning (--from)", before)] if before else [])
        if data:
            self.stdout.write(f"held-out people's Teller messages ({data['val_turns']} turns of "
                              f"{len(data['val_dialogs'])} dialogs, split by {data['split']}; teacher-forced)")
            self.stdout.write("| | piece the Drawer drew % | words right % | perplexity |\n| --- | --- | --- | --- |")
            for name, row in rows:
                self.stdout.write(f"| {name} | {row['val_people_choice_accuracy'] * 100:.1f} | "
                                  f"{row['val_people_token_accuracy'] * 100:.1f} | {row['val_people_perplexity']:.1f} |")
            self.stdout.write(f"| baseline: uniform pick / most frequent word / unigram of people's training messages | "
                              f"{last['people_chance_choice'] * 100:.1f} | {last['people_majority_token_accuracy'] * 100:.1f} "
                              f"| {last['people_unigram_perplexity']:.1f} |")
            self.stdout.write(f"(held-out words outside the vocabulary: {last['val_people_unk_share'] * 100:.1f} %)")
        self.stdout.write("generated held-out dialogs: " + "; ".join(
            f"{name}: next piece or stop {row['val_choice_accuracy'] * 100:.1f} %, words "
            f"{row['val_token_accuracy'] * 100:.1f} %" for name, row in rows)
            + f" (most frequent word {last['majority_token_accuracy'] * 100:.1f} %)")
        if data:
            self.stdout.write(f"data {data['path']} ({data['format']}) sha256 {data['sha256']}: {data['train_turns']} "
                              f"Teller turns of {data['train_dialogs']} dialogs trained on, {data['val_turns']} "
                              f"held out")

    @staticmethod
    def match_scene(match_id) -> dict | None:
        """``{"scene", "caption"}`` of a match of this database (None when it is not here): the scenes
        of dialogs the side file cannot lead to by a seed (imported CLEVR scenes)."""
        try:
            content = Match.objects.filter(id=match_id).values_list("content", flat=True).first()
        except (ValueError, ValidationError, DatabaseError):
            return None
        if not isinstance(content, dict):
            return None
        scene = content.get("scene")
        if scene is None and "pool" in content:   # a GuessWhich match: its secret image
            scene = next((p["scene"] for p in content["pool"] if p.get("id") == content.get("secret_id")), None)
        return {"scene": scene, "caption": content.get("caption")} if scene else None

    def alice_data(self, opts: dict, train):
        """``train`` (ALICE's) bound to people's dialogs (``--data`` with ``--image-ids``, split by
        dialog) and a ``--from`` checkpoint; ``--dialogs`` generated dialogs are trained on beside them."""
        from games.guesswhich.neural.corpus import read_corpus, split_by_dialog
        from games.guesswhich.neural.model import load_checkpoint

        if opts["epochs"] < 1 or opts["dialogs"] < 0 or not 0 < opts["val_fraction"] < 1 or opts["min_count"] < 1:
            raise CommandError("Need --epochs >= 1, --dialogs >= 0, 0 < --val-fraction < 1 and --min-count >= 1.")
        if opts["image_ids"] and not Path(opts["image_ids"]).is_file():
            raise CommandError(f"--image-ids: no file at {opts['image_ids']}.")
        base = self.base_checkpoint(opts, load_checkpoint)
        data, val, meta = None, None, None
        if opts["data"]:
            corpus, (data, val, val_dialogs) = self.read_data(
                opts, lambda path: read_corpus(path, opts["image_ids"], lookup=self.match_scene),
                lambda c: split_by_dialog(c.examples, opts["val_fraction"], opts["seed"]), (ValueError,))
            meta = {**self.provenance(opts, corpus),
                    "image_ids": Path(opts["image_ids"]).name, "image_ids_sha256": corpus.side_sha256,
                    "dialogs": len(corpus.dialogs), "rounds": len(corpus.examples), "skipped_dialogs": corpus.skipped,
                    "train_rounds": len(data), "train_dialogs": len(corpus.dialogs) - len(val_dialogs),
                    "val_rounds": len(val), "val_dialogs": val_dialogs, "split": "seeded"}
            self.stdout.write(f"{corpus.format} {opts['data']}: {len(corpus.examples)} rounds of {len(corpus.dialogs)} "
                              f"dialogs (dialogs skipped: {corpus.skipped or 'none'}); {len(val_dialogs)} dialogs "
                              f"({len(val)} rounds) held out, split by dialog")
        elif opts["dialogs"] < 2:
            raise CommandError("Need --dialogs >= 2 without --data.")

        return self.bound(lambda kind, **kw: train(dialogs=opts["dialogs"], data=data, val_data=val, base=base,
                                                   data_meta=meta, min_count=opts["min_count"], **kw))

    def alice_report(self, result, last: dict) -> None:
        """People's held-out dialogs: accuracy per answer type beside the majority answer's; the mapping's counts."""
        data, majority = result.data, result.args["majority_val"]
        mapping = data["answer_mapping"]
        types = [k[4:-9] for k in last if k.startswith("val_") and k.endswith("_accuracy") and k != "val_accuracy"]
        self.stdout.write(f"held-out dialogs ({len(data['val_dialogs'])}, {mapping['val_rounds']} rounds, split by "
                          f"dialog): accuracy % by the person's answer type")
        self.stdout.write("| | all | " + " | ".join(types) + " |\n|" + " --- |" * (len(types) + 2))
        self.stdout.write("| neural ALICE | " + " | ".join(f"{last[k] * 100:.1f}" for k in
                                                         ["val_accuracy"] + [f"val_{t}_accuracy" for t in types]) + " |")
        self.stdout.write(f"| majority ({majority['answer']!r}) | " + " | ".join(
            f"{majority[t] * 100:.1f}" for t in ["all"] + types) + " |")
        self.stdout.write(f"answers: {mapping['train_mapped']} of {mapping['train_rounds']} training rounds on the "
                          f"vocabulary ({len(mapping['added_answers'])} answers added, e.g. {mapping['added_answers'][:3]}); "
                          f"{mapping['skipped_out_of_vocabulary']} skipped (outside it: "
                          f"{mapping['skipped_examples'][:5]}); {mapping['val_out_of_vocabulary']} held-out rounds "
                          "outside it (counted wrong)")
        self.stdout.write(f"data {data['path']} ({data['format']}) sha256 {data['sha256']}; side file "
                          f"{data['image_ids']} sha256 {data['image_ids_sha256']}: {data['train_rounds']} rounds of "
                          f"{data['train_dialogs']} dialogs trained on, {data['val_rounds']} rounds of "
                          f"{len(data['val_dialogs'])} dialogs held out")
