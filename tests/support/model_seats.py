"""What a seat played by a trained model records (Seat.agent_model, agents/serving/family.py), for
the tests of ``train_agent --data``: the data file's sha256 must reach every seat the model plays."""
from __future__ import annotations

from agents.model_config import ModelAgentConfig
from agents.serving.family import LoadedFamily


def seat_record(agent, checkpoint, checkpoint_sha256: str, *, family: str, game_id: str, role: str,
                fallback: str) -> dict:
    """The seat record of ``agent`` (loaded from ``checkpoint``, its ``family`` class path) served as
    the models file's ``[[agent]]`` of ``game_id``/``role`` would serve it."""
    name = f"test_{family.rsplit(':', 1)[-1].lower()}"
    config = ModelAgentConfig(name=name, game_id=game_id, role=role, kind="torch", family=family, family_key=name,
                              checkpoint=str(checkpoint), version="t", timeout_s=10, fallback=fallback)
    return LoadedFamily(config, agent, checkpoint_sha256, 0.0).seat_record()
