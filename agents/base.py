"""The agent interface and its specification.

An agent is an object with ``act(view) -> action | None``: given exactly the view a human in that
seat would get (``rules.view_for(state, role)``), return an action dict in the same format the
browser sends (``{"type": ..., ...}``), or ``None`` when it has nothing to do yet. Agents keep no
hidden state between calls: everything they need must be in the view (which includes the dialog
so far). The platform stamps ``"at"`` and applies the action through the same service, validation
and log as a human's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol


class Agent(Protocol):
    def act(self, view: dict) -> dict | None: ...


@dataclass(frozen=True)
class TurnContext:
    """What the platform tells an agent that has ``act_turn(view, turn)`` (an LLM agent,
    agents/llm/) besides the view: which turn this is, and two services of the match.

    ``match_id``, ``role``, ``expected_seq``  the turn (the match's seq when it became due)
    ``due_at``     when the turn became due (seconds since the epoch): the agent's ``timeout_s``
                   and a reply's pacing count from here
    ``check``      action -> the action as the game's schema validated it, or raises
                   :class:`games.base.IllegalAction`: the schema AND the rules, applied to a copy
                   of the match's state (nothing is written)
    ``publish``    frame -> None: an ephemeral frame to the match's other seats (``{"role": ...,
                   "text": ...}``, shown as "typing"); never logged, best effort
    ``check_all``  [action, ...] -> the actions validated, or raises :class:`IllegalAction`
                   naming the one refused: ``check`` for each action in order, each on the state
                   the ones before it left (one copy). A decision that takes several actions in
                   one turn (a CoDraw drawer's canvas changes, then its reply) is checked so;
                   None: only ``check`` (each action against the state at ``expected_seq``)
    """

    match_id: str
    role: str
    expected_seq: int
    due_at: float
    check: Callable[[dict], dict]
    publish: Callable[[dict], None]
    check_all: Callable[[list], list] | None = None


@dataclass(frozen=True)
class AgentSpec:
    """A named agent: which game and role it plays, how to build it, where it runs.

    ``queue`` is the Celery queue its turns go to (default ``agent.<name>``); ``device`` is
    ``"cpu"`` or ``"gpu"`` (GPU agents go to workers started with the solo pool, one per GPU).
    ``fallback`` names an in-process agent used when this one does not answer in ``timeout_s``.
    ``model`` is the configuration of a model agent declared in the models file
    (:class:`agents.model_config.ModelAgentConfig`: a torch family or the HTTP bridge), None
    for an agent a game's code registers.
    """

    name: str
    game_id: str
    role: str
    factory: Callable[..., Agent]
    description: str = ""
    kwargs: dict = field(default_factory=dict)
    queue: str | None = None
    device: str = "cpu"
    timeout_s: float = 20.0
    fallback: str | None = None
    model: object | None = None

    @property
    def queue_name(self) -> str:
        return self.queue or f"agent.{self.name}"

    def build(self, **overrides) -> Agent:
        return self.factory(**{**self.kwargs, **overrides})
