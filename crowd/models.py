"""Launches on the crowd platforms and the audit of every payment action (issue 12).

``BonusRule`` is keyed by batch (one per batch, optional): how the server turns a game's outcome
into a bonus. ``Launch`` records what was sent to MTurk or Prolific and what came back.
``PayAction`` is the audit row of one approve, reject, bonus or block: it is written (committed)
*before* the platform is called, with a key unique per (participant, kind), so a second click,
a retry after a failure or a crash mid-call can never pay twice (crowd/payments.py).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from games.models import Batch, Participant


class BonusRule(models.Model):
    class Kind(models.TextChoices):
        NONE = "none", "no bonus"
        COLORS_ACCURACY = "colors_accuracy", "colors: cents per correct pick"
        CODRAW_SIMILARITY = "codraw_similarity", "CoDraw: cents per similarity point"
        GUESSWHICH = "guesswhich", "GuessWhich: the game's bonus points, cents per point"

    batch = models.OneToOneField(Batch, on_delete=models.CASCADE, related_name="bonus_rule")
    kind = models.CharField(max_length=24, choices=Kind.choices, default=Kind.NONE)
    cents_per_unit = models.DecimalField(max_digits=8, decimal_places=3, default=0)
    cap_cents = models.PositiveIntegerField(default=0, help_text="Most a worker gets in bonus (0: no bonus).")


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
        constraints = [models.UniqueConstraint(fields=["participant", "kind"], name="payaction_one_per_kind")]
