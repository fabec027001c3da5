"""The words of the neural CoDraw agents: tokens (numbers like ``1.3`` and ``1/2`` stay one token,
read as values) and the :class:`Vocabulary` both the Drawer (model.py) and the Teller
(teller_model.py) build from their training data, with fuzzy reading of misspelt words."""
from __future__ import annotations

import re

from rapidfuzz import fuzz, process

PAD, UNK, NUM = "<pad>", "<unk>", "<num>"
SPECIALS = (PAD, UNK, NUM)
MAX_TOKENS = 40
FUZZY_CUTOFF = 80
FUZZY_MIN_LEN = 4
_TOKEN = re.compile(r"\d*/\d+|\d+(?:\.\d+)?|[a-z]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words and numbers (``1.3``, ``1/2`` stay one token); at most MAX_TOKENS."""
    return _TOKEN.findall(text.lower())[:MAX_TOKENS]


def number_value(token: str) -> float | None:
    """A number token's value (``1.3`` -> 1.3, ``1/2`` -> 0.5); None for a word."""
    if not token or token[0].isalpha():
        return None
    if "/" in token:
        top, bottom = token.split("/")
        return (float(top or 1) / float(bottom)) if float(bottom) else None
    return float(token)


class Vocabulary:
    """The training data's words (plus PAD, UNK). An unknown word of 4+ letters is read as the
    nearest known word by RapidFuzz ratio (>= 80), so a typo is not simply lost."""

    def __init__(self, words: list[str]):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self._fuzzy_words = [w for w in self.words if w not in SPECIALS and w.isalpha() and len(w) >= FUZZY_MIN_LEN]
        self._cache: dict[str, int] = {}

    @classmethod
    def build(cls, texts, min_count: int = 2) -> "Vocabulary":
        counts: dict[str, int] = {}
        for text in texts:
            for token in tokenize(text):
                if number_value(token) is None:
                    counts[token] = counts.get(token, 0) + 1
        return cls([*SPECIALS, *sorted(w for w, c in counts.items() if c >= min_count)])

    def __len__(self) -> int:
        return len(self.words)

    def lookup(self, token: str) -> int:
        if token in self.index:
            return self.index[token]
        if token not in self._cache:
            found = None
            if token.isalpha() and len(token) >= FUZZY_MIN_LEN and self._fuzzy_words:
                found = process.extractOne(token, self._fuzzy_words, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
            self._cache[token] = self.index[found[0]] if found else self.index[UNK]
        return self._cache[token]

    def encode(self, text: str) -> tuple[list[int], list[float]]:
        """(token ids, values): every number is the token ``<num>`` with its value beside it
        (words have value 0), so that the model reads distances as magnitudes."""
        ids, values = [], []
        for token in tokenize(text):
            value = number_value(token)
            ids.append(self.index[NUM] if value is not None else self.lookup(token))
            values.append(min(value, 10.0) if value is not None else 0.0)
        return (ids, values) if ids else ([self.index[UNK]], [0.0])
