"""The crowd's records: participants, studies, onboarding, questionnaires, launches and payments.

``Participant`` is one crowdworker in one batch (``live.models.Batch``). ``Study`` groups batches for
exclusion (crowd/studies.py); ``OnboardingResult``, ``QuizAttempt`` and ``PracticeRound`` keep a
worker's onboarding (crowd/onboarding.py); ``QuestionnaireResponse`` their post-game answers
(crowd/questionnaire.py). These six were defined in games/models.py until issue 22 and keep their
tables (``games_participant``, ...: each ``Meta.db_table``; crowd/migrations/0004_moved_from_games.py).

``BonusRule`` is keyed by batch (one per batch, optional): how the server turns a game's outcome
into a bonus. ``Launch`` records what was sent to MTurk or Prolific and what came back.
``PayAction`` is the audit row of one approve, reject, bonus or block: it is written (committed)
*before* the platform is called, with a key unique per (participant, kind), so a second click,
a retry after a failure or a crash mid-call can never pay twice (crowd/payments.py).
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from crowd.staff import POWERS
from games.registry import bonus_kinds
from live.models import Batch, Match, new_code, new_token

# The bounds of a bonus rule (issue 21): beyond them a value is a typo (dollars typed as cents, a
# zero too many), refused with the field's name. Raise them here if a study really needs more.
MAX_CENTS_PER_UNIT = Decimal("500")     # $5 per correct pick / similarity point / bonus point
MAX_CAP_CENTS = 10_000                  # $100 of bonus per worker
MAX_BUDGET_CENTS = 1_000_000            # $10,000 of bonus per batch


class Participant(models.Model):
    """One crowdworker in one batch. ``(batch, platform, worker_id)`` is unique."""

    class State(models.TextChoices):
        CONSENT = "consent"
        INSTRUCTIONS = "instructions"
        ONBOARDING = "onboarding"
        WAITING = "waiting"
        PLAYING = "playing"
        DONE = "done"
        DECLINED = "declined"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="participants")
    platform = models.CharField(max_length=16)  # mturk, prolific, lab
    worker_id = models.CharField(max_length=128)
    assignment_id = models.CharField(max_length=128, blank=True)
    hit_id = models.CharField(max_length=128, blank=True)
    submit_to = models.CharField(max_length=300, blank=True)
    study_id = models.CharField(max_length=128, blank=True)
    session_id = models.CharField(max_length=128, blank=True)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    state = models.CharField(max_length=16, choices=State.choices, default=State.CONSENT)
    waiting_since = models.DateTimeField(null=True, blank=True)
    # The waiting page's last poll (crowd/lobby.py): a worker not heard from for GT_PRESENCE_S is
    # not paired, and is asked "are you still there?" on return (crowd/presence.py).
    last_seen_at = models.DateTimeField(null=True, blank=True)
    games_played = models.PositiveIntegerField(default=0)
    completion_code = models.CharField(max_length=32, default=new_code)
    exit_reason = models.CharField(max_length=32, blank=True)
    bonus_cents = models.IntegerField(default=0)
    # Recorded when the worker's part ends (crowd.outcomes): the outcome of the exit reason, what the
    # batch pays for it (full, partial, none) and how much base pay that is.
    outcome = models.CharField(max_length=16, blank=True)
    pay = models.CharField(max_length=8, blank=True)
    pay_cents = models.IntegerField(null=True, blank=True)
    # The browser this participant is bound to holds the same value in its session (crowd.identity).
    owner_key = models.CharField(max_length=64, blank=True)
    # What the platform said about the worker's id (crowd/verify.py): "verified" (MTurk's assignment
    # or Prolific's submission names this worker, in this HIT or study), "pending" (MTurk: the
    # assignment exists and is not submitted yet, so its worker and HIT are not confirmed: paired,
    # verified again before pay), "unverified" (the platform could not be asked: paired per
    # Batch.unverified_pairing, verified again before pay), "refused" (asked again, it said no), "trusted"
    # (a signed lab link, a demo name); "" for participants made before issue 21 or by code.
    verification = models.CharField(max_length=12, blank=True, default="")
    verified_at = models.DateTimeField(null=True, blank=True)
    verify_tried_at = models.DateTimeField(null=True, blank=True)
    verify_note = models.CharField(max_length=300, blank=True, default="")
    # The entering browser (a digest of its session key) and client address: two participants who
    # share either are never paired with each other (crowd/lobby.py; Batch.allow_shared_address).
    browser = models.CharField(max_length=64, blank=True, default="")
    client_addr = models.GenericIPAddressField(null=True, blank=True)
    # Every other assignment (or session) the worker came with, oldest first, each
    # {"assignment_id", "hit_id", "at", "why"}: the lab sees them all (review page).
    assignments = models.JSONField(default=list, blank=True)
    # A one-time code to move to another browser (crowd.identity.transfer_*), its expiry and misses.
    transfer_code = models.CharField(max_length=16, blank=True)
    transfer_expires_at = models.DateTimeField(null=True, blank=True)
    transfer_misses = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "games_participant"
        constraints = [
            models.UniqueConstraint(fields=["batch", "platform", "worker_id"], name="participant_unique_worker")
        ]
        indexes = [models.Index(fields=["batch", "state", "waiting_since"])]


class Study(models.Model):
    """A group of batches (issue 12): a worker with a participant in any of them has taken part in
    the study, and a batch that excludes the study refuses that worker (crowd.studies)."""

    name = models.CharField(max_length=200, unique=True)
    batches = models.ManyToManyField(Batch, blank=True, related_name="studies")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "games_study"
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class OnboardingResult(models.Model):
    """A worker's onboarding for one game (crowd.onboarding): kept per (platform, worker id, game,
    kind, version) and reused by every batch that asks for the same onboarding."""

    platform = models.CharField(max_length=16)
    worker_id = models.CharField(max_length=128)
    game_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=16)          # quiz or practice
    version = models.CharField(max_length=32)
    passed = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    score = models.FloatField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)   # the answers given, or the practice match id
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL,
                              help_text="The batch in which it was taken.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "games_onboardingresult"
        constraints = [models.UniqueConstraint(fields=["platform", "worker_id", "game_id", "kind", "version"],
                                               name="onboarding_worker_game_unique")]


class QuizAttempt(models.Model):
    """One attempt at a game's onboarding quiz (crowd.onboarding, issue 21 item 7): the questions
    and choice orders drawn for it from the game's bank with its own random ``seed`` (``drawn``:
    ``[{"id": question id, "order": [the bank's choice indexes in the order shown]}]``), so the
    answers are scored on the server against what this page showed; the client address it was
    opened from (per-address limit, ``GT_QUIZ_ATTEMPTS_PER_ADDRESS``); the answers and result once
    submitted. At most one attempt of a result is open (``submitted_at`` null) at a time."""

    result = models.ForeignKey(OnboardingResult, on_delete=models.CASCADE, related_name="quiz_attempts")
    participant = models.ForeignKey(Participant, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="quiz_attempts")
    number = models.PositiveIntegerField()            # 1-based, per result
    seed = models.BigIntegerField()
    drawn = models.JSONField(default=list)
    game_id = models.CharField(max_length=64)
    client_addr = models.CharField(max_length=64, blank=True, default="")   # live.ratelimit.client_address
    counted = models.BooleanField(default=True)       # against the address's limit (not for lab links)
    answers = models.JSONField(null=True, blank=True)  # question id -> the bank's choice index
    correct = models.PositiveIntegerField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "games_quizattempt"
        constraints = [models.UniqueConstraint(fields=["result", "number"], name="quiz_attempt_number_unique")]
        indexes = [models.Index(fields=["client_addr", "game_id", "created_at"], name="quiz_attempt_address")]


class QuestionnaireResponse(models.Model):
    """A participant's answers to the batch's post-game questionnaire (crowd.questionnaire); ``match``
    is the match the partner questions are about."""

    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="questionnaire")
    match = models.ForeignKey(Match, null=True, blank=True, on_delete=models.SET_NULL)
    questions = models.JSONField(default=list)   # the questions as asked
    answers = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "games_questionnaireresponse"


class PartnerKindAnswer(models.Model):
    """ "Was your partner a person or an AI?" after one match (issue 24, item 2; crowd/end_questions.py):
    one answer per person per match, with the match's arm as recorded when it was asked."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="partner_kind_answers")
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="+")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    arm = models.CharField(max_length=64, blank=True, default="")
    said_person = models.BooleanField()
    confidence = models.PositiveSmallIntegerField()   # 1 (a guess) .. 5 (sure)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["participant", "match"], name="partner_kind_once")]


class PreferenceAnswer(models.Model):
    """One pairwise preference in the style of ACUTE-Eval (issue 24, item 4; crowd/end_questions.py):
    after a person has played two arms, which of the two partners (``match_a`` the earlier, shown as
    "your first partner"; ``match_b`` "your second partner") on one question. ``choice``: "a", "b"
    or "none" (no preference). One answer per person per pair per question."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="preference_answers")
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="+")
    match_a = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    match_b = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    arm_a = models.CharField(max_length=64)
    arm_b = models.CharField(max_length=64)
    question = models.CharField(max_length=32)
    choice = models.CharField(max_length=8)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["participant", "match_a", "match_b", "question"],
                                               name="preference_once")]


class PracticeRound(models.Model):
    """A practice match a worker played against an agent before being paired (crowd.onboarding):
    not a game of the batch (no batch, not counted, left out of the exports)."""

    result = models.ForeignKey(OnboardingResult, on_delete=models.CASCADE, related_name="practice_rounds")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="practice_rounds")
    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="practice")
    seat_token = models.CharField(max_length=64)
    graded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "games_practiceround"


class StaffPower(models.Model):
    """No table: it only carries the staff permissions (crowd/staff.py), so that the admin lists
    them under "crowd | staff power" and groups can hold them."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = POWERS
        verbose_name = "staff power"


def bonus_kind_choices() -> list[tuple[str, str]]:
    """A bonus rule's kinds: "none", then every registered game's (``GameSpec.bonus_kinds``). A
    callable, so a game adding a kind changes no migration."""
    return [(BonusRule.NONE, "no bonus"), *((kind, bonus.label) for kind, bonus in bonus_kinds().items())]


class BonusRule(models.Model):
    NONE = "none"

    batch = models.OneToOneField(Batch, on_delete=models.CASCADE, related_name="bonus_rule")
    kind = models.CharField(max_length=24, choices=bonus_kind_choices, default=NONE)
    cents_per_unit = models.DecimalField(
        max_digits=8, decimal_places=3, default=0,
        validators=[MinValueValidator(Decimal("0"), "Cents per unit cannot be negative."),
                    MaxValueValidator(MAX_CENTS_PER_UNIT,
                                      f"Cents per unit is at most {MAX_CENTS_PER_UNIT} (${MAX_CENTS_PER_UNIT / 100:.2f} "
                                      "a unit); is it dollars typed as cents?")])
    cap_cents = models.PositiveIntegerField(
        default=0, help_text="Most a worker gets in bonus (0: no bonus).",
        validators=[MaxValueValidator(MAX_CAP_CENTS, f"The cap is at most {MAX_CAP_CENTS} cents "
                                                     f"(${MAX_CAP_CENTS / 100:.2f}) per worker.")])
    budget_cents = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="The batch's total bonus budget in cents: no bonus run pays past it (empty: no bonus is paid).",
        validators=[MaxValueValidator(MAX_BUDGET_CENTS, f"The budget is at most {MAX_BUDGET_CENTS} cents "
                                                        f"(${MAX_BUDGET_CENTS / 100:,.2f}) per batch.")])

    def clean(self):
        """A rule that pays must pay something, per unit and in all, within its own cap and budget."""
        super().clean()
        if self.kind == self.NONE:
            return
        errors = {}
        per_unit, cap, budget = self.cents_per_unit, self.cap_cents, self.budget_cents
        if per_unit is not None and per_unit <= 0:
            errors["cents_per_unit"] = "Cents per unit must be above 0 for a bonus (or choose “no bonus”)."
        if cap is not None and cap <= 0:
            errors["cap_cents"] = "The cap must be above 0 cents for a bonus (or choose “no bonus”)."
        elif cap and per_unit and per_unit > cap:
            errors["cents_per_unit"] = (f"Cents per unit ({per_unit}) is above the cap ({cap} cents): one unit "
                                        "would already pay more than a worker can get. Are the two swapped?")
        if budget is None:
            errors["budget_cents"] = "Set the batch's bonus budget (cents): no bonus run pays past it."
        elif cap and budget < cap:
            errors["budget_cents"] = (f"The budget ({budget} cents) is below the cap of one worker ({cap} cents): "
                                      "not even one full bonus could be paid.")
        if errors:
            raise ValidationError(errors)


class Launch(models.Model):
    class Platform(models.TextChoices):
        MTURK = "mturk"
        PROLIFIC = "prolific"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="launches")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    live = models.BooleanField(default=False, help_text="False: MTurk's sandbox (Prolific: a draft study).")
    hit_type_id = models.CharField(max_length=128, blank=True)
    hit_id = models.CharField(max_length=128, blank=True)
    study_id = models.CharField(max_length=128, blank=True)
    params = models.JSONField(default=dict, help_text="What was sent (no credentials).")
    answer = models.JSONField(default=dict, help_text="What the platform answered.")
    status = models.CharField(max_length=16, default="sent")  # sent, failed, expired, paused
    error = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class PayAction(models.Model):
    class Kind(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"
        BONUS = "bonus"
        BLOCK = "block"

    class Status(models.TextChoices):
        PENDING = "pending"   # written, the platform not yet answered (or the answer was lost)
        SENT = "sent"         # the platform accepted it
        FAILED = "failed"     # the platform refused it; may be retried with the same key

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="pay_actions")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    amount_cents = models.IntegerField(default=0)
    reason = models.TextField(blank=True)
    key = models.CharField(max_length=64, unique=True,
                           help_text="Idempotency key (MTurk's UniqueRequestToken for bonuses).")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    answer = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "kind"], name="payaction_one_per_kind"),
            # a worker's work is approved or rejected, never both: one decision that is not FAILED
            # (crowd/payments.py also takes the participant's row lock before deciding)
            models.UniqueConstraint(fields=["participant"], name="payaction_one_review",
                                    condition=Q(kind__in=["approve", "reject"]) & ~Q(status="failed")),
        ]
