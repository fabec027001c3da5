"""Hashes of model checkpoints, shared by every model family and the model worker.

* :func:`file_sha256` names one exact file (what played a seat; recorded on the seat).
* :func:`state_dict_sha256` names what a checkpoint holds: a header (the family's format, version,
  kind and metadata) and every tensor's name, dtype, shape and bytes. ``torch.save`` writes a
  random ``serialization_id`` into every file, so two saves of the same weights differ in bytes;
  this hash does not (the same training gives the same hash).

No torch import at module level: the tensors are read through their own methods, and torch is
imported by the functions that save and load.

:func:`write_checkpoint` and :func:`load_model` are the checkpoint format the colors and CoDraw
families share (format, version, kind, metadata as sorted JSON, a CPU state dict), each family
naming its own format and building its own modules from the metadata.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def state_dict_sha256(header: str, state_dict: dict) -> str:
    digest = hashlib.sha256(header.encode())
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def _header(fmt: str, version: int, kind: str, meta_json: str) -> str:
    return f"{fmt}:{version}:{kind}\n{meta_json}\n"


def write_checkpoint(path: str | Path, *, fmt: str, version: int, kind: str, meta: dict, model) -> tuple[str, str]:
    """Save ``model``'s weights with its metadata as one family's checkpoint (format, version,
    kind, meta as sorted JSON, a CPU state dict); returns (file sha256, weights sha256)."""
    import torch   # here: only model workers and training import torch (file_sha256 needs none)

    payload = {"format": fmt, "version": version, "kind": kind, "meta_json": json.dumps(meta, sort_keys=True),
               "state_dict": {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)
    return file_sha256(path), state_dict_sha256(_header(fmt, version, kind, payload["meta_json"]),
                                                payload["state_dict"])


def read_checkpoint(path: str | Path, *, fmt: str, version: int, expect: str | None = None) -> dict:
    """A checkpoint written by :func:`write_checkpoint`, read with ``torch.load(weights_only=True)``;
    another format, version or (with ``expect``) kind is refused with ValueError."""
    import torch   # here: only model workers and training import torch

    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ValueError(f"{path} is not a {fmt} checkpoint.")
    if payload.get("version") != version:
        raise ValueError(f"{path} has checkpoint version {payload.get('version')}; this code reads {version}.")
    if expect is not None and payload["kind"] != expect:
        raise ValueError(f"{path} holds a {payload['kind']}, not a {expect}.")
    return payload


@dataclass
class LoadedModel:
    """A checkpoint read back: its modules (on the device, in eval mode), vocabulary and metadata,
    the file's sha256 and the weights' sha256."""

    kind: str
    model: Any
    vocab: Any
    meta: dict
    sha256: str
    weights_sha256: str
    path: str


def load_model(path: str | Path, *, fmt: str, version: int, build: Callable[[str, dict], tuple[Any, Any]],
               device="cpu", expect: str | None = None) -> LoadedModel:
    """Read a :func:`write_checkpoint` file (:func:`read_checkpoint`'s refusals), build its modules
    and vocabulary with ``build(kind, meta)``, load the weights and move them to ``device``."""
    payload = read_checkpoint(path, fmt=fmt, version=version, expect=expect)
    kind = payload["kind"]
    meta = json.loads(payload["meta_json"])
    model, vocab = build(kind, meta)
    model.load_state_dict(payload["state_dict"])
    model.to(device).eval()
    return LoadedModel(kind, model, vocab, meta, file_sha256(path),
                       state_dict_sha256(_header(fmt, version, kind, payload["meta_json"]), payload["state_dict"]),
                       str(path))
