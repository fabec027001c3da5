"""Send a batch's recorded LLM requests again and say whether the model answers the same.

    python manage.py llm_replay --batch SLUG [--agent NAME] [--limit N] [--force]

For each recorded first request (:class:`agents.models.AgentCall`, ``attempt`` 1) of the batch's
ended matches (finished or timed out), in match and turn order:

1. the request is rebuilt from the match's event log: the rules replayed from the match's content
   and seed through its logged actions up to the call's ``seq`` (the state the turn was due on),
   the seat's view (``rules.view_for``), the messages and the ``json_schema`` response format as
   the agent builds them (agents/llm/request.py) with the agent's CURRENT configuration (its
   prompt template, ``images``, sampling parameters);
2. the rebuilt request, its images replaced by their sha256 (``for_record``, as recorded), must be
   the recorded one: a request that differs is reported ("the prompt, the adapter or the agent's
   parameters changed", with what changed) and not sent, unless ``--force``;
3. it is sent to the agent's endpoint (``base_url``, ``model``, the key from ``api_key_env``; the
   ``openai`` library, which tries a 429, a 5xx or a broken connection twice more), streamed when
   the agent streams, and the answer is parsed as the agent parses it;
4. the decision is compared with the recorded one: ``same``, ``DIFFERENT`` (both shown) or
   ``ERROR`` (the endpoint's or the parser's).

A call whose endpoint gave no answer when it was made (outcome ``error``) has nothing to compare
and is skipped. The summary counts each kind; with ``seed`` set and ``temperature = 0`` a
deterministic server answers the same, and the summary says which agents lack either. The key is
never printed. Exit status 0 whatever the answers (a different answer is a finding, not a failure);
an unknown batch or agent is an error.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict

import openai
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from agents.llm.agent import NO_KEY
from agents.llm.request import body_for, for_record, messages_for, response_format
from agents.models import AgentCall
from agents.registry import all_agents
from games.llm import DecisionError, parse_decision
from games.registry import get_game
from live.models import Batch, Match, MatchEvent

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)
SAME, DIFFERENT, CHANGED, ERROR, SKIPPED = "same", "different", "request changed", "error", "skipped"


def canonical(value):
    """``value`` as the database would give it back: a whole float as an int (``0.0`` and ``0``
    are the same parameter to a server), keys sorted when dumped."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def request_sha256(request: dict) -> str:
    """The sha256 of a recorded request (images as their sha256), in canonical JSON."""
    text = json.dumps(canonical(request), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def states_at(match: Match, seqs) -> dict:
    """``{seq: state}``: the match's state when its seq was each of ``seqs`` (its logged actions up
    to that seq replayed through the rules from its content and seed), in one pass over the log."""
    rules = get_game(match.game_id).rules
    state = rules.initial_state(match.content, match.seed, match.config)
    wanted = sorted(set(seqs))
    out = {}
    rows = iter(MatchEvent.objects.filter(match=match, seq__lte=wanted[-1] if wanted else 0)
                .exclude(action=None).order_by("seq").values_list("seq", "actor", "action"))
    pending = next(rows, None)
    for seq in wanted:
        while pending is not None and pending[0] <= seq:
            state, _ = rules.apply(state, pending[1], pending[2])
            pending = next(rows, None)
        out[seq] = state
    return out


def _changed(call: AgentCall, config, adapter, rebuilt: dict) -> str:
    """What differs between the recorded request and the one rebuilt, in words."""
    reasons = []
    if call.prompt_sha256 != config.prompt_sha256:
        reasons.append(f"the prompt template changed (sha256 {call.prompt_sha256[:12]} then, "
                       f"{config.prompt_sha256[:12]} now)")
    if call.adapter_version != adapter.version:
        reasons.append(f"the game's adapter changed (version {call.adapter_version} then, {adapter.version} now)")
    old, new = canonical(call.request), canonical(rebuilt)
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if keys:
        reasons.append("these parts of the request differ: " + ", ".join(keys))
    return "; ".join(reasons) or "the request differs"


def _short(value, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


class Command(BaseCommand):
    help = ("Rebuild each recorded LLM request of a batch's ended matches from the match's log, send it again "
            "to the agent's endpoint and say whether the model answers the same.")

    def add_arguments(self, parser):
        parser.add_argument("--batch", required=True, help="the batch's slug")
        parser.add_argument("--agent", default="", help="only this LLM agent's calls")
        parser.add_argument("--limit", type=int, default=0, help="at most this many calls (0: all)")
        parser.add_argument("--force", action="store_true",
                            help="send a request even when the rebuilt one differs from the recorded one")

    def handle(self, *args, **opts):
        batch = Batch.objects.filter(slug=opts["batch"]).first()
        if batch is None:
            raise CommandError(f"No batch {opts['batch']!r}.")
        if opts["limit"] < 0:
            raise CommandError("--limit must be 0 (all) or more.")
        calls = (AgentCall.objects.filter(match__batch=batch, match__status__in=ENDED, attempt=1)
                 .select_related("match").order_by("match__created_at", "match_id", "seq", "role"))
        if opts["agent"]:
            if not AgentCall.objects.filter(match__batch=batch, agent=opts["agent"]).exists():
                raise CommandError(f"No recorded call of agent {opts['agent']!r} in batch {batch.slug}.")
            calls = calls.filter(agent=opts["agent"])
        calls = list(calls[:opts["limit"]] if opts["limit"] else calls)
        if not calls:
            self.stdout.write(f"No recorded LLM call in the ended matches of batch {batch.slug}.")
            return
        self.force = opts["force"]
        self.out = getattr(self.stdout, "_out", self.stdout)
        self.clients: dict = {}
        specs = all_agents()
        by_match = defaultdict(list)
        for call in calls:
            by_match[call.match_id].append(call)
        counts: Counter = Counter()
        agents_seen: dict = {}
        with tqdm(total=len(calls), unit="call", desc=f"replaying {batch.slug}", file=self.stderr._out,
                  disable=None) as bar:
            for match_calls in by_match.values():
                match = match_calls[0].match
                problem = ""
                try:
                    states = states_at(match, [c.seq for c in match_calls])
                except Exception as exc:   # a log the rules refuse: each of its calls says so
                    states, problem = {}, f"the match's log cannot be replayed ({type(exc).__name__}: {exc})"
                for call in match_calls:
                    spec = specs.get(call.agent)
                    config = spec.model if spec is not None else None
                    if config is None or config.kind != "openai":
                        kind, detail = ERROR, f"{call.agent} is not an LLM agent (kind = \"openai\") of the models file"
                    elif call.seq not in states:
                        kind, detail = ERROR, problem
                    else:
                        agents_seen[config.name] = config
                        kind, detail = self._replay(call, config, states[call.seq])
                    counts[kind] += 1
                    label = f"match {str(call.match_id)[:8]} {call.role}@{call.seq} {call.agent}"
                    tqdm.write(f"{label}: {kind.upper() if kind != SAME else kind}: {detail}", file=self.out)
                    bar.update(1)
        for client in self.clients.values():
            client.close()
        self.stdout.write(
            f"{len(calls)} call(s) of batch {batch.slug}: {counts[SAME]} same, {counts[DIFFERENT]} different, "
            f"{counts[CHANGED]} request changed (not sent), {counts[ERROR]} error(s), "
            f"{counts[SKIPPED]} skipped (no answer recorded).")
        for name, config in sorted(agents_seen.items()):
            if config.seed is None or config.temperature != 0:
                self.stdout.write(f"{name}: without seed and temperature = 0 a model may answer differently by chance "
                                  f"(seed {config.seed}, temperature {config.temperature}).")

    # -- one call --------------------------------------------------------------------------------

    def _replay(self, call: AgentCall, config, state) -> tuple[str, str]:
        if call.outcome == AgentCall.Outcome.ERROR and not call.response_text:
            return SKIPPED, f"no answer was recorded ({_short(call.error)})"
        adapter = config.llm_role()
        try:
            view = get_game(call.match.game_id).rules.view_for(state, call.role)
            messages = messages_for(adapter, config.prompt_text, view, images=config.images)
            body = body_for(config, messages, response_format(adapter, view))
        except Exception as exc:   # an adapter that no longer builds this view's request
            return ERROR, f"the request cannot be rebuilt ({type(exc).__name__}: {exc})"
        rebuilt = for_record(body)
        changed = request_sha256(rebuilt) != request_sha256(call.request)
        note = ""
        if changed:
            why = _changed(call, config, adapter, rebuilt)
            if not self.force:
                return CHANGED, f"the rebuilt request differs from the one recorded: {why}; not sent (--force sends it)"
            note = f" (sent with --force although the request changed: {why})"
        try:
            text = self._send(config, body)
        except openai.APIStatusError as exc:
            return ERROR, f"HTTP {exc.status_code} from {config.endpoint}: {_short(str(exc.message), 300)}{note}"
        except openai.APIError as exc:
            return ERROR, f"{type(exc).__name__} from {config.endpoint}: {_short(str(exc), 300)}{note}"
        except CommandError as exc:
            return ERROR, str(exc)
        try:
            decision = parse_decision(text)
        except DecisionError:
            decision = None
        recorded = call.decision if call.decision is not None else call.response_text
        now = decision if decision is not None else text
        if canonical(recorded) == canonical(now):
            return SAME, _short(now) + note
        return DIFFERENT, f"recorded {_short(recorded)}; now {_short(now)}{note}"

    def _send(self, config, body: dict) -> str:
        """The answer's text from the agent's endpoint (the stream's pieces joined)."""
        key_name = (config.base_url, config.api_key_env)
        if key_name not in self.clients:
            key = os.environ.get(config.api_key_env, "") if config.api_key_env else NO_KEY
            if not key:
                raise CommandError(f"{config.name}: api_key_env names {config.api_key_env}, which is not set")
            self.clients[key_name] = openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=2,
                                                   timeout=config.timeout_s)
        client = self.clients[key_name]
        if not body.get("stream"):
            response = client.chat.completions.create(**body)
            return (response.choices[0].message.content or "") if response.choices else ""
        parts = []
        with client.chat.completions.create(**body) as stream:
            for chunk in stream:
                for choice in chunk.choices or ():
                    if choice.delta is not None and choice.delta.content:
                        parts.append(choice.delta.content)
        return "".join(parts)
