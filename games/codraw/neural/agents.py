"""The neural CoDraw Drawer and Teller (``codraw_v1``) as model-agent families (docs/agents.md, "Model agents").

``NeuralDrawer.load(checkpoint, device)`` reads a ``codraw_neural_drawer`` checkpoint of
``manage.py train_agent codraw_neural_drawer`` (games/codraw/neural/model.py); ``act_batch(views)``
answers a list of Drawer views (``rules.view_for(state, "drawer")``) with ONE forward call for all
the views whose turn it is (``None`` for the others); ``act(view) = act_batch([view])[0]``;
``warmup()`` runs one forward pass on a made-up view.

Stateless, like the rule Drawer: for the Teller's latest message and the canvas as it is now, the
model scores the palette's clip arts (and, in checkpoints with the abstain class, "nothing
drawable is said") and predicts each one's place, depth, flip (and subtype for Mike and Jenny).
The pieces the message asks for are, with a multilabel checkpoint (a sigmoid per clip art,
the paper's design), every palette clip art whose probability reaches the checkpoint's
``threshold`` (none: it abstains); with an older softmax checkpoint, the top-scoring clip art and those scoring at least
``SEVERAL_SHARE`` of it and at least ``SEVERAL_MIN_P``; at most ``MAX_PIECES_PER_MESSAGE`` (a message may name several pieces), in
score order. The first of them not yet on the canvas is placed; else the best one, when it is
elsewhere (more than ``TOLERANCE_PX`` off, or another depth, flip or subtype), is updated (only the
best: the others' predicted places read its slot, so updating them too could go back and forth);
then the Drawer replies (``ok, drew the oak tree``), which ends its turn. When no clip art
passes the threshold or the abstain class scores highest (``ok``, ``not yet``, ``looks great``) it draws nothing and replies
``ABSTAIN_REPLY``. The choice reads only the message and a piece's predicted place never reads
that piece's own slot of the canvas (model.py), so drawing one changes neither its choice nor its
place: a turn is at most one canvas action per piece asked for, then the reply.
It never removes pieces.

``checkpoint_sha256`` (the file), ``weights_sha256`` (what it holds), ``data_sha256`` (the people's
data file it was trained on, ``train_agent --data``; "" for generated data only) and ``version``
identify what played (agents/serving/family.py puts ``data_sha256`` in every seat's record).

``NeuralTeller.load(checkpoint, device)`` reads a ``codraw_neural_teller`` checkpoint of ``manage.py
train_agent codraw_neural_teller`` (games/codraw/neural/teller_model.py); ``act_batch(views)`` answers
Teller views (``rules.view_for(state, "teller")``) with ONE forward call for all the views whose
turn it is: from the target and the Teller's own earlier messages, the model picks the next piece
(or stop) and generates its description (greedy); a message it already sent is not sent again
(its second choice is taken: the model decodes its two best). Like the rule Teller without peek
(and the paper's Tellers, which ignore the Drawer's replies), it never peeks and reads no Drawer
message; a peek left open is closed. It ends the game when the model chooses stop, when the
decoder produces no words or only repeats, or at the latest after ``MAX_MESSAGES_PER_PIECE``
messages per target piece (a guard against a model that never stops; the rule Teller sends
exactly one per piece).
Messages are cut at the view's ``max_message_len`` (140).
"""
from __future__ import annotations

import torch

from games.codraw import clipart as ca
from games.codraw import rules
from games.codraw.neural.model import ABSTAIN, canvas_features, load_checkpoint, pad_batch
from games.codraw.neural.teller_model import EOS_ID, detokenize, encode_words, history_tensors, scene_tensors

GAME_ID = rules.GAME_ID
TOLERANCE_PX = 12
SEVERAL_SHARE = 0.5            # a second (third) piece is asked for when it scores this share of the best
SEVERAL_MIN_P = 0.25           # ... and at least this probability (an unsure model's spread is not "several")
MAX_PIECES_PER_MESSAGE = 4
ABSTAIN_REPLY = "ok, what should I draw?"
MAX_MESSAGES_PER_PIECE = 2


def drawer_turn(view: dict) -> bool:
    return view.get("role") == rules.DRAWER and bool(view.get("your_turn")) and not view.get("over")


def last_teller_message(view: dict) -> str:
    messages = [m["text"] for m in view.get("chat", []) if m.get("role") == rules.TELLER]
    return messages[-1] if messages else ""


def _clamp(value: float, size: int) -> int:
    return int(round(min(max(value, 0.0), 1.0) * size))


class _CodrawModelAgent:
    """What both CoDraw model families share: loading a checkpoint of their ``kind`` (the model
    family contract of docs/agents.md), ``act`` as a batch of one, and the warm-up pass."""

    kind = ""

    def __init__(self, loaded, device: str):
        self.module, self.device, self.vocab = loaded.model, device, loaded.vocab
        self.checkpoint_sha256, self.weights_sha256 = loaded.sha256, loaded.weights_sha256
        self.version = f"{loaded.kind}@{loaded.sha256[:12]}"
        # the sha256 of the people's data file it was trained on (train_agent --data), "" for generated data
        self.data_sha256 = (loaded.meta.get("data") or {}).get("sha256", "")

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", **options) -> "_CodrawModelAgent":
        if options:
            raise TypeError(f"{cls.__name__} takes no options, got {sorted(options)}")
        return cls(load_checkpoint(checkpoint, device, expect=cls.kind), device)

    def act(self, view: dict) -> dict | None:
        return self.act_batch([view])[0]

    def warmup(self) -> None:
        self.act_batch([self.warmup_view()])


class NeuralDrawer(_CodrawModelAgent):
    kind = "codraw_neural_drawer"

    def predict(self, views: list[dict]) -> list[list[dict] | None]:
        """For each view, the pieces its latest Teller message asks for (one forward call), best
        first: ``[]`` when the model abstains (nothing drawable is said), None when there is no
        message yet or no palette."""
        encoded = [self.vocab.encode(last_teller_message(v)) for v in views]
        ids, values, lengths = pad_batch(encoded, self.device)
        canvas = torch.tensor([canvas_features(v.get("canvas") or []) for v in views], dtype=torch.float32,
                              device=self.device)
        out = self.module(ids, values, lengths, canvas)
        mask = torch.full(out["choose"].shape, float("-inf"), device=self.device)
        if out["choose"].shape[-1] > ca.N_CLIPARTS:
            mask[:, ABSTAIN] = 0.0
        for i, view in enumerate(views):
            for p in view.get("palette") or []:
                mask[i, int(p["idx"])] = 0.0
        cfg = self.module.cfg
        multilabel = bool(getattr(cfg, "multilabel", False))
        probs = torch.sigmoid(out["choose"] + mask) if multilabel else torch.softmax(out["choose"] + mask, dim=-1)
        top_p, top_k = probs.topk(min(MAX_PIECES_PER_MESSAGE, probs.shape[-1]), dim=-1)
        depth, flip, subtype = (out[h].argmax(-1).tolist() for h in ("depth", "flip", "subtype"))
        xy = out["xy"].tolist()
        pieces: list[list[dict] | None] = []
        for i, view in enumerate(views):
            if not last_teller_message(view) or not view.get("palette"):
                pieces.append(None)
                continue
            asked = []
            for rank, (p, idx) in enumerate(zip(top_p[i].tolist(), top_k[i].tolist())):
                if multilabel and p < cfg.threshold:
                    break                       # none above the threshold: [] (abstain)
                if not multilabel and (idx == ABSTAIN or p == 0.0 or (rank and (
                        p < SEVERAL_SHARE * top_p[i, 0].item() or p < SEVERAL_MIN_P))):
                    break                       # abstain best: []; a lower abstain ends the list
                piece = {"idx": idx, "x": _clamp(xy[i][idx][0], ca.CANVAS_W), "y": _clamp(xy[i][idx][1], ca.CANVAS_H),
                         "depth": int(depth[i][idx]), "flip": int(flip[i][idx])}
                if idx in ca.HUMAN_IDXS:
                    piece["subtype"] = int(subtype[i][idx])
                asked.append(piece)
            pieces.append(asked)
        return pieces

    def act_batch(self, views: list[dict]) -> list[dict | None]:
        todo = [i for i, view in enumerate(views) if drawer_turn(view)]
        out: list[dict | None] = [None] * len(views)
        if not todo:
            return out
        with torch.inference_mode():
            pieces = self.predict([views[i] for i in todo])
        for i, asked in zip(todo, pieces):
            out[i] = self._action(views[i], asked)
        return out

    def _action(self, view: dict, asked: list[dict] | None) -> dict:
        limit = int(view.get("max_message_len", rules.MAX_MESSAGE_LEN))
        if asked is None:
            return {"type": "chat", "text": "ok"[:limit]}
        if not asked:
            return {"type": "chat", "text": ABSTAIN_REPLY[:limit]}
        on_canvas = {int(p["idx"]): p for p in view.get("canvas") or []}
        for piece in asked:
            if piece["idx"] not in on_canvas:
                return {"type": "place", **piece}
        for piece in asked[:1]:     # only the best is moved: the others' places read its slot, so no ping-pong
            drawn = on_canvas[piece["idx"]]
            changes = {k: piece[k] for k in ("depth", "flip", "subtype") if k in piece and drawn.get(k) != piece[k]}
            if abs(drawn["x"] - piece["x"]) > TOLERANCE_PX or abs(drawn["y"] - piece["y"]) > TOLERANCE_PX:
                changes.update(x=piece["x"], y=piece["y"])
            if changes:
                return {"type": "update", "idx": piece["idx"], **changes}
        names = " and the ".join(ca.CLIPARTS[p["idx"]].name for p in asked)
        return {"type": "chat", "text": f"ok, drew the {names}"[:limit]}

    @staticmethod
    def warmup_view() -> dict:
        return {"game_id": GAME_ID, "role": rules.DRAWER, "your_turn": True, "over": False, "round": 0,
                "max_message_len": rules.MAX_MESSAGE_LEN, "canvas": [],
                "palette": [{"idx": idx} for idx in range(ca.N_CLIPARTS)],
                "chat": [{"role": rules.TELLER, "text": "big sun facing left, centered 1.0 in from left and 0.5 in from top",
                          "round": 0, "at": 0}]}


def teller_turn(view: dict) -> bool:
    return view.get("role") == rules.TELLER and bool(view.get("your_turn")) and not view.get("over")


def own_messages(view: dict) -> list[str]:
    return [m["text"] for m in view.get("chat", []) if m.get("role") == rules.TELLER]


class NeuralTeller(_CodrawModelAgent):
    kind = "codraw_neural_teller"

    def speak(self, views: list[dict]) -> list[str | None]:
        """For each view, the next message (None: stop), in one forward call: the model's best
        choice, or its second best when the best one's message was already sent."""
        feats, arts, subtypes, mask = scene_tensors([v.get("target") or [] for v in views], self.device)
        hist = history_tensors([[encode_words(self.vocab, m) for m in own_messages(v)] for v in views], self.device)
        out = self.module(feats, arts, subtypes, mask, *hist)
        texts = []
        for i, (ranked, rows) in enumerate(zip(out["ranked"].tolist(), out["tokens"].tolist())):
            said, text = set(own_messages(views[i])), None
            for choice, row in zip(ranked, rows):
                if choice == arts.shape[1] or not views[i].get("target"):
                    break                                          # stop
                cut = row.index(EOS_ID) if EOS_ID in row else len(row)
                limit = int(views[i].get("max_message_len", rules.MAX_MESSAGE_LEN))
                candidate = detokenize([self.vocab.words[t] for t in row[:cut] if t > EOS_ID])[:limit].rstrip(" ,")
                if candidate and candidate not in said:
                    text = candidate
                    break
            texts.append(text)
        return texts

    def act_batch(self, views: list[dict]) -> list[dict | None]:
        out: list[dict | None] = [None] * len(views)
        todo = []
        for i, view in enumerate(views):
            if not teller_turn(view):
                continue
            if (view.get("peek") or {}).get("open"):
                out[i] = {"type": "close_peek"}
            elif len(own_messages(view)) >= MAX_MESSAGES_PER_PIECE * len(view.get("target") or []):
                out[i] = {"type": "end"}
            else:
                todo.append(i)
        if todo:
            with torch.inference_mode():
                texts = self.speak([views[i] for i in todo])
            for i, text in zip(todo, texts):
                out[i] = {"type": "chat", "text": text} if text else {"type": "end"}
        return out

    @staticmethod
    def warmup_view() -> dict:
        return {"game_id": GAME_ID, "role": rules.TELLER, "your_turn": True, "over": False, "round": 0,
                "max_message_len": rules.MAX_MESSAGE_LEN, "chat": [],
                "peek": {"available": True, "open": False, "round": None, "canvas": None},
                "target": [{"idx": 3, "x": 80, "y": 60, "depth": 0, "flip": 0, "subtype": 0},
                           {"idx": ca.JENNY, "x": 300, "y": 280, "depth": 1, "flip": 1, "subtype": 12}]}


FAMILIES = {"codraw_neural_drawer": NeuralDrawer, "codraw_neural_teller": NeuralTeller}
