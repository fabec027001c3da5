"""A REAL OpenAI-compatible server for the tests: ``transformers serve`` (pip ``transformers[serving]``,
the ``llm-test`` extra), serving a tiny chat model this module builds on the machine, offline.

``build_tiny_chat_model()`` trains a byte-level BPE tokenizer with the ``tokenizers`` library on a
small text made here (the games' words and JSON punctuation), gives it a ChatML chat template, and
saves it with a tiny random-weight Llama (hidden size 32, 2 layers; seeded, so every machine builds
the same weights) as the model ``groundtalk/tiny-chat`` in a Hugging Face cache of its own under
``var/test-models/tiny-chat-<hash>/hub``: ``transformers serve`` lists the models of its cache in
``GET /v1/models`` and loads them from there with ``HF_HUB_OFFLINE=1`` (nothing is downloaded). The
hash is of this module's source, so the model is built once per machine and again only when the
builder changes (``force=True`` rebuilds).

``TransformersServe`` starts ``transformers serve groundtalk/tiny-chat`` (the model pinned and loaded
at start-up) on a free port as a child process and stops it: ``with TransformersServe() as server:``
``server.base_url``, ``server.model``.

What this server does (transformers 5.23, checked by tests/agents/llm/test_real_server.py): it takes
``response_format`` and ``stream_options`` but ignores them (it logs "Ignoring unsupported fields"):
a json_schema is not enforced, so the random model's answer is not JSON and an agent's repair and
fallback path runs; a stream carries the usage on its last chunk (the one with ``finish_reason``)
whether or not ``include_usage`` was asked; a text-only model drops ``image_url`` parts (only a
vision-language model reads them), so image parts are checked against the stand-in
(tests/support/openai_standin.py)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "var" / "test-models"
REPO_ID = "groundtalk/tiny-chat"
REVISION = "0" * 40   # the snapshot's name in the cache (a commit hash in a real cache)
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]
WORDS = ("red green blue yellow purple orange brown black white grey pink colour color square circle "
         "triangle cube sphere cylinder small large big tiny left right top bottom middle near far above "
         "below next to the a an one two three is it which what where how many there yes no maybe not "
         "I you we they see think guess pick click choose ask answer question image picture scene sky "
         "tree girl boy dog cat sun cloud table bench grass ball hat glasses kite slide swing owl bear "
         "message target choice index action send place piece size flip done").split()


def builder_hash() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def model_home(base: Path = MODELS_DIR) -> Path:
    """The Hugging Face home (``HF_HOME``) that holds the built model in its ``hub`` cache."""
    return base / f"tiny-chat-{builder_hash()}"


def corpus(lines: int = 3000, seed: int = 0) -> list[str]:
    """The tokenizer's training text: sentences and JSON decisions of the games' words."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(lines):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        if i % 3 == 0:
            out.append('{"message": "%s", "target": %d, "choice": "%s"}'
                       % (words, rng.randint(0, 9), rng.choice(WORDS)))
        else:
            out.append(words.capitalize() + rng.choice(".?!"))
    return out


def dialogs(count: int, seed: int = 1) -> list[str]:
    """Chat-formatted exchanges whose answers are JSON decisions (what the brief training learns)."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(count):
        question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))).capitalize() + "?"
        answer = '{"message": "%s", "target": %d}' % (
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))), rng.randint(0, 9))
        out.append(f"<|im_start|>system\nYou play a game.<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n"
                   f"<|im_start|>assistant\n{answer}<|im_end|>\n")
    return out


def train_briefly(model, tokenizer, steps: int = 150, batch: int = 16) -> None:
    """A few steps of next-token training on ``dialogs``: the model then answers in words and JSON
    punctuation (rarely valid JSON) instead of one repeated token."""
    import torch

    torch.manual_seed(0)
    texts = dialogs(steps * batch // 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for step in range(steps):
        chunk = [texts[(step * batch + i) % len(texts)] for i in range(batch)]
        enc = tokenizer(chunk, return_tensors="pt", padding=True)
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        loss = model(**enc, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()


def build_tiny_chat_model(base: Path = MODELS_DIR, force: bool = False) -> Path:
    """Build the tiny model into its cache (once per builder hash); returns its ``HF_HOME``."""
    home = model_home(base)
    snapshot = home / "hub" / f"models--{REPO_ID.replace('/', '--')}" / "snapshots" / REVISION
    if (snapshot / "config.json").exists() and not force:
        return home
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tmp = home.with_name(home.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp_snapshot = tmp / snapshot.relative_to(home)
    tmp_snapshot.mkdir(parents=True)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus(), trainers.BpeTrainer(
        vocab_size=600, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>",
                                        eos_token="<|im_end|>", pad_token="<|pad|>",
                                        unk_token="<|endoftext|>", model_max_length=8192)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(tmp_snapshot)

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    train_briefly(model, tokenizer)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, max_new_tokens=32, do_sample=False)
    model.save_pretrained(tmp_snapshot)

    refs = tmp_snapshot.parent.parent / "refs"
    refs.mkdir()
    (refs / "main").write_text(REVISION)
    (tmp_snapshot.parent.parent / "blobs").mkdir()
    if home.exists():
        shutil.rmtree(home)
    tmp.rename(home)
    return home


def server_env(home: Path) -> dict:
    env = dict(os.environ)
    env.update(HF_HOME=str(home), HF_HUB_CACHE=str(home / "hub"), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return env


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TransformersServe:
    """``transformers serve`` with the tiny model, as a child process on a free port."""

    def __init__(self, home: Path | None = None, port: int | None = None, log: Path | None = None):
        self.home = home
        self.port = port or free_port()
        self.model = REPO_ID
        self.log = log
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180) -> TransformersServe:
        home = self.home or build_tiny_chat_model()
        exe = Path(sys.executable).with_name("transformers")
        self.log = self.log or home / f"serve-{self.port}.log"
        self._log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [str(exe), "serve", REPO_ID, "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu",
             "--log-level", "warning", "--format", "quiet"],
            cwd=ROOT, env=server_env(home), stdout=self._log_file, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"transformers serve exited with {self.proc and self.proc.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"transformers serve did not answer within {timeout} s: "
                           f"{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> TransformersServe:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    print(build_tiny_chat_model(force="--force" in sys.argv))
