"""Color contexts for the color reference game (``colors_v1``).

Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context: A Pragmatic Neural Model for Grounded
Language Understanding", TACL 5; the game as described in Newman, Mirchandani & Gong,
"Developing a Pragmatic Framework for Evaluating Color Captioning Systems" (seeds/003).

Every round shows three colors: index 0 is the target, 1 and 2 are the distractors ("distr1",
"distr2"). Each round belongs to one of three conditions, judged by CIEDE2000 distance between the
colors' CIELAB coordinates (sRGB, D65) against ``close_threshold``:

* ``far``:   all three pairs farther apart than the threshold;
* ``split``: the target within the threshold of distr1 only; distr2 far from both;
* ``close``: all three pairs within the threshold;

and in every condition every pair is at least ``min_distance`` apart, so the colors stay
distinguishable. The defaults (20 and 5, hue uniform 0-359, saturation uniform, lightness 50)
are the ones in the original game's code (hawkrobe/reference_games, experiments/colorReference:
``checkItem`` with ``t = 20``, ``f = 5``; ``randomColor`` with L fixed at 50); see
docs/games/colors.md.

Conditions are balanced (their counts differ by at most one) and shuffled with the seed; colors are
drawn by vectorised rejection sampling; each player gets a separate random order of the three
positions. ``positions[role][i]`` is the 0-based slot where that role sees color ``i``.
"""
from __future__ import annotations

import csv
import functools
import warnings

import numpy as np

# ----------------------------------------------------------------------------------------- constants
GENERATOR = "colors_v1.ciede2000_rejection"
CONDITIONS = ("far", "split", "close")
STATUSES = ("target", "distr1", "distr2")
DEFAULTS = {
    "rounds": 50,
    "close_threshold": 20.0,   # CIEDE2000; "close" pairs are below it, "far" pairs above it
    "min_distance": 5.0,       # CIEDE2000; every pair at least this far apart
    "hue": [0, 359],           # inclusive integer ranges of the HSL sampling box
    "saturation": [0, 100],
    "lightness": [50, 50],
}
BATCH = 4096                   # candidate triples drawn per rejection-sampling step
MAX_BATCHES = 200              # give up (ValueError) rather than loop forever on impossible settings
PAIRS = ((0, 1), (0, 2), (1, 2))  # target-distr1, target-distr2, distr1-distr2
PAIR_NAMES = ("target_distr1", "target_distr2", "distr1_distr2")


# ------------------------------------------------------------------------------ color science helpers
@functools.cache
def colour_science():
    """The colour-science package, imported on first use, not at this module's import. Measured
    reason (docs/testing.md, "Where the time goes"): ``import colour`` loads its plotting package,
    hence matplotlib.pyplot and scipy.interpolate, about 1.5 s of CPU, and this module is imported
    by every Django process (the game registry, the batch builder), most of which never compute a
    colour: each ``manage.py`` command, a server that hosts no colour match, a model worker of
    another game. A process that plays colour rounds pays it once, at its first colour computation
    (:func:`warm_up`, called by the agent worker at start-up, pays it before the first turn)."""
    import colour

    return colour


def warm_up() -> None:
    """Import colour-science now (the game's ``warm_up`` hook, games/spec.py)."""
    colour_science()


def hsl_to_lab(hsl) -> np.ndarray:
    """CIELAB (D65) of HSL colors given as [h 0-360, s 0-100, l 0-100] (any leading shape)."""
    hsl = np.asarray(hsl, dtype=float) / np.array([360.0, 100.0, 100.0])
    colour = colour_science()
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(colour.HSL_to_RGB(hsl)))


def hex_to_lab(hex_codes) -> np.ndarray:
    """CIELAB (D65) of sRGB hex codes such as ``"#acc2d9"``."""
    colour = colour_science()
    rgb = np.array([colour.notation.HEX_to_RGB(code) for code in hex_codes], dtype=float)
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(rgb))


def delta_e(lab_a, lab_b) -> np.ndarray:
    """CIEDE2000 distance, broadcast over leading axes."""
    with warnings.catch_warnings():  # colour warns about domain-range scale on some array shapes
        warnings.simplefilter("ignore")
        return np.asarray(colour_science().delta_E(lab_a, lab_b, method="CIE 2000"), dtype=float)


def pair_distances(colors_hsl) -> np.ndarray:
    """The three pairwise CIEDE2000 distances (``PAIRS`` order) of one or many color triples."""
    lab = hsl_to_lab(colors_hsl)
    return np.stack([delta_e(lab[..., i, :], lab[..., j, :]) for i, j in PAIRS], axis=-1)


def condition_mask(distances: np.ndarray, condition: str, *, threshold: float,
                   min_distance: float) -> np.ndarray:
    """Which triples (rows of ``distances``, in ``PAIRS`` order) satisfy ``condition``."""
    t_d1, t_d2, d1_d2 = distances[..., 0], distances[..., 1], distances[..., 2]
    distinct = distances.min(axis=-1) >= min_distance
    if condition == "far":
        return distinct & (t_d1 > threshold) & (t_d2 > threshold) & (d1_d2 > threshold)
    if condition == "split":
        return distinct & (t_d1 < threshold) & (t_d2 > threshold) & (d1_d2 > threshold)
    if condition == "close":
        return distinct & (t_d1 < threshold) & (t_d2 < threshold) & (d1_d2 < threshold)
    raise ValueError(f"Unknown condition {condition!r}; expected one of {CONDITIONS}.")


# ---------------------------------------------------------------------------------------- generation
def settings(config: dict | None) -> dict:
    """The generator's settings: ``DEFAULTS`` overridden by the known keys of ``config``."""
    config = config or {}
    merged = {key: config.get(key, default) for key, default in DEFAULTS.items()}
    merged["rounds"] = int(merged["rounds"])
    merged["close_threshold"] = float(merged["close_threshold"])
    merged["min_distance"] = float(merged["min_distance"])
    for key in ("hue", "saturation", "lightness"):
        value = merged[key]
        lo, hi = (value, value) if isinstance(value, (int, float)) else value
        merged[key] = [int(lo), int(hi)]
    if merged["rounds"] < 1:
        raise ValueError("A game needs at least one round.")
    if not 0 <= merged["min_distance"] < merged["close_threshold"]:
        raise ValueError("Need 0 <= min_distance < close_threshold.")
    return merged


def balanced_conditions(rounds: int, rng: np.random.Generator) -> list[str]:
    """``rounds`` condition labels, counts differing by at most one, in a seeded random order."""
    counts = {name: rounds // len(CONDITIONS) for name in CONDITIONS}
    for name in rng.permutation(CONDITIONS)[: rounds % len(CONDITIONS)]:
        counts[str(name)] += 1
    labels = [name for name in CONDITIONS for _ in range(counts[name])]
    return [labels[i] for i in rng.permutation(rounds)]


def sample_triples(condition: str, count: int, rng: np.random.Generator, params: dict) -> np.ndarray:
    """``count`` integer HSL triples (shape count x 3 x 3) satisfying ``condition``."""
    found: list[np.ndarray] = []
    have = 0
    for _ in range(MAX_BATCHES):
        if have >= count:
            break
        candidates = np.stack(
            [rng.integers(lo, hi + 1, size=(BATCH, 3))
             for lo, hi in (params["hue"], params["saturation"], params["lightness"])],
            axis=-1,
        )
        keep = condition_mask(pair_distances(candidates), condition,
                              threshold=params["close_threshold"],
                              min_distance=params["min_distance"])
        found.append(candidates[keep])
        have += int(keep.sum())
    if have < count:
        raise ValueError(f"Could not sample {count} {condition!r} contexts with {params}.")
    return np.concatenate(found)[:count]


def generate(seed: int, config: dict | None = None) -> dict:
    """A game's worth of color contexts, the same every time for the same seed and config."""
    params = settings(config)
    rng = np.random.default_rng(seed)
    conditions = balanced_conditions(params["rounds"], rng)
    pools = {name: iter(sample_triples(name, conditions.count(name), rng, params))
             for name in CONDITIONS if name in conditions}
    rounds = []
    for condition in conditions:
        colors = next(pools[condition])
        distances = pair_distances(colors)
        rounds.append({
            "condition": condition,
            "colors": colors.tolist(),
            "positions": {role: rng.permutation(3).tolist() for role in ("speaker", "listener")},
            "distances": {name: round(float(d), 2) for name, d in zip(PAIR_NAMES, distances)},
        })
    return {
        "provenance": {
            "generator": GENERATOR,
            "seed": seed,
            "thresholds": {"close_threshold": params["close_threshold"],
                           "min_distance": params["min_distance"], "metric": "CIEDE2000",
                           "color_space": "HSL -> sRGB -> CIELAB (D65)"},
            "sampling": {key: params[key] for key in ("hue", "saturation", "lightness")},
            "library": f"colour-science {colour_science().__version__}",
        },
        "rounds": rounds,
    }


# ------------------------------------------------------------------------------------------ import
IMPORT_SOURCE = "colors_in_context.csv"
# The original game's condition names (its click files), as the release's R code renamed them.
_CONDITION_NAMES = {"close": "close", "split": "split", "far": "far",
                    "closer": "close", "further": "split", "equal": "far"}
_IMPORT_COLUMNS = ("gameid", "roundNum", "condition",
                   *(f"{p}{f}" for p in ("click", "alt1", "alt2")
                     for f in ("Status", "ColH", "ColS", "ColL", "LocS", "LocL")))


def _number(value: str, *, where: str, lo: float, hi: float) -> float | int:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} is not a number") from None
    if not lo <= x <= hi:
        raise ValueError(f"{where}: {x:g} is outside {lo:g}-{hi:g}")
    return int(x) if x.is_integer() else x


def round_from_row(row: dict, where: str) -> dict:
    """One context round (target, distr1, distr2) from a row of the released CSV."""
    by_status: dict[str, dict] = {}
    for prefix in ("click", "alt1", "alt2"):
        status = row[f"{prefix}Status"].strip()
        if status not in STATUSES or status in by_status:
            raise ValueError(f"{where}: the three {', '.join(STATUSES)} statuses are needed, got {status!r}")
        by_status[status] = {
            "hsl": [_number(row[f"{prefix}Col{c}"], where=f"{where} {prefix}Col{c}", lo=0, hi=hi)
                    for c, hi in (("H", 360), ("S", 100), ("L", 100))],
            "S": int(_number(row[f"{prefix}LocS"], where=f"{where} {prefix}LocS", lo=1, hi=3)) - 1,
            "L": int(_number(row[f"{prefix}LocL"], where=f"{where} {prefix}LocL", lo=1, hi=3)) - 1,
        }
    colors = [by_status[s]["hsl"] for s in STATUSES]
    positions = {"speaker": [by_status[s]["S"] for s in STATUSES],
                 "listener": [by_status[s]["L"] for s in STATUSES]}
    for role, slots in positions.items():
        if sorted(slots) != [0, 1, 2]:
            raise ValueError(f"{where}: the {role}'s locations are not 1, 2 and 3: {[x + 1 for x in slots]}")
    condition = _CONDITION_NAMES.get(row["condition"].strip())
    if condition is None:
        raise ValueError(f"{where}: unknown condition {row['condition']!r}")
    recorded = [row.get(k, "") for k in ("targetD1Diff", "targetD2Diff", "D1D2Diff")]
    if all(v not in ("", "NA", None) for v in recorded):
        distances = {name: round(float(v), 2) for name, v in zip(PAIR_NAMES, recorded)}
    else:
        distances = {name: round(float(d), 2) for name, d in zip(PAIR_NAMES, pair_distances(colors))}
    return {"condition": condition, "colors": colors, "positions": positions, "distances": distances}


def import_file(path: str) -> list[dict]:
    """The contexts of each game in a Colors in Context CSV (``filteredCorpus.csv``, or any file
    with its click columns), as content items: one per ``gameid``, its rounds in ``roundNum``
    order (one row per round is read: the release repeats a round's columns on each message).
    Raises ValueError, naming the line, on a file that is not in that shape."""
    games: dict[str, dict[int, dict]] = {}
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in _IMPORT_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"not a Colors in Context CSV: no column {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            gameid = row["gameid"].strip()
            number = int(_number(row["roundNum"], where=f"line {line} roundNum", lo=1, hi=10_000))
            rounds = games.setdefault(gameid, {})
            if number not in rounds:
                rounds[number] = round_from_row(row, f"line {line}")
    return [{"rounds": [rounds[n] for n in sorted(rounds)],
             "provenance": {"source": IMPORT_SOURCE, "file": path, "key": gameid, "gameid": gameid,
                            "rounds": sorted(rounds), "thresholds": {"metric": "CIEDE2000"}}}
            for gameid, rounds in games.items()]
