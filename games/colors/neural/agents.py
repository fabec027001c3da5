"""Neural color agents (``colors_v1``) built from checkpoints of ``manage.py train_agent``.

The model-agent contract (shared with the batched model worker):

* ``Family.load(checkpoint, device, **options)`` reads the checkpoint with
  ``torch.load(weights_only=True)`` (:func:`games.colors.neural.model.load_checkpoint`) onto ``device``
  (``"cpu"``, ``"cuda"``, ``"cuda:1"`` ...);
* ``act_batch(views) -> [action | None]`` answers a list of views (exactly
  ``rules.view_for(state, role)``) with ONE forward call of the family's top module (``self.module``)
  for all the views whose turn it is; ``None`` for a view where this seat has nothing to do;
* ``act(view) = act_batch([view])[0]``, so a family is also a plain agent (agents/base.py);
* ``warmup()`` runs one forward pass on a made-up view; ``checkpoint_sha256`` (the file),
  ``weights_sha256`` (what it holds, stable across re-saves), ``data_sha256`` (the people's data
  file it was trained on, ``train_agent --data``; "" for generated data only) and ``version``
  identify what played.

Families:

* :class:`NeuralLiteralListener` (L0) — clicks the color with the highest ``L0(c | u)`` for the
  speaker's messages of this round;
* :class:`NeuralPragmaticListener` (L2 blended with L0, Monroe et al. 2017) — needs the listener
  checkpoint and a speaker checkpoint (``speaker=PATH`` option; a relative path not found from the
  working directory is read from the listener checkpoint's folder, so a models file can name the
  speaker beside its listener: ``options = { speaker = "colors_neural_speaker.pt" }``);
* :class:`NeuralSpeaker` (S0) — says its greedy description of the target once per round.
"""
from __future__ import annotations

from pathlib import Path

import torch

from games.colors.neural.model import (PragmaticListener, SpeakerDecoder, ids_to_lists, load_checkpoint,
                                 pad_batch)

GAME_ID = "colors_v1"
WARMUP_VIEW_COLORS = [[0, 80, 50], [120, 60, 50], [240, 40, 50]]


def speaker_text(view: dict) -> str:
    return " ".join(m["text"] for m in view.get("messages", []) if m.get("role") == "speaker")


def listener_turn(view: dict) -> bool:
    return (view.get("role") == "listener" and bool(view.get("can_click")) and not view.get("over")
            and len(view.get("colors") or []) == 3)


def speaker_turn(view: dict) -> bool:
    return (view.get("role") == "speaker" and not view.get("over") and len(view.get("colors") or []) == 3
            and not any(m.get("role") == "speaker" for m in view.get("messages", [])))


def colors_of(views: list[dict], device) -> torch.Tensor:
    return torch.tensor([[c["hsl"] for c in v["colors"]] for v in views], dtype=torch.float32, device=device)


class _Family:
    kind = ""

    def __init__(self, module: torch.nn.Module, device: str, loaded, version: str):
        self.module, self.device = module, device
        self.checkpoint_sha256, self.weights_sha256 = loaded.sha256, loaded.weights_sha256
        # the sha256 of the people's data file it was trained on (train_agent --data), "" for generated data
        self.data_sha256 = (loaded.meta.get("data") or {}).get("sha256", "")
        self.version = version

    def act(self, view: dict) -> dict | None:
        return self.act_batch([view])[0]

    def warmup(self) -> None:
        self.act_batch([self.warmup_view()])

    def _turn(self, view: dict) -> bool:
        raise NotImplementedError

    def act_batch(self, views: list[dict]) -> list[dict | None]:
        todo = [i for i, view in enumerate(views) if self._turn(view)]
        out: list[dict | None] = [None] * len(views)
        if todo:
            with torch.inference_mode():
                for i, action in zip(todo, self._actions([views[i] for i in todo])):
                    out[i] = action
        return out


class NeuralLiteralListener(_Family):
    """L0 from a ``colors_neural_listener`` checkpoint."""

    kind = "colors_neural_listener"

    def __init__(self, loaded, device: str):
        super().__init__(loaded.model, device, loaded, f"{loaded.kind}@{loaded.sha256[:12]}")
        self.vocab = loaded.vocab

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", **options) -> "NeuralLiteralListener":
        if options:
            raise TypeError(f"{cls.__name__} takes no options, got {sorted(options)}")
        return cls(load_checkpoint(checkpoint, device, expect=cls.kind), device)

    def _turn(self, view):
        return listener_turn(view)

    def scores(self, views: list[dict]) -> torch.Tensor:
        """(B, 3) log-scores over each view's colors in the listener's order (one forward call)."""
        ids, lengths = pad_batch([self.vocab.encode(speaker_text(v)) for v in views], self.device)
        return self.module(ids, lengths, colors_of(views, self.device))

    def _actions(self, views):
        best = self.scores(views).argmax(dim=-1).tolist()
        return [{"type": "click", "position": int(p), "round": v["round"]} for p, v in zip(best, views)]

    @staticmethod
    def warmup_view() -> dict:
        return {"game_id": GAME_ID, "role": "listener", "round": 1, "can_click": True, "over": False,
                "colors": [{"hsl": c} for c in WARMUP_VIEW_COLORS],
                "messages": [{"role": "speaker", "text": "the red one", "at": 0}]}


def speaker_path(checkpoint: str, speaker: str) -> str:
    """``speaker`` as given when it is absolute or found from the working directory, else beside the
    listener ``checkpoint`` (the models file resolves ``checkpoint`` against its own folder)."""
    given = Path(speaker)
    if given.is_absolute() or given.is_file():
        return speaker
    beside = Path(checkpoint).parent / given
    if beside.is_file():
        return str(beside)
    raise FileNotFoundError(f"NeuralPragmaticListener: no speaker checkpoint {speaker!r} (looked in the working "
                            f"directory and beside the listener, {beside})")


class NeuralPragmaticListener(NeuralLiteralListener):
    """L2 blended with L0 (:class:`games.colors.neural.model.PragmaticListener`): the listener
    checkpoint plus ``speaker=PATH``, a ``colors_neural_speaker`` checkpoint."""

    def __init__(self, loaded, speaker_loaded, device: str):
        table = torch.tensor([loaded.vocab.lookup(word) for word in speaker_loaded.vocab.words],
                             dtype=torch.long)
        module = PragmaticListener(loaded.model, speaker_loaded.model, table).to(device).eval()
        _Family.__init__(self, module, device, loaded,
                         f"colors_neural_pragmatic@{loaded.sha256[:12]}+{speaker_loaded.sha256[:12]}")
        self.vocab = loaded.vocab
        self.speaker_sha256 = speaker_loaded.sha256

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", speaker: str = "", speaker_sha256: str = "",
             **options) -> "NeuralPragmaticListener":
        """``speaker_sha256`` (optional) pins the speaker checkpoint as an entry's ``sha256`` pins the
        listener: a file with another hash is refused."""
        if options:
            raise TypeError(f"{cls.__name__} takes only speaker=PATH and speaker_sha256, got {sorted(options)}")
        if not speaker:
            raise TypeError("NeuralPragmaticListener needs speaker=PATH (a colors_neural_speaker checkpoint)")
        speaker_loaded = load_checkpoint(speaker_path(checkpoint, speaker), device, expect="colors_neural_speaker")
        if speaker_sha256 and speaker_loaded.sha256 != speaker_sha256:
            raise ValueError(f"NeuralPragmaticListener: the speaker checkpoint {speaker} has sha256 "
                             f"{speaker_loaded.sha256}, but speaker_sha256 pins {speaker_sha256}.")
        return cls(load_checkpoint(checkpoint, device, expect="colors_neural_listener"), speaker_loaded, device)


class NeuralSpeaker(_Family):
    """S0 from a ``colors_neural_speaker`` checkpoint: its greedy description of the target."""

    kind = "colors_neural_speaker"

    def __init__(self, loaded, device: str):
        super().__init__(SpeakerDecoder(loaded.model).eval(), device, loaded,
                         f"{loaded.kind}@{loaded.sha256[:12]}")
        self.vocab = loaded.vocab

    @classmethod
    def load(cls, checkpoint: str, device: str = "cpu", **options) -> "NeuralSpeaker":
        if options:
            raise TypeError(f"{cls.__name__} takes no options, got {sorted(options)}")
        return cls(load_checkpoint(checkpoint, device, expect=cls.kind), device)

    def _turn(self, view):
        return speaker_turn(view)

    def _actions(self, views):
        target = torch.tensor([next(i for i, c in enumerate(v["colors"]) if c.get("target")) for v in views],
                              device=self.device)
        ids = self.module(colors_of(views, self.device), target)
        out = []
        for seq, view in zip(ids_to_lists(ids), views):
            text = self.vocab.decode(seq)[: view.get("max_message_len", 140)].strip() or "this one"
            out.append({"type": "chat", "text": text, "round": view["round"]})
        return out

    @staticmethod
    def warmup_view() -> dict:
        return {"game_id": GAME_ID, "role": "speaker", "round": 1, "can_chat": True, "over": False,
                "colors": [{"hsl": c, "target": i == 0} for i, c in enumerate(WARMUP_VIEW_COLORS)],
                "messages": [], "max_message_len": 140}


FAMILIES = {"colors_neural_listener": NeuralLiteralListener,
            "colors_neural_pragmatic_listener": NeuralPragmaticListener,
            "colors_neural_speaker": NeuralSpeaker}
