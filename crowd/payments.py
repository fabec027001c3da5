"""Launch, review and pay (issue 12, items 1-2): the services behind the staff pages.

Paying once and only once
-------------------------
Every approve, reject, bonus and block is a ``PayAction`` row with ``key`` unique per
(participant, kind). The row is committed with status ``pending`` BEFORE the platform is called:

* a second click (or a concurrent request) finds the row (``select_for_update`` + the unique
  constraint) and sends nothing when it is ``sent`` or ``pending``;
* a failure the platform reports (``ClientError``, a 4xx) marks the row ``failed``; retrying sends
  again with the SAME key, and MTurk's ``send_bonus`` gets it as ``UniqueRequestToken``, so MTurk
  itself refuses a second payment of it (for 24 hours);
* a lost answer (crash, timeout) leaves the row ``pending``: the page says so and a retry is
  refused for Prolific (its pay endpoint is documented as not idempotent) until a person checked
  the platform and marked it; for MTurk ``retry`` sends again with the same token.

One decision per worker, a budget per batch (issue 21)
-----------------------------------------------------
* Approve and reject are one decision: ``_claim`` takes the participant's row lock
  (``select_for_update``) and refuses the second when the other is sent or pending, so of an
  approve and a reject sent at once exactly one reaches the platform; the other gets
  ``PayRefused`` in plain words. The database backs it (constraint ``payaction_one_review``).
* Approving a worker whose outcome pays nothing needs ``unpaid_ok=True`` (the review page asks).
* Bonuses: the batch's ``BonusRule`` row is locked while a bonus is claimed, and the claim is
  refused (``OverBudget``) when the batch's sent and pending bonuses plus this one would pass the
  rule's ``budget_cents``: a run pays up to the budget, concurrent runs together too.

The bonus of a participant is computed here, from the matches they played, by the batch's
``BonusRule``; never taken from the browser.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
import json

from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from botocore.exceptions import BotoCoreError, ClientError

from crowd import mturk, outcomes, platform_ids, prolific, verify
from games.registry import bonus_kinds
from crowd.models import BonusRule, Launch, PayAction, Participant
from live.models import Batch, Match, MatchEvent, Seat
from groundtalk_web import csvsafe

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)


# A pending row without an error is a call in flight (or a process that died mid-call): a retry
# waits this long before it may send again (the clients time out well before).
PENDING_IN_FLIGHT = timedelta(minutes=5)


class PayRefused(Exception):
    """A clear reason nothing was sent (shown to the researcher)."""


def confirmed_or_refuse(p: Participant) -> None:
    """Before any pay: a worker whose id the platform could not confirm at entry (unverified, or
    MTurk's pending: an assignment not yet submitted) is asked about again now (crowd/verify.py,
    issue 21); nothing is paid unless the platform confirms them."""
    if p.verification == verify.REFUSED:
        raise PayRefused(f"{p.worker_id}: the platform said this id does not go with its assignment or "
                         f"submission ({p.verify_note}); nothing was sent: reject it instead.")
    if p.verification not in (verify.UNVERIFIED, verify.PENDING):
        return
    try:
        check = verify.recheck(p, force=True)
    except verify.NotVerified as exc:
        raise PayRefused(f"{p.worker_id}: the platform does not confirm this id ({exc}); nothing was sent: "
                         "reject it instead.") from None
    if check is not None and check.status == verify.PENDING:
        raise PayRefused(f"{p.worker_id}: MTurk has not confirmed this id yet: the assignment is not submitted "
                         "(MTurk names its worker once it is); nothing was sent: try again after submission.")
    if check is None or check.status != verify.VERIFIED:
        raise PayRefused(f"{p.worker_id}: the platform could not be asked to confirm this id "
                         f"({check.note if check else 'not asked'}); nothing was sent: try again later.")


class OverBudget(PayRefused):
    """A bonus left unpaid: it would take the batch's bonuses past the rule's budget."""

    def __init__(self, message: str, *, worker_id: str, cents: int, budget: int, committed: int):
        super().__init__(message)
        self.worker_id, self.cents, self.budget, self.committed = worker_id, cents, budget, committed


DECIDED = {"approve": "approved", "reject": "rejected"}


def pays_nothing(p: Participant) -> bool:
    """The participant's outcome pays nothing (or they have no outcome yet): approving them pays
    the platform's reward anyway, so the review page asks first."""
    return p.pay not in (outcomes.FULL, outcomes.PARTIAL)


def bonus_committed(batch_id: int, *, exclude_pk=None) -> int:
    """Cents of the batch's bonuses sent or being sent (failed ones were not paid)."""
    rows = PayAction.objects.filter(participant__batch_id=batch_id, kind=PayAction.Kind.BONUS,
                                    status__in=[PayAction.Status.SENT, PayAction.Status.PENDING])
    if exclude_pk is not None:
        rows = rows.exclude(pk=exclude_pk)
    return int(rows.aggregate(total=Sum("amount_cents"))["total"] or 0)


# ------------------------------------------------------------------------------------- bonuses
def _units(kind: str, outcome: dict) -> float:
    """A match's units of the bonus ``kind``: the outcome's value that the game's spec names
    (``GameSpec.bonus_kinds``); 0 for "none" or a kind no registered game declares."""
    bonus = bonus_kinds().get(kind)
    return float(outcome.get(bonus.outcome_key) or 0) if bonus is not None else 0.0


def rule_for(batch: Batch) -> BonusRule:
    return BonusRule.objects.filter(batch=batch).first() or BonusRule(batch=batch)


def participant_matches(p: Participant) -> list[Match]:
    ids = Seat.objects.filter(participant=p).values_list("match_id", flat=True)
    # the batch's own matches only: a practice round (played outside any batch) earns no bonus
    return list(Match.objects.filter(id__in=list(ids), batch_id=p.batch_id).order_by("created_at"))


def bonus_cents(rule: BonusRule, matches: list[Match]) -> int:
    """Units over the ended matches x cents per unit, rounded down, capped."""
    if rule.kind == BonusRule.NONE or not rule.cap_cents:
        return 0
    units = sum(_units(rule.kind, m.outcome or {}) for m in matches if m.status in ENDED)
    cents = math.floor(Decimal(str(units)) * Decimal(str(rule.cents_per_unit)))
    return max(0, min(int(cents), int(rule.cap_cents)))


@dataclass
class Row:
    participant: Participant
    matches: list
    bonus_cents: int
    actions: dict          # kind -> PayAction
    minutes: float | None
    # MTurk: the endpoint the assignment is on (verify.participant_endpoint); shown when the HIT was
    # not launched from here, so a sandbox assignment in a live study is seen
    endpoint: verify.Endpoint | None = None
    # other participants of the batch with this worker's id in another spelling (stored before ids
    # had one form, crowd/migrations/0007), and whether the stored id is not one of its platform's
    same_worker: list = field(default_factory=list)
    bad_id: bool = False

    @property
    def pay_id(self) -> str:
        """What the platform pays by: MTurk's assignment, Prolific's submission (session)."""
        p = self.participant
        return p.assignment_id if p.platform == "mturk" else p.session_id


CHAT_EVENTS = ("message_sent", "question_asked", "answer_given")


def dialog_excerpts(match_ids, n: int = 3) -> dict:
    """match id -> its first ``n`` dialog lines ("role: text"), one query."""
    out: dict = {}
    for e in (MatchEvent.objects.filter(match_id__in=list(match_ids), type__in=CHAT_EVENTS)
              .order_by("match_id", "seq").only("match_id", "actor", "payload")):
        lines = out.setdefault(e.match_id, [])
        if len(lines) < n:
            p = e.payload or {}
            lines.append(f"{p.get('role') or e.actor}: {str(p.get('text', ''))[:120]}")
    return out


def review_rows(batch: Batch) -> list[Row]:
    rule = rule_for(batch)
    rows = []
    actions: dict = {}
    for a in PayAction.objects.filter(participant__batch=batch):
        actions.setdefault(a.participant_id, {})[a.kind] = a
    launches = verify.launched_hits(batch)
    people = list(batch.participants.select_related("batch").order_by("created_at"))
    canonical = {p.pk: _canonical_or_none(p) for p in people}
    by_worker: dict = {}
    for p in people:
        if canonical[p.pk] is not None:
            by_worker.setdefault((p.platform, canonical[p.pk]), []).append(p)
    for p in people:
        ms = participant_matches(p)
        minutes = None
        if p.finished_at:   # from entering (consent when recorded) to the end of the worker's part
            minutes = round(max(0.0, (p.finished_at - (p.consented_at or p.created_at)).total_seconds()) / 60, 1)
        same = [o for o in by_worker.get((p.platform, canonical[p.pk]), []) if o.pk != p.pk]
        rows.append(Row(p, ms, bonus_cents(rule, ms), actions.get(p.id, {}), minutes,
                        endpoint=verify.participant_endpoint(p, launches=launches), same_worker=same,
                        bad_id=canonical[p.pk] is None))
    return rows


def _canonical_or_none(p: Participant) -> str | None:
    """The participant's worker id in its one form (crowd/platform_ids.py); None when the stored id
    is not one (kept as stored before ids were checked: a dot, an invisible character)."""
    if p.platform not in ("mturk", "prolific"):
        return p.worker_id
    try:
        return platform_ids.canonical(p.platform, p.worker_id)
    except platform_ids.BadId:
        return None


# ------------------------------------------------------------------------------------ the ledger
def _key(p: Participant, kind: str) -> str:
    return f"gt-{p.batch_id}-{p.id}-{kind}"


def _claim(p: Participant, kind: str, *, amount: int, reason: str, by, retry: bool) -> PayAction | None:
    """The row to send now, or None when it was sent (or is pending) already. Commits before returning.

    Approve/reject: under the participant's row lock, refused when the other decision is sent or
    pending. Bonus: under the batch's bonus rule's row lock, refused past the budget."""
    with transaction.atomic():
        if kind in DECIDED:
            Participant.objects.select_for_update().filter(pk=p.pk).first()
            other = PayAction.Kind.REJECT if kind == PayAction.Kind.APPROVE else PayAction.Kind.APPROVE
            decided = PayAction.objects.filter(participant=p, kind=other).exclude(status=PayAction.Status.FAILED).first()
            if decided is not None and decided.status == PayAction.Status.SENT:
                raise PayRefused(f"{p.worker_id} was already {DECIDED[other]}: the {kind} was not sent.")
            if decided is not None:
                raise PayRefused(f"{p.worker_id} is being {DECIDED[other]} (sent, no answer yet): the {kind} "
                                 "was not sent.")
        row = PayAction.objects.select_for_update().filter(participant=p, kind=kind).first()
        if kind == PayAction.Kind.BONUS and (row is None or row.status == PayAction.Status.FAILED):
            # a new bonus, or a failed one sent again (it was not paid, so it is not counted yet);
            # a pending one sent again is counted already, and may have been paid
            _check_budget(p, row.amount_cents if row is not None else amount, exclude_pk=row.pk if row else None)
        if row is None:
            try:
                with transaction.atomic():
                    row = PayAction.objects.create(participant=p, kind=kind, amount_cents=amount, reason=reason,
                                                   key=_key(p, kind), by=by, attempts=1)
                return row
            except IntegrityError:   # a concurrent request created it first
                return None
        if row.status == PayAction.Status.SENT:
            return None
        if row.status == PayAction.Status.PENDING and not retry:
            return None
        if row.status == PayAction.Status.PENDING and not row.error and \
                timezone.now() - row.updated_at < PENDING_IN_FLIGHT:
            return None   # another request is calling the platform right now
        if row.status == PayAction.Status.PENDING and p.platform == "prolific" and kind == PayAction.Kind.BONUS:
            raise PayRefused("This Prolific bonus may have been paid (no answer came back); check Prolific "
                             "before doing anything: its pay call is not idempotent.")
        row.status, row.attempts, row.by = PayAction.Status.PENDING, row.attempts + 1, by
        # a bonus keeps the amount and reason of its first attempt (the same key pays the same thing)
        if kind != PayAction.Kind.BONUS:
            row.reason = reason or row.reason
        row.save(update_fields=["status", "attempts", "by", "reason"])
        return row


def _check_budget(p: Participant, cents: int, *, exclude_pk=None) -> None:
    """Caller is in a transaction: locks the batch's bonus rule (concurrent runs wait here) and
    raises OverBudget when this bonus would take the batch's bonuses past the budget."""
    rule = BonusRule.objects.select_for_update().filter(batch_id=p.batch_id).first()
    if rule is None or rule.budget_cents is None:
        raise PayRefused(f"{p.worker_id}: set this batch's bonus budget (the bonus rule on the review page) before "
                         "paying bonuses.")
    committed = bonus_committed(p.batch_id, exclude_pk=exclude_pk)
    if committed + cents > rule.budget_cents:
        raise OverBudget(f"{p.worker_id}: the bonus of {cents} cents was not paid: the batch's bonuses would reach "
                         f"{committed + cents} cents, past its budget of {rule.budget_cents} cents "
                         f"({committed} already paid or being paid).",
                         worker_id=p.worker_id, cents=cents, budget=rule.budget_cents, committed=committed)


def _done(row: PayAction, answer) -> None:
    row.status, row.answer, row.error, row.sent_at = PayAction.Status.SENT, _plain(answer), "", timezone.now()
    row.save(update_fields=["status", "answer", "error", "sent_at"])


def _failed(row: PayAction, exc: Exception) -> None:
    row.status = PayAction.Status.FAILED
    if isinstance(exc, prolific.ProlificError):
        row.error, answer = f"{exc.status}: {exc.answer}", _plain(exc.answer)
    else:
        row.error = f"{mturk.error_code(exc)}: {mturk.error_message(exc)}"
        answer = _plain((getattr(exc, "response", None) or {}).get("Error") or {})
    setup = row.answer.get("setup") if isinstance(row.answer, dict) else None
    # a Prolific bonus set up before the pay failed keeps its bulk id: the retry pays that one
    row.answer = {"setup": setup, "error": answer} if setup else answer
    row.save(update_fields=["status", "error", "answer"])


def _plain(x):
    return json.loads(json.dumps(x, default=str)) if x is not None else {}


def _mturk_client(p: Participant, clients: dict):
    """The client of the endpoint the participant's assignment is on: the same answer as at entry
    (``verify.participant_endpoint``: the HIT's launch row, else the recorded ``turkSubmitTo``)."""
    live = verify.participant_endpoint(p).live
    key = ("mturk", live)
    if key not in clients:
        clients[key] = mturk.client(live=live)
    return clients[key]


def _prolific_client(clients: dict):
    if "prolific" not in clients:
        clients["prolific"] = prolific.Client()
    return clients["prolific"]


def act(p: Participant, kind: str, *, by=None, reason: str = "", retry: bool = False, clients: dict | None = None,
        block_qualification_id: str = "", unpaid_ok: bool = False) -> PayAction | None:
    """Approve, reject, bonus or block one participant; returns the row (None: nothing to send).
    ``unpaid_ok``: approve even when the worker's outcome pays nothing (a person confirmed it)."""
    clients = {} if clients is None else clients
    if p.platform not in ("mturk", "prolific"):
        raise PayRefused(f"{p.worker_id} came through {p.platform or 'no platform'}: nothing to pay on a platform.")
    if kind == PayAction.Kind.REJECT and not reason.strip():
        raise PayRefused("A rejection needs a reason the worker will read.")
    if kind in (PayAction.Kind.APPROVE, PayAction.Kind.REJECT, PayAction.Kind.BONUS):
        pay_id = p.assignment_id if p.platform == "mturk" else p.session_id
        if not pay_id:
            raise PayRefused(f"{p.worker_id} has no {'assignment' if p.platform == 'mturk' else 'submission'} id.")
    if kind == PayAction.Kind.APPROVE and not unpaid_ok and pays_nothing(p):
        raise PayRefused(f"{p.worker_id}'s outcome ({p.outcome or 'none yet'}) pays nothing here; approving pays the "
                         "platform's reward: confirm it to approve.")
    amount = 0
    if kind == PayAction.Kind.BONUS:
        amount = bonus_cents(rule_for(p.batch), participant_matches(p))
        if amount <= 0:
            raise PayRefused(f"{p.worker_id} earned no bonus.")
        reason = reason or f"Bonus for your games in {p.batch.title}."
    if kind == PayAction.Kind.BLOCK and p.platform == "mturk" and not block_qualification_id:
        raise PayRefused("Set the block qualification first (create it on the review page).")
    if kind == PayAction.Kind.BLOCK and p.platform == "prolific":
        raise PayRefused("Prolific has no per-worker block call: add the worker to the block list "
                         "of the next study (the launch form's block list).")
    if kind in (PayAction.Kind.APPROVE, PayAction.Kind.BONUS):
        confirmed_or_refuse(p)
    row = _claim(p, kind, amount=amount, reason=reason, by=by, retry=retry)
    if row is None:
        return None
    try:
        if p.platform == "mturk":
            mt = _mturk_client(p, clients)
            if kind == PayAction.Kind.APPROVE:
                answer = mturk.approve(mt, p.assignment_id, reason)
            elif kind == PayAction.Kind.REJECT:
                answer = mturk.reject(mt, p.assignment_id, reason)
            elif kind == PayAction.Kind.BONUS:
                answer = mturk.send_bonus(mt, worker_id=p.worker_id, assignment_id=p.assignment_id,
                                          cents=row.amount_cents, reason=row.reason, token=row.key)
            else:
                answer = mturk.soft_block(mt, worker_id=p.worker_id, qualification_id=block_qualification_id)
        else:
            pc = _prolific_client(clients)
            if kind == PayAction.Kind.APPROVE:
                answer = pc.approve(p.session_id)
            elif kind == PayAction.Kind.REJECT:
                answer = pc.reject(p.session_id, reason)
            elif kind == PayAction.Kind.BONUS:
                setup = row.answer.get("setup") if isinstance(row.answer, dict) else None
                if not setup:
                    setup = pc.setup_bonuses(p.study_id, [(p.worker_id, row.amount_cents)])
                    row.answer = {"setup": setup}
                    row.save(update_fields=["answer"])   # the bulk id is known before the one pay call
                answer = {"setup": setup, "pay": pc.pay_bonuses(setup["id"])}
    except (ClientError, prolific.ProlificError) as exc:
        already = _already(mt, p, kind, exc, row) if isinstance(exc, ClientError) else None
        if already:
            _done(row, {**already, "error": mturk.error_message(exc)})
            if kind == PayAction.Kind.BONUS:
                Participant.objects.filter(pk=p.pk).update(bonus_cents=row.amount_cents)
            return row
        _failed(row, exc)
        return row
    except (BotoCoreError, prolific.ProlificUnknown) as exc:
        row.error = f"no answer: {exc}"
        row.save(update_fields=["error"])   # stays pending: it may have happened
        return row
    _done(row, answer)
    if kind == PayAction.Kind.BONUS:
        Participant.objects.filter(pk=p.pk).update(bonus_cents=row.amount_cents)
    return row


def _already(mt, p: Participant, kind: str, exc, row: PayAction) -> dict | None:
    """Did an earlier attempt take effect? MTurk answers RequestError to an approve of an assignment
    no longer Submitted, and to a send_bonus whose UniqueRequestToken it has seen; then it is asked
    (get_assignment / list_bonus_payments) and the row is marked sent only when MTurk shows it done."""
    if mturk.error_code(exc) != "RequestError":
        return None

    try:
        if kind == PayAction.Kind.APPROVE:
            status = mt.get_assignment(AssignmentId=p.assignment_id)["Assignment"]["AssignmentStatus"]
            return {"already": status} if status == "Approved" else None
        if kind == PayAction.Kind.BONUS and row.attempts > 1:
            paid = mt.list_bonus_payments(AssignmentId=p.assignment_id).get("BonusPayments") or []
            match = [b for b in paid if b.get("BonusAmount") == mturk.dollars(row.amount_cents)]
            return {"already": "paid", "bonus_payments": match} if match else None
    except (ClientError, BotoCoreError, KeyError):
        return None
    return None


def act_many(participants, kind: str, **kw) -> dict:
    """Bulk: each participant on its own (one failure does not stop the others)."""
    out = {"sent": 0, "skipped": 0, "failed": 0, "refused": [], "over_budget": []}
    clients = kw.pop("clients", None) or {}
    for p in participants:
        try:
            row = act(p, kind, clients=clients, **kw)
        except OverBudget as exc:
            out["over_budget"].append(exc)
            continue
        except PayRefused as exc:
            out["refused"].append(str(exc))
            continue
        if row is None:
            out["skipped"] += 1
        elif row.status == PayAction.Status.SENT:
            out["sent"] += 1
        else:
            out["failed"] += 1
    return out


# ------------------------------------------------------------------------------------ launching
def launch_mturk(batch: Batch, spec: mturk.HitSpec, *, live: bool, by=None, client=None) -> Launch:
    """Create the HIT; the Launch row records what was sent and what came back (or the error)."""
    launch = Launch.objects.create(batch=batch, platform="mturk", live=live, by=by, status="sending",
                                   params={"hit_type": spec.hit_type_params(), "hit": spec.hit_params("", batch.slug)})
    try:
        out = mturk.create_hit(client or mturk.client(live=live), spec, annotation=batch.slug)
    except (ClientError, BotoCoreError) as exc:
        launch.status, launch.error = "failed", f"{mturk.error_code(exc)}: {mturk.error_message(exc)}"
        launch.save(update_fields=["status", "error"])
        return launch
    launch.hit_type_id, launch.hit_id, launch.answer, launch.status = (out["hit_type_id"], out["hit_id"],
                                                                       _plain(out["answer"]), "sent")
    launch.save(update_fields=["hit_type_id", "hit_id", "answer", "status"])
    return launch


def launch_prolific(batch: Batch, spec: prolific.StudySpec, *, publish: bool, by=None, client=None) -> Launch:
    launch = Launch.objects.create(batch=batch, platform="prolific", live=publish, by=by, status="sending",
                                   params=spec.body())
    pc = client or prolific.Client()
    try:
        study = pc.create_study(spec)
        launch.study_id, launch.answer = study.get("id", ""), _plain(study)
        if publish:
            launch.answer = {"study": launch.answer, "publish": _plain(pc.transition_study(launch.study_id, "PUBLISH"))}
        launch.status = "sent"
    except prolific.ProlificError as exc:
        launch.status, launch.error, launch.answer = "failed", str(exc), _plain(exc.answer)
    except prolific.ProlificUnknown as exc:
        launch.status, launch.error = "unknown", f"no answer: {exc}"
    launch.save(update_fields=["study_id", "answer", "status", "error"])
    return launch


def excluded_workers(batch: Batch, platform: str) -> list[str]:
    """Worker ids of ``platform`` who took part in a study this batch excludes (for Prolific's block
    list; the entry check in crowd/studies.py refuses them anyway)."""
    studies = batch.excluded_studies.all()
    return sorted(set(Participant.objects.filter(batch__studies__in=studies, platform=platform)
                      .values_list("worker_id", flat=True)))


# --------------------------------------------------------------------------------- reconciliation
def _endpoint_cell(endpoint: verify.Endpoint | None) -> str:
    """MTurk's endpoint of the assignment: "live" or "sandbox" for a launched HIT, "live (turkSubmitTo)"
    or "sandbox (turkSubmitTo)" for a HIT made by hand; "" for any other platform."""
    if endpoint is None:
        return ""
    return endpoint.name if endpoint.launched else f"{endpoint.name} (turkSubmitTo)"


def reconciliation_csv(batch: Batch) -> str:
    """The review page's CSV: one row per participant. Ids, codes and reasons a participant can
    influence (a Prolific id, a session id) are quoted and escaped (groundtalk_web.csvsafe). The
    last column is MTurk's endpoint of the assignment (``verify.participant_endpoint``), the one
    approve, reject and bonus use."""
    buf = io.StringIO()
    w = csvsafe.writer(buf)
    w.writerow(["platform", "worker_id", "assignment_or_submission", "hit_or_study", "exit_reason", "outcome",
                "completion_code", "pay", "pay_cents", "approved", "rejected", "bonus_cents", "bonus_status",
                "bonus_paid_at", "bonus_key", "mturk_endpoint"])
    for r in review_rows(batch):
        p, a = r.participant, r.actions
        bonus = a.get(PayAction.Kind.BONUS)

        def st(kind):
            x = a.get(kind)
            return x.status if x else ""

        w.writerow([p.platform, p.worker_id, r.pay_id, p.hit_id or p.study_id, p.exit_reason, p.outcome,
                    p.completion_code, p.pay, "" if p.pay_cents is None else p.pay_cents,
                    st(PayAction.Kind.APPROVE), st(PayAction.Kind.REJECT),
                    bonus.amount_cents if bonus else 0, bonus.status if bonus else "",
                    bonus.sent_at.isoformat() if bonus and bonus.sent_at else "", bonus.key if bonus else "",
                    _endpoint_cell(r.endpoint)])
    return buf.getvalue()
