"""A neural QBot for GuessWhich (``guesswhich_v1`` questioner) as a model-agent family.

Its model is a learned answerer: the neural ALICE network (games/guesswhich/neural/model.py, trained by
``manage.py train_agent guesswhich_neural_alice`` on the generated CLEVR-Dialog-style dialogs),
read as ``P(answer | image, question, dialog so far)`` for every image of the pool, whose scenes
the questioner's view carries (``pool[i].scene``, what it sees in the pictures). With it the QBot

* keeps a belief over the pool: ``log b(i) = sum over rounds of log P(answer_t | image i,
  question_t, dialog before t)`` (an answer outside the model's answer vocabulary tells it
  nothing), recomputed from the view's dialog each turn (the view is the whole memory);
* asks, among the CLEVR-Dialog question templates the rule QBot draws from
  (``clevr.qbot.candidate_questions``, at most ``candidates`` of them, seeded order), the one
  whose answer it expects to tell it most about the secret: the mutual information between the
  answer and the image under its belief and its answer model;
* guesses the image it believes most likely (ruled-out images excluded), and skips the feedback.

Unlike the rule QBot (``qbot``: a symbolic answer model with a fixed error rate), what an answer
means to it is learned from data, so it copes with the answers a learned ALICE gives and with the
ones the symbolic executor cannot read. ``act_batch(views)`` makes ONE forward call of the
network for all the views of a batch (their belief items and every candidate's items together).
"""
from __future__ import annotations

import random

import torch

from clevr.qbot import candidate_questions
from games.guesswhich.neural.model import encode_batch, load_checkpoint

KIND = "guesswhich_neural_qbot"
CANDIDATES = 12


def question_turn(view: dict) -> bool:
    return view.get("role") == "questioner" and bool(view.get("your_turn"))


def candidates_for(dialog: list[dict], caption: str | None, *, seed: int, limit: int) -> list[str]:
    """The questions the QBot weighs: the CLEVR-Dialog templates for this dialog
    (``candidate_questions``) not asked yet, in a seeded order, at most ``limit``."""
    asked = {d["question"] for d in dialog}
    cands = [q for q, _ in candidate_questions(dialog, caption) if q not in asked]
    random.Random(f"{seed}:{caption}:{len(dialog)}").shuffle(cands)
    return cands[:limit] or ["How many objects are in the image?"]


def information_gain(belief: torch.Tensor, logp: torch.Tensor) -> torch.Tensor:
    """Per candidate question, the mutual information between its answer and the image.

    ``belief``: (n,) unnormalised log-belief over the pool; ``logp``: (candidates, n, answers)
    log P(answer | image, question). Returns (candidates,) ``sum_i b(i) KL(P(.|i) || P(.))``
    with ``P(a) = sum_i b(i) P(a|i)``, in nats."""
    b = torch.softmax(belief, dim=-1).unsqueeze(0).unsqueeze(-1)           # (1, n, 1)
    p_a_i = logp.exp()                                                      # (k, n, answers)
    p_a = (b * p_a_i).sum(dim=1, keepdim=True)                              # (k, 1, answers)
    return (b * p_a_i * (torch.log(p_a_i + 1e-12) - torch.log(p_a + 1e-12))).sum(dim=(1, 2))


def best_index(gains: torch.Tensor) -> int:
    """The first candidate of the largest gain (ties within 1e-9 go to the earlier one)."""
    values = gains.tolist()
    best = 0
    for k, g in enumerate(values):
        if g > values[best] + 1e-9:
            best = k
    return best


class NeuralQBot:
    """The questioner over a ``guesswhich_neural_alice`` checkpoint (its answer model)."""

    kind = KIND

    def __init__(self, loaded, device: str, candidates: int = CANDIDATES, seed: int = 0):
        self.module, self.device, self.vocab = loaded.model, device, loaded.vocab
        self.answer_index = {a: k for k, a in enumerate(loaded.answers)}
        self.checkpoint_sha256, self.weights_sha256 = loaded.sha256, loaded.weights_sha256
        self.version = f"{KIND}@{loaded.sha256[:12]}"
        # its answer model's people's data file (an ALICE trained with train_agent --data), "" for generated data
        self.data_sha256 = (loaded.meta.get("data") or {}).get("sha256", "")
        self.candidates, self.seed = int(candidates), int(seed)

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", **options) -> "NeuralQBot":
        unknown = set(options) - {"candidates", "seed"}
        if unknown:
            raise TypeError(f"{cls.__name__} takes the options candidates and seed, got {sorted(unknown)}")
        return cls(load_checkpoint(checkpoint, device), device, **options)

    def act(self, view: dict) -> dict | None:
        return self.act_batch([view])[0]

    def warmup(self) -> None:
        self.act_batch([self.warmup_view()])

    # ------------------------------------------------------------------------------------ one batch
    def act_batch(self, views: list[dict]) -> list[dict | None]:
        out: list[dict | None] = [None] * len(views)
        plans, items = [], []
        for i, view in enumerate(views):
            if not question_turn(view):
                continue
            expects = view.get("expects")
            if expects == "feedback":
                out[i] = {"type": "skip_feedback"}
                continue
            if expects not in ("question", "guess", "final_guess"):
                continue
            plan = self._plan(view)
            if not plan["pool"]:
                continue
            plan.update(index=i, start=len(items))
            items += plan.pop("items")
            plans.append(plan)
        if not plans:
            return out
        with torch.inference_mode():
            logp = self.module(*encode_batch(self.vocab, items, self.device))     # (items, answers)
        for plan in plans:
            out[plan["index"]] = self._decide(plan, logp)
        return out

    def _plan(self, view: dict) -> dict:
        """The items the decision needs: per pool image, each answered round (the belief) and,
        when a question is due, each candidate question."""
        pool = [(p["id"], p.get("scene") or {"objects": []}) for p in view.get("pool") or []]
        caption = view.get("caption")
        dialog = [d for d in view.get("dialog") or [] if d.get("question")]
        answered = [d for d in dialog if d.get("answer") is not None]
        items, observed = [], []
        for t, d in enumerate(answered):
            history = [(x["question"], x["answer"]) for x in answered[:t]]
            observed.append(self.answer_index.get(d["answer"]))
            items += [{"scene": scene, "caption": caption, "history": history, "question": d["question"]}
                      for _, scene in pool]
        cands = []
        if view.get("expects") == "question":
            cands = candidates_for(dialog, caption, seed=self.seed, limit=self.candidates)
            history = [(d["question"], d["answer"]) for d in answered]
            for q in cands:
                items += [{"scene": scene, "caption": caption, "history": history, "question": q} for _, scene in pool]
        return {"pool": pool, "items": items, "observed": observed, "cands": cands,
                "ruled": set(view.get("ruled_out") or []), "expects": view.get("expects")}

    def _decide(self, plan: dict, logp: torch.Tensor) -> dict:
        n, at = len(plan["pool"]), plan["start"]
        belief = torch.zeros(n, device=logp.device)
        for answer in plan["observed"]:
            rows = logp[at:at + n]
            at += n
            if answer is not None:
                belief = belief + rows[:, answer]
        if plan["expects"] == "question":
            k = len(plan["cands"])
            gains = information_gain(belief, logp[at:at + k * n].reshape(k, n, -1))
            return {"type": "ask", "text": plan["cands"][best_index(gains)]}
        order = sorted(range(n), key=lambda k: -float(belief[k]))
        for k in order:
            image_id = plan["pool"][k][0]
            if image_id not in plan["ruled"]:
                return {"type": "guess", "image_id": image_id}
        return {"type": "guess", "image_id": plan["pool"][order[0]][0]}

    @staticmethod
    def warmup_view() -> dict:
        scene = {"objects": [{"shape": "cube", "color": "red", "size": "large", "material": "metal",
                              "3d_coords": [0.5, -1.0, 0.7]}]}
        other = {"objects": [{"shape": "sphere", "color": "blue", "size": "small", "material": "rubber",
                              "3d_coords": [-0.5, 1.0, 0.35]}]}
        return {"game_id": "guesswhich_v1", "role": "questioner", "your_turn": True, "expects": "question",
                "round": 1, "caption": "There is one object.", "dialog": [],
                "pool": [{"id": "img01", "scene": scene}, {"id": "img02", "scene": other}]}
