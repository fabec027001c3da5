"""Play agent-agent matches through the same service humans use, and print the game's metrics.

    python manage.py simulate colors --matches 20 --seat speaker=colors_lexicon_speaker \
        --seat listener=colors_literal_listener

A batch's arms (issue 24; live/arms.py) played agent against agent, ``--matches`` per arm, each
match recorded under the batch with its arm (``Match.arm``), so the monitor's per-arm statistics
run on a pilot before anyone is paid::

    python manage.py simulate --batch pilot --arms --matches 30 --seat speaker=colors_lexicon_speaker
    python manage.py simulate --batch pilot --arm pragmatic --matches 30 --seat speaker=...

Each arm's agents play their seats; the seats people would play take the ``--seat`` agents, else the
batch's own agents. The settings are the batch's, the arm's overrides, then ``--config``. A
human-human arm is played only when ``--seat`` names an agent for every role (``--arms`` skips it
otherwise, saying so).
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from agents.registry import UnknownAgent, agent_instance, get_agent_spec
from live import arms as batch_arms
from games.base import IllegalAction
from live.models import Batch, Match, Seat
from games.registry import UnknownGame, game_named, get_game
from live.services import SeatSpec, match_apply_action, match_create
from agents.seats import seats_record_model


def resolve_game(name: str):
    try:
        return game_named(name)
    except UnknownGame as exc:
        raise CommandError(exc.args[0]) from None


def load_content_file(game, path: str) -> list[dict]:
    """Content items from a recorded file, through the game's ``content.import_file``."""
    importer = getattr(game.content, "import_file", None)
    if importer is None:
        raise CommandError(f"{game.id} cannot import content files")
    try:
        items = importer(path)
    except (OSError, ValueError) as exc:
        raise CommandError(f"Cannot read {path}: {exc}") from None
    if not items:
        raise CommandError(f"{path} holds no playable content")
    return items


def play_match(match: Match, agents: dict[str, str], max_steps: int = 100_000) -> Match:
    """Drive every seat with its agent until the game ends (each move through the service)."""
    rules = get_game(match.game_id).rules
    for _ in range(max_steps):
        match.refresh_from_db(fields=["state", "seq", "status", "outcome"])
        if match.status != Match.Status.ACTIVE:
            return match
        moved = False
        for role in rules.to_act(match.state):
            agent = agent_instance(agents[role])
            action = agent.act(rules.view_for(match.state, role))
            if action is None:
                continue
            try:
                match_apply_action(match_id=match.id, role=role, action=action,
                                   client_action_id=f"sim:{role}:{match.seq}", expected_seq=match.seq)
            except IllegalAction as exc:
                raise CommandError(f"{agents[role]} made an illegal move in {match.id}: {exc}") from exc
            if callable(getattr(agent, "seat_record", None)):   # a model agent: its checkpoint hash on the seat

                seats_record_model(turns=[(str(match.id), role)], record=agent.seat_record())
            moved = True
            break
        if not moved:
            raise CommandError(f"Match {match.id} is stuck: no agent in {rules.to_act(match.state)} acts.")
    raise CommandError(f"Match {match.id} did not end within {max_steps} moves.")


class Command(BaseCommand):
    help = "Play agent-agent matches through the match service and print the game's metrics."

    @staticmethod
    def config(opts) -> dict:
        try:
            config = json.loads(opts["config"])
        except ValueError as exc:
            raise CommandError(f"--config is not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise CommandError("--config is a JSON object, e.g. '{\"rounds\": 10}'")
        return config

    def add_arguments(self, parser):
        parser.add_argument("game", nargs="?", default="",
                            help="game id or short name (colors, codraw, guesswhich, visdial); with --arms or --arm "
                                 "the batch's game")
        parser.add_argument("--matches", type=int, default=10, help="matches (with --arms: per arm)")
        parser.add_argument("--seat", action="append", default=[], metavar="ROLE=AGENT")
        parser.add_argument("--seed", type=int, default=0, help="first seed; match i uses seed + i")
        parser.add_argument("--config", default="{}", help="game settings as JSON, e.g. '{\"rounds\": 10}'")
        parser.add_argument("--content-file", default="",
                            help="play recorded content (e.g. a CoDraw_1_0.json) instead of generated; match i uses item i")
        parser.add_argument("--batch", default="", help="record the matches under this batch slug (created if new)")
        parser.add_argument("--json", action="store_true", help="print the outcomes as JSON lines too")
        parser.add_argument("--plot", default="", help="write the game's metrics plot to this PNG file")
        parser.add_argument("--arms", action="store_true",
                            help="play each of the --batch's arms agent against agent, --matches per arm")
        parser.add_argument("--arm", default="", metavar="NAME", help="play only this arm of the --batch")

    def check_seats(self, game, seats: dict[str, str]) -> None:
        for role, name in seats.items():
            try:
                spec = get_agent_spec(name)
            except UnknownAgent as exc:
                raise CommandError(str(exc)) from None
            if spec.game_id != game.id or spec.role != role:
                raise CommandError(f"{name} plays {spec.role} in {spec.game_id}, not {role} in {game.id}")

    def play(self, game, seats, config, opts, *, batch=None, items=None, arm: str = "", first_seed: int = 0):
        outcomes = []
        n = opts["matches"]
        for i in tqdm(range(n), desc=f"{game.id} {arm or 'matches'}", unit="match", disable=n < 2):
            content = items[i % len(items)] if items else None
            extra = {"arm": arm, "assignment": {"unit": "simulation", "index": i, "seed": batch.arm_seed}} if arm else {}
            match = match_create(game_id=game.id, batch=batch, seed=first_seed + i, config=config, content=content,
                                 seats={r: SeatSpec(Seat.Kind.AGENT, agent_name=a) for r, a in seats.items()},
                                 wake_agents=False, **extra)
            match = play_match(match, seats)
            outcome = {**match.outcome, "match_id": str(match.id), "seed": match.seed}
            if arm:
                outcome["arm"] = arm
            outcomes.append(outcome)
            if opts["json"]:
                self.stdout.write(json.dumps(outcome))
        summarize = getattr(game.agents, "summarize", None)
        self.stdout.write(("arm " + arm + ": " if arm else "") + "seats: " + ", ".join(f"{r}={a}" for r, a in seats.items()))
        if summarize:
            self.stdout.write(summarize(outcomes))
        return outcomes

    def handle_arms(self, opts, seats: dict[str, str], config: dict) -> None:
        if not opts["batch"]:
            raise CommandError("--arms and --arm play a batch's arms: name it with --batch SLUG")
        batch = Batch.objects.filter(slug=opts["batch"]).first()
        if batch is None:
            raise CommandError(f"No batch {opts['batch']!r}: create it (with its arms) in the batch builder first")
        if not batch.arms:
            raise CommandError(f"Batch {batch.slug} has no arms")
        game = resolve_game(batch.game_id)
        if opts["game"] and resolve_game(opts["game"]).id != game.id:
            raise CommandError(f"Batch {batch.slug} plays {game.id}, not {opts['game']}")
        arms = batch_arms.arms_of(batch)
        if opts["arm"]:
            arms = [a for a in arms if a.name == opts["arm"]]
            if not arms:
                names = ", ".join(a.name for a in batch_arms.arms_of(batch))
                raise CommandError(f"Batch {batch.slug} has no arm {opts['arm']!r} (its arms: {names})")
        items = load_content_file(game, opts["content_file"]) if opts["content_file"] else None
        played = 0
        for k, arm in enumerate(arms):
            agents = {r: a for r, a in {**(batch.agents or {}), **seats, **arm.agents}.items() if a}
            missing = [r for r in game.roles if r not in agents]
            if missing:
                why = (f"arm {arm.name!r} has no agent for {', '.join(missing)}: give --seat "
                       + " ".join(f"{r}=AGENT" for r in missing))
                if opts["arm"]:
                    raise CommandError(why)
                self.stdout.write(f"skipped {why}")
                continue
            self.check_seats(game, agents)
            arm_config = {**(batch.config or {}), **arm.config, **config}
            # each arm plays the same seeds: the arms differ by their agents and settings alone
            self.play(game, agents, arm_config, opts, batch=batch, items=items, arm=arm.name,
                      first_seed=opts["seed"])
            played += 1
        if not played:
            raise CommandError("No arm could be played: name agents for the people's seats with --seat")

    def handle(self, *args, **opts):
        seats = dict(s.split("=", 1) for s in opts["seat"] if "=" in s)
        if len(seats) != len(opts["seat"]):
            raise CommandError("--seat takes ROLE=AGENT")
        if opts["arms"] or opts["arm"]:
            if opts["plot"]:
                raise CommandError("--plot draws one set of matches: not with --arms or --arm")
            return self.handle_arms(opts, seats, self.config(opts))
        if not opts["game"]:
            raise CommandError("Name the game (or play a batch's arms with --batch SLUG --arms)")
        game = resolve_game(opts["game"])
        missing = set(game.roles) - set(seats)
        if missing:
            raise CommandError(f"Name an agent for every seat: missing {', '.join(sorted(missing))}")
        self.check_seats(game, seats)
        config = self.config(opts)
        batch = None
        if opts["batch"]:
            batch, _ = Batch.objects.get_or_create(
                slug=opts["batch"], defaults={"title": opts["batch"], "game_id": game.id,
                                              "pairing": Batch.Pairing.AGENT_AGENT, "agents": seats})
        items = load_content_file(game, opts["content_file"]) if opts["content_file"] else None
        outcomes = self.play(game, seats, config, opts, batch=batch, items=items, first_seed=opts["seed"])
        if opts["plot"]:
            plot = getattr(game.agents, "plot", None)
            if plot is None:
                raise CommandError(f"{game.id} has no plot")
            plot(outcomes, opts["plot"])
            self.stdout.write(f"plot written to {opts['plot']}")
