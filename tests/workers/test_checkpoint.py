"""A checkpoint's round trip: trained and saved, loaded by the family on the configured device
(``torch.load(weights_only=True)``), its sha256 on the seat the model played and in the exports;
a pinned hash that does not match refuses to load; a device that is not there is a clear error."""
from __future__ import annotations

import hashlib
import io
import json

import pytest

from agents.registry import get_agent_spec
from agents.model_config import ModelConfigError
from agents.serving.family import load_family, warm_up
from agents.services import agent_take_turn
from games.records import model_label, model_seats
from research.exports import run_export
from live.models import MatchEvent, Seat
from live.services import match_apply_action

from tests.support.factories import colors_match
from tests.workers.conftest import torch_entry


def test_load_is_the_saved_model(models_file, tiny_checkpoint):
    import torch

    from tests.workers.tiny_family import TinyListenerNet

    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint))
    loaded = load_family(get_agent_spec("tiny_listener").model)
    assert loaded.sha256 == hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    saved = torch.load(checkpoint, weights_only=True)
    net = TinyListenerNet(**saved["config"])
    net.load_state_dict(saved["state_dict"])
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, loaded.instance.net.state_dict()[name])
    assert warm_up(loaded, [get_agent_spec("tiny_listener").model]) >= 0
    assert loaded.seat_record()["checkpoint_sha256"] == loaded.sha256


def test_a_pinned_hash_must_match(models_file, tiny_checkpoint):
    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint, extra=f'sha256 = "{"0" * 64}"'))
    with pytest.raises(ModelConfigError, match="has sha256 .* but the configuration pins 0000"):
        load_family(get_agent_spec("tiny_listener").model)


def test_cuda_without_a_gpu_is_a_clear_error(models_file, tiny_checkpoint):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint).replace('device = "cpu"', 'device = "cuda:0"'))
    with pytest.raises(ModelConfigError, match="device 'cuda:0' is configured but torch sees no CUDA device"):
        load_family(get_agent_spec("tiny_listener").model)


@pytest.mark.django_db
def test_the_hash_is_on_the_seat_and_in_the_exports(models_file, tiny_checkpoint):
    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint))
    sha = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    match, seats = colors_match(rounds=1, agents={"listener": "tiny_listener"})
    created = Seat.objects.get(pk=seats["listener"].pk).agent_model
    assert created["version"] == "tiny-1" and "checkpoint_sha256" not in created   # configured, not yet played
    assert Seat.objects.get(pk=seats["speaker"].pk).agent_model == {}
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "dark red"},
                       client_action_id="s1")
    match.refresh_from_db()
    # the model as a plain agent (simulate, in-process turns): one view per act_batch call
    assert agent_take_turn(match_id=match.id, role="listener", expected_seq=match.seq) == "acted"
    assert MatchEvent.objects.filter(match=match, type="color_clicked").exists()
    seat = Seat.objects.get(pk=seats["listener"].pk)
    assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "tiny-1"

    out = io.StringIO()
    run_export("jsonl", out)
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert record["seats"]["listener"]["model"]["checkpoint_sha256"] == sha
    assert model_seats(record) == {"listener": {"agent": "tiny_listener", "model": seat.agent_model}}
    assert model_label(record["seats"]["listener"]) == f"tiny_listener@tiny-1#{sha[:12]}"


def test_the_game_formats_carry_the_model():
    """colors-csv: a model's messages name it in ``source``; CoDraw JSON: the dialog's
    ``groundtalk_models`` (absent when no model played, so those files are unchanged); VisDial:
    the side file's ``models`` (the VisDial file keeps only VisDial's keys)."""
    from games.codraw import exports as codraw
    from games.colors import exports as colors
    from games.visdial import exports as visdial

    model = {"kind": "torch", "version": "v3", "checkpoint_sha256": "ab" * 32}
    seats = {"speaker": {"kind": "agent", "agent": "neural_speaker", "worker": None, "model": model},
             "listener": {"kind": "human", "agent": None, "worker": "p1", "model": None}}
    assert colors.sender({"seats": seats}, "speaker") == ("neural_speaker", f"neural_speaker@v3#{'ab' * 6}")
    assert colors.sender({"seats": seats}, "listener") == ("p1", "human")
    record = {"match_id": "m1", "seed": 1, "content": {"abs_t": ""}, "events": [], "seats": seats}
    assert codraw.entry_of(record)[0]["groundtalk_models"] == {"speaker": {"agent": "neural_speaker", "model": model}}
    assert "groundtalk_models" not in codraw.entry_of({**record, "seats": {}})[0]
    dialog = {"match_id": "m2", "game_id": "visdial_v1", "status": "finished", "seats": seats,
              "config": {"rounds": 1}, "content": {"caption": "a cube."},
              "events": [{"seq": 1, "type": "question_asked", "t": 1, "payload": {"round": 1, "text": "is it red?"}},
                         {"seq": 2, "type": "answer_given", "t": 2, "payload": {"round": 1, "text": "yes"}}]}
    out = visdial.to_visdial([dialog])
    assert set(out["data"]["dialogs"][0]) == {"image_id", "caption", "dialog"}   # VisDial's keys only
    side = visdial.image_id_map([dialog])["images"][0]
    assert side["image_id"] == out["data"]["dialogs"][0]["image_id"]
    assert side["models"] == {"speaker": {"agent": "neural_speaker", "model": model}}
    assert "models" not in visdial.image_id_map([{**dialog, "seats": {}}])["images"][0]


@pytest.mark.django_db
def test_simulate_plays_a_model_agent_and_records_its_checkpoint(models_file, tiny_checkpoint):
    from django.core.management import call_command

    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint))
    sha = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    call_command("simulate", "colors", "--matches", "2", "--config", '{"rounds": 3}',
                 "--seat", "speaker=colors_lexicon_speaker", "--seat", "listener=tiny_listener", stdout=io.StringIO())
    seats = Seat.objects.filter(role="listener", agent_name="tiny_listener")
    assert seats.count() == 2
    assert all(s.agent_model["checkpoint_sha256"] == sha for s in seats)
    assert MatchEvent.objects.filter(type="color_clicked", actor="listener").count() == 6
