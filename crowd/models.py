"""Launches on the crowd platforms and the audit of every payment action (issue 12).

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
from games.models import Batch, Participant

# The bounds of a bonus rule (issue 21): beyond them a value is a typo (dollars typed as cents, a
# zero too many), refused with the field's name. Raise them here if a study really needs more.
MAX_CENTS_PER_UNIT = Decimal("500")     # $5 per correct pick / similarity point / bonus point
MAX_CAP_CENTS = 10_000                  # $100 of bonus per worker
MAX_BUDGET_CENTS = 1_000_000            # $10,000 of bonus per batch


class StaffPower(models.Model):
    """No table: it only carries the staff permissions (crowd/staff.py), so that the admin lists
    them under "crowd | staff power" and groups can hold them."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = POWERS
        verbose_name = "staff power"


class BonusRule(models.Model):
    class Kind(models.TextChoices):
        NONE = "none", "no bonus"
        COLORS_ACCURACY = "colors_accuracy", "colors: cents per correct pick"
        CODRAW_SIMILARITY = "codraw_similarity", "CoDraw: cents per similarity point"
        GUESSWHICH = "guesswhich", "GuessWhich: the game's bonus points, cents per point"

    batch = models.OneToOneField(Batch, on_delete=models.CASCADE, related_name="bonus_rule")
    kind = models.CharField(max_length=24, choices=Kind.choices, default=Kind.NONE)
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
        if self.kind == self.Kind.NONE:
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
