"""The live-match platform's records: batches, stored content, matches, seats and the event log.

PostgreSQL is the source of truth. ``MatchEvent`` rows are the durable, ordered log of a match:
``(match, seq)`` is unique and ``seq`` is contiguous from 1. ``Match.state`` is a snapshot that
always equals replaying the log (``live.services.match_replay``); ``Match.seq`` is the last seq written.

These models were defined in games/models.py until issue 22; their tables keep the names they had
(``games_batch``, ``games_match``, ...: each ``Meta.db_table``), and the move was state-only
(live/migrations/0001_initial.py, games/migrations/0015_move_models_out.py). The crowd's side
(participants, studies, onboarding, questionnaires) is in crowd/models.py.
"""
from __future__ import annotations

import secrets
import uuid

from django.db import models


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_code() -> str:
    return "GT-" + secrets.token_hex(5).upper()


def new_lab_key() -> str:
    return secrets.token_hex(8)


def default_entry_kinds() -> list[str]:
    return ["mturk", "prolific", "lab"]


def new_arm_seed() -> int:
    return secrets.randbelow(2**31)


class Batch(models.Model):
    """A batch of games (a HIT group / study) as a researcher defines it."""

    class Pairing(models.TextChoices):
        HUMAN_HUMAN = "human-human"
        HUMAN_AGENT = "human-agent"
        AGENT_AGENT = "agent-agent"

    class OnTimeout(models.TextChoices):
        AGENT = "agent", "pair with an agent"
        LEAVE = "leave", "leave with pay and a code"

    class OnPartnerAbsent(models.TextChoices):
        REQUEUE = "requeue", "back to the waiting room, first in the queue"
        END = "end", "end with the pay for partner_left"

    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    game_id = models.CharField(max_length=64)
    pairing = models.CharField(max_length=16, choices=Pairing.choices, default=Pairing.HUMAN_HUMAN)
    human_roles = models.JSONField(default=list, blank=True,
                                   help_text="Roles humans may take (empty: all the game's roles).")
    agents = models.JSONField(default=dict, blank=True,
                              help_text='Agent per role for agent seats, e.g. {"speaker": "colors_lexicon_speaker"}.')
    games_per_worker = models.PositiveIntegerField(default=1)
    max_wait_s = models.PositiveIntegerField(default=120)
    inactivity_limit_s = models.PositiveIntegerField(
        default=600, help_text="A match with no action for this long is aborted (reason 'inactive') and its "
                               "workers are let go; 0: never.")
    turn_limit_s = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="A person who does not take their turn (the move the game waits for: chat alone does not count) "
                  "for this long has timed out: the partner may end the game with full pay, and the one who "
                  "stalled gets the pay for 'timed_out'. Empty: the game's default; 0: never.")
    on_timeout = models.CharField(max_length=8, choices=OnTimeout.choices, default=OnTimeout.LEAVE)
    on_partner_absent = models.CharField(
        max_length=8, choices=OnPartnerAbsent.choices, default=OnPartnerAbsent.REQUEUE,
        help_text="When a paired partner never opens the game (live/presence.py): the worker who came goes back "
                  "to the waiting room ahead of everyone, keeping the time already waited, or ends with the pay "
                  "for partner_left.")
    config = models.JSONField(default=dict, blank=True, help_text="Game settings (e.g. rounds).")
    content_pool = models.JSONField(default=list, blank=True,
                                    help_text="Ids of Content rows to draw from (empty: generate from seeds).")
    pay_cents = models.PositiveIntegerField(default=0)
    bonus_cents = models.PositiveIntegerField(default=0)
    instructions = models.TextField(blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    # Who may enter, and what each way out earns (crowd/; docs/crowd.md).
    entry_kinds = models.JSONField(
        default=default_entry_kinds, blank=True,
        help_text='How workers may enter: any of "mturk", "prolific", "lab" (signed per-person links from the '
                  'lab links page); "demo" (open entry, embedded mode only).')
    allow_device_change = models.BooleanField(
        default=False, help_text="A worker may move to another browser with a one-time code shown in the first "
                                 "one (which then loses the seat).")
    lab_key = models.CharField(max_length=32, default=new_lab_key,
                               help_text="Part of every lab link's signature: change it to revoke all lab links.")
    exit_pay = models.JSONField(
        default=dict, blank=True,
        help_text='Pay per outcome, e.g. {"no_partner": {"pay": "partial", "cents": 50}, "returned_early": '
                  '{"pay": "none"}}; outcomes not named keep their defaults (docs/crowd.md).')
    prolific_codes = models.JSONField(
        default=dict, blank=True,
        help_text='Prolific completion code per outcome, as Prolific issued them, e.g. {"completed": "C1A2B3C4"}.')
    expected_minutes = models.PositiveIntegerField(
        default=10, help_text="The time a worker should expect to spend (shown on the MTurk preview).")
    # Exclusion and quality (issue 12, item 3; crowd/studies.py, crowd/onboarding.py, crowd/questionnaire.py).
    excluded_studies = models.ManyToManyField(
        "crowd.Study", blank=True, related_name="excluding_batches",
        help_text="A worker who took part in any batch of these studies cannot enter this batch.")
    onboarding = models.CharField(
        max_length=16, blank=True, default="",
        choices=[("", "none"), ("quiz", "instructions quiz"), ("practice", "practice round against an agent")],
        help_text="What a worker must pass before being paired: the game's quiz or practice round "
                  "(games/<game>/onboarding.py); the result is kept per worker, game and version and reused by "
                  "other batches.")
    # Who is who (issue 21; crowd/verify.py): what an unverified worker (the platform could not be
    # asked) may be paired with, and whether two people from one client address may be paired.
    unverified_pairing = models.CharField(
        max_length=8, choices=[("agent", "only with an agent"), ("none", "not at all until verified")],
        default="agent",
        help_text="A worker whose id MTurk or Prolific could not confirm at entry (the platform did not answer) "
                  "plays only against an agent, or is not paired until the platform confirms them. Either way "
                  "they are verified again before any pay.")
    allow_shared_address = models.BooleanField(
        default=False,
        help_text="Pair two people who come from the same client address (a lab whose machines share one "
                  "address). Off: never pair them (one person in two browsers).")
    questionnaire = models.JSONField(
        null=True, blank=True, default=None,
        help_text='Post-game questions: a list of {"id", "kind": "likert" | "text", "text", "about": "partner" | '
                  '"study", "required", "min", "max"}. Left null: the game\'s default (GuessWhich: its six '
                  'feedback ratings of the partner); []: no questionnaire.')
    # Arms of an experiment (issue 24; live/arms.py): people are randomised between them in one
    # batch. Empty: one implicit arm, the batch's own agents and settings (as before arms).
    arms = models.JSONField(
        default=list, blank=True,
        help_text='Arms of the experiment: a list of {"name", "agents": {role: agent name}, "config": {setting '
                  'overrides}, "weight": positive int (default 1), "human_roles": [...]}; an arm with no agents is '
                  'human-human. Empty: one arm, the batch\'s own agents.')

    class Assignment(models.TextChoices):
        BETWEEN = "between", "between subjects (each seating draws an arm)"
        WITHIN = "within", "within subjects (each person meets every arm, counterbalanced)"

    assignment = models.CharField(
        max_length=8, choices=Assignment.choices, default=Assignment.BETWEEN,
        help_text="Between subjects: blocked randomisation of seatings over the arms. Within subjects "
                  "(games per worker > 1): each person plays the arms in the order of a row of a balanced "
                  "Latin square, rows drawn by the same blocked scheme.")
    arm_seed = models.BigIntegerField(
        null=True, blank=True,
        help_text="Seed of the arms' randomisation (blocks shuffled by a generator seeded with it and the block "
                  "number); drawn and recorded when the batch is saved without one.")
    # What the batch may spend (issue 24, item 5; crowd/costs.py): crowd pay with the platforms'
    # fees plus the model calls' cost. Reached: no new entries ("the study is full").
    budget_usd = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True,
        help_text="Budget in US dollars: crowd pay (base, bonuses, the platform's fee) and model cost. When the money "
                  "committed (completed and in-progress participants at the base rate, bonuses, model calls so far) "
                  "plus one more participant would pass it, new entries are refused. Empty: no budget.")

    # Questions at the end of a match (issue 24, items 2 and 4; crowd/end_questions.py), and how long
    # an agent arm of a blind batch keeps the person waiting (live/arms.py, blind_wait_s).
    ask_partner_kind = models.BooleanField(
        default=False,
        help_text='After each match: "Was your partner a person or an AI?" with a confidence from 1 to 5 '
                  "(stored per match and person).")
    ask_preference = models.BooleanField(
        default=False,
        help_text="Within subjects: after a person has played two arms, \"which partner would you rather play with "
                  "again?\" and \"which partner understood you better?\" (the partners named only as first and "
                  "second).")
    blind_wait_min_s = models.PositiveIntegerField(
        default=5, help_text="Blind batches (human-human arms beside agent arms): an agent arm seats the person after a "
                             "wait drawn like a person partner's arrival: from the batch's observed human-human waits "
                             "once there are enough, else uniformly from this minimum to the maximum below.")
    blind_wait_max_s = models.PositiveIntegerField(
        default=45, help_text="The top of that range (every wait stays under the batch's own wait).")

    class Meta:
        db_table = "games_batch"

    def save(self, *args, **kwargs):
        if self.arm_seed is None:
            self.arm_seed = new_arm_seed()
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "arm_seed"}
        super().save(*args, **kwargs)


    def __str__(self) -> str:
        return f"{self.slug} ({self.game_id}, {self.pairing})"


class Content(models.Model):
    """A stored stimulus (scene, pool, color context) with its provenance."""

    game_id = models.CharField(max_length=64, db_index=True)
    key = models.CharField(max_length=200)
    data = models.JSONField()
    provenance = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "games_content"
        constraints = [models.UniqueConstraint(fields=["game_id", "key"], name="content_game_key_unique")]


class Match(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        FINISHED = "finished"
        TIMED_OUT = "timed_out"   # the game clock ran out (CoDraw's 20 minutes): ended by the rules
        ABORTED = "aborted"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="matches")
    game_id = models.CharField(max_length=64)
    seed = models.BigIntegerField()
    config = models.JSONField(default=dict)
    content = models.JSONField()
    content_ref = models.ForeignKey(Content, null=True, blank=True, on_delete=models.SET_NULL)
    state = models.JSONField()
    # The part of the snapshot that never changes during a match (the keys a rules module lists in
    # STATIC_STATE_KEYS, e.g. the colour game's 50 rounds). Stored once, when the match is created
    # (or, for a match created before that, by its first action on PostgreSQL), so that each action
    # rewrites only the rest (docs/bench.md); None for a game without static keys.
    # ``Match.state`` as loaded through the ORM is always the whole snapshot (``from_db``).
    state_static = models.JSONField(null=True, blank=True)
    agent_seats = models.JSONField(default=dict, help_text="role -> agent name, for the seats agents play.")
    seq = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    outcome = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When an agent seat became due to act (the last write left it among ``to_act``), else None.
    # Written by every action in the same statement as the snapshot, so the watchdog
    # (live/watchdog.py) finds a match stuck on an agent from the database alone, whatever
    # happened to the broker message that asked the agent to act.
    agent_due_since = models.DateTimeField(null=True, blank=True)
    # When the game clock runs out (``config["time_limit_s"]`` after the start), else None.
    deadline_at = models.DateTimeField(null=True, blank=True)
    # No action for this long (from ``updated_at``) and the watchdog aborts the match as
    # ``inactive``: everyone has left. From the batch (``Batch.inactivity_limit_s``); None: never.
    inactivity_limit = models.DurationField(null=True, blank=True)
    # The turn clock (issue 20): since when the person (a human seat) the game waits on has been
    # due, restarted only by an action that takes the turn (games.base.turn_taken: chat that is not
    # the awaited move does not); None when no human seat is due or the match has no turn limit.
    # Written by every action in the same statement as the snapshot (live/match_store.py).
    turn_since = models.DateTimeField(null=True, blank=True)
    # From the batch (``Batch.turn_limit_s``, else the game's ``TURN_LIMIT_S``); None: never.
    turn_limit = models.DurationField(null=True, blank=True)
    # The seat that did not take its turn within the limit (the watchdog records it, with a
    # ``turn_timed_out`` event), and when; cleared when it takes its turn while its partner is there.
    stalled_role = models.CharField(max_length=32, blank=True, default="")
    stalled_at = models.DateTimeField(null=True, blank=True)
    # The batch's arm this match was played in (live/arms.py; "" outside a batch, or a seating
    # outside the randomisation such as on_timeout's agent) and how it was drawn:
    # {"unit": "seating" | "person", "index", "block", "seed", and within subjects "order" (the
    # person's row of the Latin square, arm names), "row", "position"}.
    arm = models.CharField(max_length=64, blank=True, default="", db_index=True)
    assignment = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "games_match"
        indexes = [
            models.Index(fields=["turn_since"], name="match_turn_due",
                         condition=models.Q(status="active", turn_since__isnull=False)),
            models.Index(fields=["agent_due_since"], name="match_agent_due",
                         condition=models.Q(status="active", agent_due_since__isnull=False)),
            models.Index(fields=["deadline_at"], name="match_deadline",
                         condition=models.Q(status="active", deadline_at__isnull=False)),
            models.Index(fields=["updated_at"], name="match_idle",
                         condition=models.Q(status="active", inactivity_limit__isnull=False)),
        ]

    @property
    def group_name(self) -> str:
        return f"match.{self.id.hex}"

    @classmethod
    def from_db(cls, db, field_names, values):
        match = super().from_db(db, field_names, values)
        if "state" in match.__dict__:
            static = match.state_static   # loads it if the query deferred it
            if static and isinstance(match.state, dict):
                match.state = {**static, **match.state}
        return match


class Seat(models.Model):
    class Kind(models.TextChoices):
        HUMAN = "human"
        AGENT = "agent"

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    role = models.CharField(max_length=32)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    participant = models.ForeignKey("crowd.Participant", null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="seats")
    agent_name = models.CharField(max_length=64, blank=True)
    # A model agent's seat (agents/model_config.py): its kind, version, family and checkpoint as
    # configured when the match was created, and the checkpoint's sha256 the model worker loaded,
    # added when the model acts (``earlier``: what played before, if a worker with another
    # checkpoint took over mid-match). Empty for people and rule agents. Every export carries it.
    agent_model = models.JSONField(default=dict, blank=True)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    connected = models.PositiveIntegerField(default=0)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    left_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "games_seat"
        constraints = [
            models.UniqueConstraint(fields=["match", "role"], name="seat_unique_role"),
        ]


class MatchEvent(models.Model):
    """One fact in a match's log. ``action`` is set on the first event an accepted action produced."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="events",
                              db_index=False)  # event_unique_seq (match, seq) serves lookups by match
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=64)
    actor = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    private = models.JSONField(null=True, blank=True)
    action = models.JSONField(null=True, blank=True)
    client_action_id = models.CharField(max_length=64, blank=True, default="")
    t = models.BigIntegerField(help_text="Server time, ms since the epoch.")

    class Meta:
        db_table = "games_matchevent"
        constraints = [models.UniqueConstraint(fields=["match", "seq"], name="event_unique_seq")]
        indexes = [models.Index(fields=["match", "actor", "client_action_id"], name="event_client_action")]
        ordering = ["match", "seq"]


class ArmCounter(models.Model):
    """A batch's randomisation state (live/arms.py): how many seatings (between subjects) and how
    many people (within subjects: Latin-square rows) have been assigned. Its row is locked
    (``SELECT ... FOR UPDATE``) in the transaction that creates the match it counts, so concurrent
    seatings in any number of processes draw consecutive slots, and a slot is spent only when a
    match is created (a rolled-back seating gives it back)."""

    batch = models.OneToOneField(Batch, primary_key=True, on_delete=models.CASCADE, related_name="arm_counter")
    seatings = models.PositiveIntegerField(default=0)
    people = models.PositiveIntegerField(default=0)
