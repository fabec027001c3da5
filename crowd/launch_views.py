"""Staff pages: launch a batch on MTurk or Prolific, review its workers, pay bonuses (issue 12).

Thin: the forms check the input, crowd/payments.py does the work. Nothing is sent to a platform
without a POST from a staff member with the permission for it (crowd/staff.py): the sandbox and
Prolific drafts need ``crowd.launch_sandbox``; live MTurk, publishing or restarting a Prolific
study and adding assignments to a live HIT need ``crowd.launch_live`` and the "I understand this
pays real people" box; approving, rejecting, bonuses, blocks and the bonus rule need ``crowd.pay``
(the review page itself ``crowd.review``). Approving a worker whose outcome pays nothing is a
second step on the review page.
"""
from __future__ import annotations

import uuid

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from botocore.exceptions import BotoCoreError, ClientError

from crowd import mturk, outcomes, payments, platform_ids, prolific, reconcile, staff
from crowd.models import BonusRule, Launch, PayAction
from crowd.staff import LAUNCH_LIVE, LAUNCH_SANDBOX, PAY, REVIEW, staff_permission
from games.records import outcome_summary
from live.models import Batch

_ID_LIST = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 40}))


def _ids(text: str) -> tuple[str, ...]:
    return tuple(x for x in (t.strip() for t in text.replace(",", " ").split()) if x)


class LaunchForm(forms.Form):
    platform = forms.ChoiceField(choices=[("mturk", "Amazon Mechanical Turk"), ("prolific", "Prolific")])
    target = forms.ChoiceField(choices=[("sandbox", "MTurk sandbox / Prolific draft (nothing paid)"),
                                        ("live", "MTurk live / Prolific published (real workers, real money)")],
                               initial="sandbox")
    confirm_live = forms.BooleanField(required=False, label="I understand that live pays real people")
    title = forms.CharField(max_length=128)
    description = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))
    keywords = forms.CharField(max_length=200, required=False, initial="game, dialog, research")
    reward_cents = forms.IntegerField(min_value=1, max_value=100000, label="Reward (cents)")
    places = forms.IntegerField(min_value=1, max_value=5000, label="Assignments / places", initial=10)
    minutes = forms.IntegerField(min_value=1, max_value=600, label="Estimated minutes")
    duration_minutes = forms.IntegerField(min_value=5, max_value=24 * 60, initial=60,
                                          label="MTurk: time allotted (minutes)")
    lifetime_hours = forms.IntegerField(min_value=1, max_value=24 * 31, initial=24, label="MTurk: open for (hours)")
    auto_approve_hours = forms.IntegerField(min_value=0, max_value=24 * 30, initial=72,
                                            label="MTurk: auto-approve after (hours)")
    locales = forms.CharField(required=False, initial="US", label="MTurk: countries (e.g. US GB)")
    min_approval_rate = forms.IntegerField(required=False, min_value=0, max_value=100, initial=98,
                                           label="MTurk: approval rate ≥ (%)")
    min_approved_hits = forms.IntegerField(required=False, min_value=0, initial=500, label="MTurk: approved HITs ≥")
    block_qualification_id = forms.CharField(required=False, max_length=64, label="MTurk: block qualification")
    exclude_qualifications = _ID_LIST
    allow_list = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 40}),
                                 label="Prolific: allow list (participant ids)")
    block_list = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 40}),
                                 label="Prolific: block list (participant ids)")

    def __init__(self, *a, entry_url: str = "", batch: Batch | None = None, **kw):
        super().__init__(*a, **kw)
        self.entry_url, self.batch = entry_url, batch
        self.fields["exclude_qualifications"].label = "MTurk: has not taken part in (qualification ids)"

    def _prolific_ids(self, field: str) -> str:
        """A Prolific allow or block list in the ids' one form (crowd/platform_ids.py: 24 hex digits,
        lower case), as the entry check compares them; a pasted id that is not one is named."""
        ids, bad = [], []
        for x in _ids(self.cleaned_data.get(field) or ""):
            try:
                ids.append(platform_ids.prolific(x, "Prolific participant id"))
            except platform_ids.BadId:
                bad.append(ascii(x))
        if bad:
            raise forms.ValidationError(f"Not Prolific participant ids (24 characters 0-9 and a-f): {', '.join(bad)}.")
        return "\n".join(dict.fromkeys(ids))

    def clean_allow_list(self) -> str:
        return self._prolific_ids("allow_list")

    def clean_block_list(self) -> str:
        return self._prolific_ids("block_list")

    def clean(self):
        d = super().clean()
        live = d.get("target") == "live"
        if live and not d.get("confirm_live"):
            self.add_error("confirm_live", "Tick this box to launch live (or choose the sandbox).")
        platform = d.get("platform")
        if self.batch is not None and platform and platform not in (self.batch.entry_kinds or []):
            self.add_error("platform", f"This batch does not accept {platform} workers: add it to its entry kinds.")
        if platform == "mturk" and live and not self.entry_url.startswith("https://"):
            self.add_error("platform", f"MTurk shows only https pages; the entry URL is {self.entry_url}.")
        locales = _ids(d.get("locales") or "")
        if any(len(c) != 2 or not c.isalpha() for c in locales):
            self.add_error("locales", "Two-letter country codes, e.g. US GB.")
        d["locales"] = tuple(c.upper() for c in locales)
        if platform == "prolific" and self.batch is not None:
            missing = [o for o in ("completed",) if not (self.batch.prolific_codes or {}).get(o)]
            if missing:
                self.add_error("platform", "Set the batch's Prolific completion codes first (at least 'completed').")
        return d

    def hit_spec(self) -> mturk.HitSpec:
        d = self.cleaned_data
        return mturk.HitSpec(
            title=d["title"], description=d["description"], keywords=d["keywords"], reward_cents=d["reward_cents"],
            assignments=d["places"], duration_s=d["duration_minutes"] * 60, lifetime_s=d["lifetime_hours"] * 3600,
            auto_approval_delay_s=d["auto_approve_hours"] * 3600, url=self.entry_url, locales=d["locales"],
            min_approval_rate=d["min_approval_rate"], min_approved_hits=d["min_approved_hits"],
            block_qualification_id=d["block_qualification_id"].strip(),
            exclude_qualification_ids=_ids(d["exclude_qualifications"]))

    def study_spec(self) -> prolific.StudySpec:
        d, b = self.cleaned_data, self.batch
        paid = frozenset(o for o in outcomes.OUTCOMES if outcomes.pay_for(b, o).kind == outcomes.FULL)
        return prolific.StudySpec(
            name=d["title"], internal_name=b.slug, description=d["description"], entry_url=self.entry_url,
            places=d["places"], reward_cents=d["reward_cents"], minutes=d["minutes"],
            completion_codes=dict(b.prolific_codes or {}), paid_outcomes=paid,
            allow_list=_ids(d["allow_list"]), block_list=_ids(d["block_list"]))


def _entry_url(request, batch: Batch) -> str:
    return request.build_absolute_uri(reverse("batch_entry", kwargs={"slug": batch.slug}))


@staff_permission(LAUNCH_SANDBOX, LAUNCH_LIVE)
@require_http_methods(["GET", "POST"])
def launch(request, slug: str):
    batch = get_object_or_404(Batch, slug=slug)
    url = _entry_url(request, batch)
    initial = {"title": batch.title, "description": (batch.instructions or batch.title)[:2000],
               "reward_cents": batch.pay_cents or None, "minutes": batch.expected_minutes,
               "block_qualification_id": settings.GT_MTURK_BLOCK_QUALIFICATION,
               "platform": "prolific" if "mturk" not in (batch.entry_kinds or []) else "mturk",
               "block_list": "\n".join(payments.excluded_workers(batch, "prolific"))}
    form = LaunchForm(request.POST or None, initial=initial, entry_url=url, batch=batch)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            d = form.cleaned_data
            live = d["target"] == "live"
            if why := staff.missing(request.user, LAUNCH_LIVE if live else LAUNCH_SANDBOX):
                return staff.forbidden(request, why + " Nothing was sent.")
            try:
                if d["platform"] == "mturk":
                    done = payments.launch_mturk(batch, form.hit_spec(), live=live, by=request.user)
                else:
                    done = payments.launch_prolific(batch, form.study_spec(), publish=live, by=request.user)
            except prolific.MissingToken:
                messages.error(request, "PROLIFIC_API_TOKEN is not set on the server: nothing was sent.")
                return redirect("crowd_launch", slug=slug)
            if done.status == "sent":
                where = {("mturk", False): "the MTurk sandbox", ("mturk", True): "MTurk, live",
                         ("prolific", False): "Prolific as a draft study (publish it below)",
                         ("prolific", True): "Prolific, published"}[(done.platform, live)]
                messages.success(request, f"Launched on {where}: {done.hit_id or done.study_id}.")
            else:
                messages.error(request, f"The platform refused the launch: {done.error}")
            return redirect("crowd_launch", slug=slug)
        status = 400
    return render(request, "research/launch.html",
                  {"batch": batch, "form": form, "entry_url": url, "launches": batch.launches.all()[:50],
                   "can_launch_live": request.user.has_perm(LAUNCH_LIVE)},
                  status=status)


@staff_permission(LAUNCH_SANDBOX, LAUNCH_LIVE)
@require_POST
def launch_action(request, slug: str, pk: int):
    """Add assignments / expire (MTurk); pause / resume / stop (Prolific). On a live launch, and to
    publish or start a Prolific study, ``crowd.launch_live``; on the sandbox or a draft, ``launch_sandbox``."""
    batch = get_object_or_404(Batch, slug=slug)
    row = get_object_or_404(Launch, pk=pk, batch=batch)
    action = request.POST.get("action", "")
    live = row.live or action in ("PUBLISH", "START")
    if why := staff.missing(request.user, LAUNCH_LIVE if live else LAUNCH_SANDBOX):
        return staff.forbidden(request, why + " Nothing was sent.")
    try:
        if row.platform == "mturk" and action == "add":
            try:
                n = int(request.POST.get("n", ""))
            except ValueError:
                n = 0
            if not 1 <= n <= 1000:
                messages.error(request, "Give a number of assignments between 1 and 1000.")
                return redirect("crowd_launch", slug=slug)
            mturk.add_assignments(mturk.client(live=row.live), row.hit_id, n, uuid.uuid4().hex)
            row.params = {**row.params, "added": row.params.get("added", 0) + n}
            row.save(update_fields=["params"])
        elif row.platform == "mturk" and action == "expire":
            mturk.expire(mturk.client(live=row.live), row.hit_id)
            row.status = "expired"
            row.save(update_fields=["status"])
        elif row.platform == "prolific" and action in ("PAUSE", "START", "STOP", "PUBLISH"):
            prolific.Client().transition_study(row.study_id, action)
            row.status = {"PAUSE": "paused", "START": "sent", "STOP": "stopped", "PUBLISH": "sent"}[action]
            row.live = row.live or action == "PUBLISH"   # a published study pays real people
            row.save(update_fields=["status", "live"])
        else:
            messages.error(request, "Unknown action.")
            return redirect("crowd_launch", slug=slug)
    except (ClientError, BotoCoreError) as exc:
        messages.error(request, f"MTurk refused: {mturk.error_code(exc)}: {mturk.error_message(exc)}")
    except (prolific.ProlificError, prolific.ProlificUnknown, prolific.MissingToken) as exc:
        messages.error(request, f"Prolific: {exc}")
    else:
        messages.success(request, f"{action} done.")
    return redirect("crowd_launch", slug=slug)


class BonusRuleForm(forms.ModelForm):
    class Meta:
        model = BonusRule
        fields = ["kind", "cents_per_unit", "cap_cents", "budget_cents"]
        labels = {"cents_per_unit": "Cents per unit", "cap_cents": "Cap per worker (cents)",
                  "budget_cents": "Budget of the batch (cents)"}


def _block_qualification(batch: Batch) -> str:
    for params in batch.launches.filter(platform="mturk").values_list("params", flat=True):
        quals = (params.get("hit_type") or {}).get("QualificationRequirements") or []
        for q in quals:
            if q.get("Comparator") == "DoesNotExist":
                return q["QualificationTypeId"]
    return settings.GT_MTURK_BLOCK_QUALIFICATION


def _unpaid_why(p) -> str:
    if not p.outcome:
        return f"has not finished ({p.state}): no outcome yet, so nothing is due"
    return f"ended with “{p.exit_reason or p.outcome}” (outcome {p.outcome}), which this batch pays nothing for"


def _confirm_unpaid(request, batch: Batch, unpaid: list) -> HttpResponse:
    """The second step of approving workers whose outcome pays nothing: who, why, and the same
    request again with ``confirm_unpaid``."""
    return render(request, "research/review_confirm.html",
                  {"batch": batch, "unpaid": [(p, _unpaid_why(p)) for p in unpaid],
                   "ids": request.POST.getlist("p"), "reason": request.POST.get("reason", ""),
                   "retry": bool(request.POST.get("retry"))})


def _say_over_budget(request, over: list) -> None:
    if not over:
        return
    first = over[0]
    workers = ", ".join(e.worker_id for e in over[:10]) + (" …" if len(over) > 10 else "")
    messages.error(request, f"Bonus budget reached: {len(over)} worker{'s' if len(over) != 1 else ''} left unpaid "
                            f"({sum(e.cents for e in over)} cents: {workers}). Their bonuses would take the batch past "
                            f"its budget of {first.budget} cents. Raise the budget in the bonus rule to pay them.")


@staff_permission(REVIEW, PAY)
@require_http_methods(["GET", "POST"])
def review(request, slug: str):
    batch = get_object_or_404(Batch, slug=slug)
    rule = payments.rule_for(batch)
    rule_form = BonusRuleForm(instance=rule, prefix="rule")
    status = 200
    if request.method == "POST" and (why := staff.missing(request.user, PAY)):
        return staff.forbidden(request, why + " Nothing was sent and nothing changed.")
    if request.method == "POST" and request.POST.get("form") == "rule":
        rule_form = BonusRuleForm(request.POST, instance=rule, prefix="rule")
        if rule_form.is_valid():
            rule_form.save()
            messages.success(request, "Bonus rule saved; the preview below uses it.")
            return redirect("crowd_review", slug=slug)
        status = 400
    elif request.method == "POST":
        action = request.POST.get("action", "")
        ids = request.POST.getlist("p")
        chosen = list(batch.participants.filter(pk__in=[i for i in ids if i.isdigit()]).order_by("pk"))
        if action not in PayAction.Kind.values:
            messages.error(request, "Choose an action.")
        elif not chosen:
            messages.error(request, "Select at least one worker.")
        elif action == PayAction.Kind.REJECT and not request.POST.get("reason", "").strip():
            messages.error(request, "A rejection needs a reason the worker will read: nothing was sent.")
        elif action == PayAction.Kind.APPROVE and not request.POST.get("confirm_unpaid") and \
                (unpaid := [p for p in chosen if payments.pays_nothing(p)]):
            return _confirm_unpaid(request, batch, unpaid)
        else:
            try:
                out = payments.act_many(chosen, action, by=request.user, reason=request.POST.get("reason", ""),
                                        retry=bool(request.POST.get("retry")),
                                        block_qualification_id=_block_qualification(batch),
                                        unpaid_ok=bool(request.POST.get("confirm_unpaid")))
            except prolific.MissingToken:
                messages.error(request, "PROLIFIC_API_TOKEN is not set on the server: nothing was sent.")
            else:
                text = f"{action}: {out['sent']} sent, {out['skipped']} already done, {out['failed']} failed"
                bad = out["failed"] or out["refused"] or out["over_budget"]
                (messages.error if bad else messages.success)(request, text + ".")
                _say_over_budget(request, out["over_budget"])
                for reason in out["refused"][:10]:
                    messages.warning(request, reason)
        return redirect("crowd_review", slug=slug)
    unseen = reconcile.unseen(batch)   # first: it settles pending MTurk participants (crowd/verify.py)
    rows = payments.review_rows(batch)
    dialogs = payments.dialog_excerpts(m.id for r in rows for m in r.matches)
    for r in rows:
        r.scores = [(m.id, outcome_summary(m.game_id, m.outcome) or m.status, dialogs.get(m.id, []))
                    for m in r.matches]
    total = sum(r.bonus_cents for r in rows if PayAction.Kind.BONUS not in r.actions)
    committed = payments.bonus_committed(batch.id)
    return render(request, "research/review.html",
                  {"batch": batch, "rows": rows, "rule_form": rule_form, "unpaid_bonus_cents": total,
                   "unseen": unseen,   # on the platforms, not finished here (issue 21)
                   "kinds": PayAction.Kind.choices, "can_pay": request.user.has_perm(PAY),
                   "budget": rule.budget_cents, "committed_cents": committed,
                   "budget_left": None if rule.budget_cents is None else max(0, rule.budget_cents - committed)},
                  status=status)


@staff_permission(REVIEW, PAY)
@require_safe
def reconciliation(request, slug: str):
    batch = get_object_or_404(Batch, slug=slug)
    response = HttpResponse(payments.reconciliation_csv(batch), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{batch.slug}-reconciliation.csv"'
    response["Cache-Control"] = "no-store"
    return response
