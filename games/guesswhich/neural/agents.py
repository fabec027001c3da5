"""The neural ALICE as a model-agent family (GuessWhich ``guesswhich_v1`` and visual-dialog chat answerer).

The model-agent contract (as games/colors/neural/agents.py, served by ``manage.py model_worker``):
``NeuralAlice.load(checkpoint, device, **options)``; ``act_batch(views)`` answers every view whose
turn it is (``expects == "answer"``) with ONE forward call of ``self.module``; ``None`` for the
others; ``act(view) = act_batch([view])[0]``; ``warmup()``; ``checkpoint_sha256``,
``weights_sha256``, ``data_sha256`` (the people's data file it was trained on, ``train_agent --data``;
empty for generated data only) and ``version`` identify what played (agents/serving/family.py puts
``data_sha256`` in every seat's record).

The answerer view (games/guesswhich/rules.py and games/visdial/rules.py ``view_for``) carries the
secret scene (``image.scene``), the caption, the dialog (the pending round last, without an
answer) and ``pending_question``; the action is ``{"type": "answer", "text": ...}`` (1-200
characters), the answer the classifier ranks first.
"""
from __future__ import annotations

import torch

from games.guesswhich.neural.model import KIND, encode_batch, load_checkpoint

ANSWER_MAX = 200


def answer_turn(view: dict) -> bool:
    return (view.get("role") == "answerer" and bool(view.get("your_turn")) and view.get("expects") == "answer"
            and bool((view.get("image") or {}).get("scene")))


def item_of(view: dict) -> dict:
    history = [(d["question"], d["answer"]) for d in view.get("dialog") or [] if d.get("answer") is not None]
    return {"scene": view["image"]["scene"], "caption": view.get("caption"), "history": history,
            "question": view.get("pending_question") or ""}


class NeuralAliceAgent:
    """The neural ALICE from a ``guesswhich_neural_alice`` checkpoint."""

    kind = KIND

    def __init__(self, loaded, device: str):
        self.module, self.device = loaded.model, device
        self.vocab, self.answers, self.meta = loaded.vocab, loaded.answers, loaded.meta
        self.checkpoint_sha256, self.weights_sha256 = loaded.sha256, loaded.weights_sha256
        self.version = f"{KIND}@{loaded.sha256[:12]}"
        # the sha256 of the people's data file it was trained on (train_agent --data), "" for generated data
        self.data_sha256 = (loaded.meta.get("data") or {}).get("sha256", "")

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", **options) -> "NeuralAliceAgent":
        if options:
            raise TypeError(f"{cls.__name__} takes no options, got {sorted(options)}")
        return cls(load_checkpoint(checkpoint, device), device)

    def act(self, view: dict) -> dict | None:
        return self.act_batch([view])[0]

    def act_batch(self, views: list[dict]) -> list[dict | None]:
        todo = [i for i, view in enumerate(views) if answer_turn(view)]
        out: list[dict | None] = [None] * len(views)
        if todo:
            with torch.inference_mode():
                best = self.module(*encode_batch(self.vocab, [item_of(views[i]) for i in todo], self.device))
                for i, k in zip(todo, best.argmax(dim=-1).tolist()):
                    out[i] = {"type": "answer", "text": self.answers[k][:ANSWER_MAX]}
        return out

    def warmup(self) -> None:
        self.act_batch([self.warmup_view()])

    @staticmethod
    def warmup_view() -> dict:
        scene = {"objects": [{"shape": "cube", "color": "red", "size": "large", "material": "metal",
                              "3d_coords": [0.5, -1.0, 0.7]}]}
        return {"game_id": "guesswhich_v1", "role": "answerer", "your_turn": True, "expects": "answer",
                "round": 1, "caption": "There is a red cube.", "pending_question": "Is there a cube?",
                "image": {"id": "img01", "scene": scene},
                "dialog": [{"round": 1, "question": "Is there a cube?", "answer": None}]}


FAMILIES = {KIND: NeuralAliceAgent}
