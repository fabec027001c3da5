"""Color contexts: conditions meet their CIEDE2000 thresholds, balanced, seeded, with provenance."""
from __future__ import annotations

import colorsys
from collections import Counter

import colour
import numpy as np
import pytest

from games.colors import content


def lab_independently(hsl) -> np.ndarray:
    """HSL -> sRGB with the standard library, then CIELAB with colour-science (a second path)."""
    h, s, l = hsl
    rgb = colorsys.hls_to_rgb(h / 360.0, l / 100.0, s / 100.0)
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(np.array(rgb)))


def distances(colors) -> tuple[float, float, float]:
    t, d1, d2 = (lab_independently(c) for c in colors)
    de = lambda a, b: float(colour.delta_E(a, b, method="CIE 2000"))  # noqa: E731
    return de(t, d1), de(t, d2), de(d1, d2)


def check_condition(round_: dict, threshold: float, floor: float) -> None:
    t_d1, t_d2, d1_d2 = distances(round_["colors"])
    assert min(t_d1, t_d2, d1_d2) >= floor
    if round_["condition"] == "far":
        assert min(t_d1, t_d2, d1_d2) > threshold
    elif round_["condition"] == "split":
        assert t_d1 < threshold < min(t_d2, d1_d2)
    else:
        assert round_["condition"] == "close"
        assert max(t_d1, t_d2, d1_d2) < threshold


def test_conditions_meet_their_thresholds():
    generated = content.generate(2024, {"rounds": 60})
    for round_ in generated["rounds"]:
        check_condition(round_, 20.0, 5.0)
        recorded = round_["distances"]
        assert recorded["target_distr1"] == pytest.approx(distances(round_["colors"])[0], abs=0.01)


def test_thresholds_come_from_config_and_are_recorded():
    config = {"rounds": 30, "close_threshold": 30.0, "min_distance": 10.0}
    generated = content.generate(5, config)
    for round_ in generated["rounds"]:
        check_condition(round_, 30.0, 10.0)
    provenance = generated["provenance"]
    assert provenance["generator"] == content.GENERATOR and provenance["seed"] == 5
    assert provenance["thresholds"]["close_threshold"] == 30.0
    assert provenance["thresholds"]["min_distance"] == 10.0


@pytest.mark.parametrize("rounds, expected", [(50, [16, 17, 17]), (9, [3, 3, 3]), (4, [1, 1, 2])])
def test_conditions_are_balanced(rounds, expected):
    generated = content.generate(rounds, {"rounds": rounds})
    counts = Counter(r["condition"] for r in generated["rounds"])
    assert sorted(counts[c] for c in content.CONDITIONS) == expected
    assert len(generated["rounds"]) == rounds


def test_condition_order_is_shuffled():
    orders = {tuple(r["condition"] for r in content.generate(seed, {"rounds": 12})["rounds"])
              for seed in range(5)}
    assert len(orders) > 1


def test_colors_and_positions_are_well_formed():
    generated = content.generate(3, {})
    assert len(generated["rounds"]) == 50
    for round_ in generated["rounds"]:
        assert len(round_["colors"]) == 3
        for h, s, l in round_["colors"]:
            assert all(isinstance(v, int) for v in (h, s, l))
            assert 0 <= h <= 359 and 0 <= s <= 100 and l == 50
        assert sorted(round_["positions"]["speaker"]) == [0, 1, 2]
        assert sorted(round_["positions"]["listener"]) == [0, 1, 2]
    listener_target_slots = Counter(r["positions"]["listener"][0] for r in generated["rounds"])
    assert len(listener_target_slots) == 3   # the target is not always in the same place


def test_same_seed_same_content_and_different_seed_different_content():
    assert content.generate(77, {"rounds": 20}) == content.generate(77, {"rounds": 20})
    assert content.generate(77, {"rounds": 20}) != content.generate(78, {"rounds": 20})


def test_lightness_range_is_configurable():
    generated = content.generate(1, {"rounds": 15, "lightness": [30, 70]})
    lightness = {l for r in generated["rounds"] for _, _, l in r["colors"]}
    assert min(lightness) >= 30 and max(lightness) <= 70 and len(lightness) > 1


def test_impossible_settings_are_refused():
    with pytest.raises(ValueError):
        content.generate(1, {"min_distance": 25.0, "close_threshold": 20.0})
    with pytest.raises(ValueError):
        content.generate(1, {"rounds": 0})
