"""The agents' records: :class:`AgentCall`, one row per request an LLM agent sent (agents/llm/)."""
from __future__ import annotations

from django.db import models


class AgentCall(models.Model):
    """One request of an LLM agent to its endpoint for one turn of a match: the first (``attempt``
    1) and, when its answer could not be used, the repair request (2).

    ``request`` is the exact JSON body sent, every image's data URL replaced by ``"sha256:<hex>"``
    of its PNG bytes; the key is in no field (it travels in a header, never recorded).
    ``outcome`` is the turn's, as seen from this call: ``acted`` (the first answer was played),
    ``repaired`` (the repair's answer was played), ``fallback`` (no usable answer: the agent's
    fallback played), ``error`` (the endpoint gave no answer: the fallback played), ``stale``
    (a usable answer came after the game had moved on, e.g. the watchdog's fallback had played).
    ``actions``: what the answer became, in the order the turn applied them (one decision may be a
    whole turn of several actions, e.g. a CoDraw Drawer's canvas changes and its reply).
    """

    class Outcome(models.TextChoices):
        ACTED = "acted"
        REPAIRED = "repaired"
        FALLBACK = "fallback"
        ERROR = "error"
        STALE = "stale"

    match = models.ForeignKey("live.Match", on_delete=models.CASCADE, related_name="agent_calls")
    role = models.CharField(max_length=32)
    seq = models.PositiveIntegerField(help_text="The match's seq when the turn became due (expected_seq).")
    agent = models.CharField(max_length=64)
    attempt = models.PositiveSmallIntegerField(help_text="1: the first request, 2: the repair request.")
    model_reported = models.CharField(max_length=200, blank=True, help_text="The model name the server answered with.")
    params = models.JSONField(default=dict, help_text="temperature, top_p, max_tokens, seed, stream, images.")
    prompt_sha256 = models.CharField(max_length=64)
    adapter_version = models.CharField(max_length=64)
    request = models.JSONField(help_text="The JSON sent, images replaced by their sha256.")
    response_text = models.TextField(blank=True, help_text="The model's raw answer (the message content).")
    decision = models.JSONField(null=True, blank=True, help_text="The answer parsed, when it parsed.")
    error = models.TextField(blank=True, help_text="What was wrong: the transport's error or the decision's.")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    retries = models.PositiveSmallIntegerField(default=0, help_text="Requests tried again (429, 5xx, connection).")
    queue_ms = models.FloatField(default=0, help_text="Waiting for a slot of max_concurrency.")
    ttft_ms = models.FloatField(null=True, blank=True, help_text="From the request to the first token.")
    total_ms = models.FloatField(null=True, blank=True, help_text="From the first request to the whole answer.")
    pacing_ms = models.FloatField(null=True, blank=True,
                                  help_text="reply_pacing's delay drawn for the turn, counted from when it became due.")
    cost_usd = models.FloatField(null=True, blank=True, help_text="From the configured price_in / price_out.")
    actions = models.JSONField(default=list, blank=True,
                               help_text="The actions the answer became, in the order the turn applies them "
                                         "(several when one decision is a whole turn: a CoDraw drawer's canvas "
                                         "changes, then its reply); empty when it was not usable.")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["match", "role", "seq"], name="agentcall_turn")]
        ordering = ["match", "seq", "role", "attempt"]

    def __str__(self) -> str:
        return f"{self.agent} {self.match_id} {self.role}@{self.seq} #{self.attempt} {self.outcome}"
