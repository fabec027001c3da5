"""Hashes of model checkpoints, shared by every model family and the model worker.

* :func:`file_sha256` names one exact file (what played a seat; recorded on the seat).
* :func:`state_dict_sha256` names what a checkpoint holds: a header (the family's format, version,
  kind and metadata) and every tensor's name, dtype, shape and bytes. ``torch.save`` writes a
  random ``serialization_id`` into every file, so two saves of the same weights differ in bytes;
  this hash does not (the same training gives the same hash).

No torch import here: the tensors are read through their own methods.
"""
from __future__ import annotations

import hashlib
from pathlib import Path


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


def write_checkpoint(path: str | Path, *, fmt: str, version: int, kind: str, meta: dict, model) -> tuple[str, str]:
    """Save ``model``'s weights with its metadata as one family's checkpoint (format, version,
    kind, meta as sorted JSON, a CPU state dict); returns (file sha256, weights sha256)."""
    import json

    import torch

    payload = {"format": fmt, "version": version, "kind": kind, "meta_json": json.dumps(meta, sort_keys=True),
               "state_dict": {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)
    return file_sha256(path), state_dict_sha256(f"{fmt}:{version}:{kind}\n{payload['meta_json']}\n",
                                                payload["state_dict"])


def read_checkpoint(path: str | Path, *, fmt: str, version: int, expect: str | None = None) -> dict:
    """A checkpoint written by :func:`write_checkpoint`, read with ``torch.load(weights_only=True)``;
    another format, version or (with ``expect``) kind is refused with ValueError."""
    import torch

    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ValueError(f"{path} is not a {fmt} checkpoint.")
    if payload.get("version") != version:
        raise ValueError(f"{path} has checkpoint version {payload.get('version')}; this code reads {version}.")
    if expect is not None and payload["kind"] != expect:
        raise ValueError(f"{path} holds a {payload['kind']}, not a {expect}.")
    return payload
