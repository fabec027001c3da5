"""Prolific's REST API through httpx (issue 12): a thin client.

The token comes from ``PROLIFIC_API_TOKEN`` (sent as ``Authorization: Token <token>``); the base URL
is ``GT_PROLIFIC_API`` (default ``https://api.prolific.com/api/v1/``), so a test can point it at a
local recording server. Every call raises ``ProlificError`` (HTTP status, the platform's answer)
on a non-2xx answer; a lost answer (timeout, connection reset) raises ``ProlificUnknown``: the
request may or may not have taken effect.

Bonuses are two calls: ``submissions/bonus-payments/`` sets them up (returns an id), then
``bulk-bonus-payments/{id}/pay/`` pays. Prolific documents the second as NOT idempotent, so the
caller (crowd/payments.py) records the set-up id before paying and never sends the pay twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from groundtalk_web import env

DEFAULT_BASE = "https://api.prolific.com/api/v1/"
PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


class ProlificError(Exception):
    def __init__(self, status: int, answer):
        self.status, self.answer = status, answer
        super().__init__(f"Prolific answered {status}: {answer}")


class ProlificUnknown(Exception):
    """No answer: the request may have been carried out."""


class MissingToken(Exception):
    pass


def base_url() -> str:
    base = env.load().GT_PROLIFIC_API or DEFAULT_BASE
    return base if base.endswith("/") else base + "/"


class Client:
    def __init__(self, token: str | None = None, base: str | None = None, timeout: float = 20.0):
        token = token or env.load().PROLIFIC_API_TOKEN.get_secret_value()
        if not token:
            raise MissingToken("PROLIFIC_API_TOKEN is not set")
        self.http = httpx.Client(base_url=base or base_url(), timeout=timeout,
                                 headers={"Authorization": f"Token {token}"})

    def _call(self, method: str, path: str, json=None):
        try:
            r = self.http.request(method, path, json=json)
        except httpx.TransportError as exc:
            raise ProlificUnknown(str(exc)) from exc
        try:
            body = r.json() if r.content else {}
        except ValueError:
            body = {"text": r.text[:2000]}
        if r.status_code >= 300:
            raise ProlificError(r.status_code, body)
        return body

    # studies
    def create_study(self, spec: "StudySpec") -> dict:
        return self._call("POST", "studies/", json=spec.body())

    def transition_study(self, study_id: str, action: str) -> dict:
        assert action in ("PUBLISH", "PAUSE", "START", "STOP")
        return self._call("POST", f"studies/{study_id}/transition/", json={"action": action})

    def submissions(self, study_id: str) -> list[dict]:
        """Every submission of the study (all pages: ``_links.next.href`` while there is one)."""
        page = self._call("GET", f"studies/{study_id}/submissions/")
        out = list(page.get("results") or [])
        for _ in range(1000):
            nxt = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not nxt:
                break
            page = self._call("GET", nxt)
            out.extend(page.get("results") or [])
        return out

    def submission(self, submission_id: str) -> dict:
        """One submission: its study_id, participant, status (Retrieve a submission)."""
        return self._call("GET", f"submissions/{submission_id}/")

    # submissions
    def approve(self, submission_id: str) -> dict:
        return self._call("POST", f"submissions/{submission_id}/transition/", json={"action": "APPROVE"})

    def reject(self, submission_id: str, message: str, category: str = "OTHER") -> dict:
        return self._call("POST", f"submissions/{submission_id}/transition/",
                          json={"action": "REJECT", "message": message, "rejection_category": category})

    # bonuses
    def setup_bonuses(self, study_id: str, bonuses: list[tuple[str, int]]) -> dict:
        """``bonuses``: (participant id, cents); Prolific takes amounts in the study's currency."""
        csv = "\n".join(f"{pid},{cents // 100}.{cents % 100:02d}" for pid, cents in bonuses)
        return self._call("POST", "submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv})

    def pay_bonuses(self, bulk_id: str) -> dict:
        return self._call("POST", f"bulk-bonus-payments/{bulk_id}/pay/")


@dataclass(frozen=True)
class StudySpec:
    name: str
    internal_name: str
    description: str
    entry_url: str               # the batch's entry URL (without the placeholders)
    places: int
    reward_cents: int
    minutes: int
    completion_codes: dict       # outcome -> code (Batch.prolific_codes)
    paid_outcomes: frozenset = frozenset()  # outcomes that are approved; others go to manual review
    allow_list: tuple[str, ...] = ()
    block_list: tuple[str, ...] = ()
    devices: tuple[str, ...] = ("desktop",)
    extra: dict = field(default_factory=dict)

    def url(self) -> str:
        sep = "&" if "?" in self.entry_url else "?"
        return f"{self.entry_url}{sep}{PLACEHOLDERS}"

    def body(self) -> dict:
        codes = []
        for outcome, code in sorted(self.completion_codes.items()):
            if not code:
                continue
            action = "AUTOMATICALLY_APPROVE" if outcome in self.paid_outcomes else "MANUALLY_REVIEW"
            codes.append({"code": code, "code_type": outcome.upper(), "actions": [{"action": action}]})
        filters = []
        if self.allow_list:
            filters.append({"filter_id": "participant_allowlist", "selected_values": list(self.allow_list)})
        if self.block_list:
            filters.append({"filter_id": "participant_blocklist", "selected_values": list(self.block_list)})
        return {"name": self.name, "internal_name": self.internal_name, "description": self.description,
                "external_study_url": self.url(), "prolific_id_option": "url_parameters",
                "completion_codes": codes, "total_available_places": int(self.places),
                "estimated_completion_time": int(self.minutes), "reward": int(self.reward_cents),
                "device_compatibility": list(self.devices), "filters": filters, **self.extra}
