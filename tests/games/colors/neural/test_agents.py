"""Neural color agents: generated data, training beats chance, checkpoints, the batch contract."""
from __future__ import annotations

import copy

import pytest
import torch

from agents.checkpoints import file_sha256
from games.colors import content, rules
from games.colors.neural import model as neural
from games.colors.neural import data as neural_data
from games.colors.neural import train as neural_train
from games.colors.neural.agents import NeuralLiteralListener, NeuralPragmaticListener, NeuralSpeaker
from tests.conftest import ROOT

CHANCE = 1 / 3


# ------------------------------------------------------------------------------------------- data
def test_generated_data_is_reproducible_and_varied():
    a = neural_data.make_examples(200, 11)
    assert a == neural_data.make_examples(200, 11)
    assert a != neural_data.make_examples(200, 12)
    assert {e["condition"] for e in a} == set(content.CONDITIONS)
    assert {e["phenomenon"] for e in a} == {"name", "modified", "hedge", "comparative", "negation",
                                            "name_pair"}
    assert len({e["text"] for e in a}) > 120          # not a handful of strings
    for e in a:
        assert e["target"] in (0, 1, 2) and len(e["colors"]) == 3 and e["text"].strip()


def test_people_templates_are_held_out():
    for table in (neural_data.WRAP, neural_data.HEDGE, neural_data.COMPARATIVE,
                  neural_data.NEGATION, neural_data.PAIR):
        assert not set(table["train"]) & set(table["people"])
    train_words = {w for e in neural_data.make_examples(1500, 0) for w in neural.tokenize(e["text"])}
    people_words = {w for e in neural_data.make_examples(300, 2, "people") for w in neural.tokenize(e["text"])}
    assert {"somewhat", "definitely", "leaning", "kinda"} & people_words
    assert not {"somewhat", "definitely", "leaning", "kinda"} & train_words


def test_tokenizer_splits_the_papers_suffixes():
    assert neural.tokenize("The DARKER greenish one!") == ["the", "dark", "+er", "green", "+ish", "one"]
    assert neural.detokenize(["the", "dark", "+er", "green", "+ish"]) == "the darker greenish"
    vocab = neural.Vocabulary.build(["green blue", "the darker one", "a green"], fuzzy_min_count=2)
    assert vocab.fuzzy_words == ["green"]               # only frequent words are fuzzy targets
    assert vocab.encode("grene zzzz bleu") == [vocab.index["green"], vocab.index[neural.UNK],
                                              vocab.index[neural.UNK]]


def test_fourier_features_follow_the_paper():
    feats = neural.fourier_features(torch.tensor([[0.0, 100.0, 50.0], [359.0, 100.0, 50.0]]))
    assert feats.shape == (2, neural.FOURIER_DIM)
    assert torch.allclose(feats[0], feats[1], atol=0.1)    # hue is periodic: 0 and 359 are neighbours


# -------------------------------------------------------------------------------------- training
def test_training_on_a_tiny_generated_set_beats_chance(tiny_listener, tiny_speaker):
    listener, _, _ = tiny_listener
    final = listener.history[-1]
    assert final["val_accuracy"] > CHANCE + 0.2, listener.history        # new contexts
    assert final["people_accuracy"] > CHANCE + 0.1, listener.history     # phrasings never seen
    assert listener.history[-1]["loss"] < listener.history[0]["loss"]
    speaker, _, _ = tiny_speaker
    assert speaker.history[-1]["rule_listener_accuracy"] > CHANCE + 0.1, speaker.history
    assert speaker.history[-1]["loss"] < speaker.history[0]["loss"]


def test_neural_l0_understands_the_neural_speaker_above_chance(tiny_listener, tiny_speaker):
    contexts = neural_data.make_contexts(300, 99)
    texts = neural_train.speaker_texts(tiny_speaker[0].model, tiny_speaker[0].vocab, contexts, "cpu")
    examples = [{**c, "text": t} for c, t in zip(contexts, texts)]
    accuracy = neural_train.listener_accuracy(tiny_listener[0].model, tiny_listener[0].vocab, examples, "cpu")
    assert accuracy > CHANCE + 0.1


# ------------------------------------------------------------------------------------ checkpoints
def test_checkpoint_round_trip_gives_identical_outputs_and_a_stable_hash(tiny_listener, tmp_path):
    result, path, (sha, weights) = tiny_listener
    assert sha == file_sha256(path) and len(sha) == 64
    loaded = neural.load_checkpoint(path, "cpu")
    assert loaded.kind == "colors_neural_listener" and loaded.sha256 == sha
    assert loaded.weights_sha256 == weights
    assert loaded.vocab.words == result.vocab.words
    examples = neural_data.make_examples(40, 5)
    ids, lengths = neural.pad_batch([result.vocab.encode(e["text"]) for e in examples], "cpu")
    colors = neural_train.colors_tensor(examples, "cpu")
    with torch.no_grad():
        assert torch.equal(result.model(ids, lengths, colors), loaded.model(ids, lengths, colors))
    again = neural.save_checkpoint(tmp_path / "again.pt", kind=loaded.kind, model=loaded.model,
                                   vocab=loaded.vocab, extra={k: v for k, v in loaded.meta.items()
                                                              if k not in ("config", "vocabulary")})
    assert again[1] == weights                              # same weights and metadata, same hash
    assert neural.load_checkpoint(tmp_path / "again.pt").weights_sha256 == weights
    loaded.model.score[-1].bias.data += 1e-3                # any change in a weight changes it
    changed = neural.save_checkpoint(tmp_path / "changed.pt", kind=loaded.kind, model=loaded.model,
                                     vocab=loaded.vocab)
    assert changed[1] != weights


def test_same_seed_trains_the_same_checkpoint(tmp_path):
    torch.set_num_threads(1)
    args = dict(examples=60, epochs=1, seed=7, hidden=16, embed=8, val_examples=30, progress=False)
    first = neural_train.train("colors_neural_speaker", **args).save(tmp_path / "a.pt")[1]
    second = neural_train.train("colors_neural_speaker", **args).save(tmp_path / "b.pt")[1]
    assert first == second
    third = neural_train.train("colors_neural_speaker", **{**args, "seed": 8}).save(tmp_path / "c.pt")[1]
    assert third != first


def test_load_refuses_the_wrong_kind_and_foreign_files(tiny_listener, tiny_speaker, tmp_path):
    with pytest.raises(ValueError, match="not a colors_neural_speaker"):
        NeuralSpeaker.load(str(tiny_listener[1]), "cpu")
    with pytest.raises(ValueError, match="not a colors_neural_listener"):
        NeuralLiteralListener.load(str(tiny_speaker[1]), "cpu")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(ValueError, match="is not a"):
        NeuralLiteralListener.load(str(foreign), "cpu")
    with pytest.raises(TypeError, match="speaker=PATH"):
        NeuralPragmaticListener.load(str(tiny_listener[1]), "cpu")


def test_the_pragmatic_listener_reads_its_speaker_beside_the_listener_and_checks_its_pin(
        tiny_listener, tiny_speaker, tmp_path):
    """As a models file names it: ``speaker`` by file name beside the listener checkpoint (from
    any working directory), pinned by ``speaker_sha256``."""
    import shutil

    folder = tmp_path / "models" / "colors"
    folder.mkdir(parents=True)
    listener = shutil.copy(tiny_listener[1], folder / "l0.pt")
    shutil.copy(tiny_speaker[1], folder / "s0.pt")
    pin = file_sha256(folder / "s0.pt")
    l2 = NeuralPragmaticListener.load(str(listener), "cpu", speaker="s0.pt", speaker_sha256=pin)
    assert l2.speaker_sha256 == pin
    with pytest.raises(ValueError, match="speaker_sha256 pins"):
        NeuralPragmaticListener.load(str(listener), "cpu", speaker="s0.pt", speaker_sha256="0" * 64)
    with pytest.raises(FileNotFoundError, match="no speaker checkpoint 'absent.pt'"):
        NeuralPragmaticListener.load(str(listener), "cpu", speaker="absent.pt")


# ---------------------------------------------------------------------------------- the contract
def game_views(seed: int, rounds: int):
    """Real views of a match: per round the speaker's view, then the listener's after a chat."""
    config = {"rounds": rounds}
    state = rules.initial_state(content.generate(seed, config), seed, config)
    speaker_views, listener_views, idle = [], [], []
    texts = ["the darker one", "blue", "not the green or the pink", "kind of teal", "brightest", "grey"]
    for r in range(rounds):
        speaker_views.append(rules.view_for(state, "speaker"))
        idle.append(rules.view_for(state, "listener"))            # speaker has not spoken yet
        state, _ = rules.apply(state, "speaker", {"type": "chat", "text": texts[r % len(texts)],
                                                  "at": 1000 * r})
        listener_views.append(rules.view_for(state, "listener"))
        idle.append(rules.view_for(state, "speaker"))             # spoke already: listener's turn
        state, _ = rules.apply(state, "listener", {"type": "click", "position": r % 3, "round": r + 1,
                                                   "at": 1000 * r + 500})
    idle += [rules.view_for(state, "listener"), rules.view_for(state, "speaker")]  # game over
    return speaker_views, listener_views, idle


def count_forward(module: torch.nn.Module) -> list:
    calls = []
    module.register_forward_hook(lambda *_: calls.append(1))
    return calls


@pytest.fixture
def families(tiny_listener, tiny_speaker):
    l0 = NeuralLiteralListener.load(str(tiny_listener[1]), "cpu")
    l2 = NeuralPragmaticListener.load(str(tiny_listener[1]), "cpu", speaker=str(tiny_speaker[1]))
    s0 = NeuralSpeaker.load(str(tiny_speaker[1]), "cpu")
    return l0, l2, s0


def test_act_batch_equals_single_acts_in_one_forward_pass(families):
    l0, l2, s0 = families
    speaker_views, listener_views, idle = game_views(seed=21, rounds=6)
    for family, views in ((l0, listener_views), (l2, listener_views), (s0, speaker_views)):
        mixed = [*views[:3], idle[0], idle[1], *views[3:]]
        singles = [family.act(copy.deepcopy(v)) for v in mixed]
        calls = count_forward(family.module)
        batch = family.act_batch(mixed)
        assert len(calls) == 1                     # one forward call for the whole list
        assert batch == singles
        assert batch[3] is None and batch[4] is None
        for action, view in zip(batch, mixed):
            if action is not None:                 # every action is legal in its round
                assert action["round"] == view["round"]


def test_pragmatic_listener_scores_all_alternatives_in_one_l0_call(families):
    _, l2, _ = families
    _, listener_views, _ = game_views(seed=22, rounds=5)
    inner = count_forward(l2.module.listener)
    actions = l2.act_batch(listener_views)
    assert len(inner) == 1 and all(a["type"] == "click" for a in actions)


def test_not_its_turn_gives_none(families):
    l0, l2, s0 = families
    _, _, idle = game_views(seed=23, rounds=3)
    for family in (l0, l2, s0):
        calls = count_forward(family.module)
        assert family.act_batch(idle) == [None] * len(idle)
        assert calls == []                         # nothing to do, no forward pass
    assert l0.act_batch([]) == []


def test_neural_agents_play_a_whole_game_through_the_rules(families):
    _, l2, s0 = families
    config = {"rounds": 9}
    state = rules.initial_state(content.generate(31, config), 31, config)
    at = 0
    while not rules.is_over(state):
        (role,) = rules.to_act(state)
        agent = s0 if role == "speaker" else l2
        action = agent.act(rules.view_for(state, role))
        at += 700
        state, _ = rules.apply(state, role, {**action, "at": at})   # raises on an illegal move
    assert rules.outcome(state)["played"] == 9


def test_warmup_and_identity(families):
    l0, l2, s0 = families
    for family in families:
        family.warmup()
        assert len(family.checkpoint_sha256) == 64 and family.checkpoint_sha256[:12] in family.version
        assert len(family.weights_sha256) == 64
    assert l2.speaker_sha256 == s0.checkpoint_sha256


# ------------------------------------------------------------------------- committed checkpoints
@pytest.mark.parametrize("kind", ["colors_neural_listener", "colors_neural_speaker"])
def test_committed_checkpoints_are_the_documented_ones_and_play(kind):
    root = ROOT
    path = root / "models" / "colors" / f"{kind}.pt"
    doc = (root / "docs" / "games" / "colors_neural.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith(f"| `{kind}.pt`"))
    loaded = neural.load_checkpoint(path)
    assert f"`{loaded.sha256}`" in row and f"`{loaded.weights_sha256}`" in row
    assert loaded.meta["training"]["seed"] == 0 and path.stat().st_size < 400_000
    family = NeuralSpeaker if kind == "colors_neural_speaker" else NeuralLiteralListener
    agent = family.load(str(path), "cpu")
    speaker_views, listener_views, _ = game_views(seed=41, rounds=6)
    actions = agent.act_batch(speaker_views if kind == "colors_neural_speaker" else listener_views)
    assert all(a is not None for a in actions)
    if kind == "colors_neural_speaker":
        assert all(a["type"] == "chat" and a["text"].strip() for a in actions)
