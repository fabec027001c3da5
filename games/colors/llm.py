"""How a language model plays the color reference game (``colors_v1``): the game's half of an LLM
agent (:mod:`games.llm`; docs/games/colors.md, "LLM agents").

Both seats see the round's three colours in their own order (``rules.colors_for``); the request
names them by letter in that order (A, B, C), each with its hex code and HSL values, and the
speaker's marks the target (the speaker's own view). The last ``HISTORY_ROUNDS`` ended rounds come
before the current one, as the seat saw them (``view["history"]``: its own order, the target and
the pick), so the model can learn its partner's words.

* speaker: decides ``{"message": str}``, sent as ``{"type": "chat", "text", "round"}``; the agent
  is asked while the speaker has not yet described this round's target (``rules.to_act``).
* listener: decides ``{"color": "A" | "B" | "C"}``, sent as ``{"type": "click", "position",
  "round"}``. It does not chat: one decision is one action, a chat does not take the listener's
  turn (``rules.TURN_ACTIONS``), and the speaker is not asked to answer it.

``images``: the three colours as the seat sees them, as swatches lettered A, B, C (the speaker's
target framed).
"""
from __future__ import annotations

import colorsys
import re

from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from games import llm

VERSION = "colors-llm/1"
LETTERS = ("A", "B", "C")
HISTORY_ROUNDS = 5        # ended rounds shown before the current one
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")   # what a chat line may not hold (tab and newline may stay)


# ------------------------------------------------------------------------------------------ colours
def hex_code(hsl) -> str:
    """``#rrggbb`` of an HSL colour ``[h 0-360, s 0-100, l 0-100]``, as the page's CSS ``hsl()``
    draws it."""
    h, s, lightness = hsl
    red, green, blue = colorsys.hls_to_rgb((h % 360) / 360.0, lightness / 100.0, s / 100.0)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (red, green, blue))


def describe(hsl) -> str:
    h, s, lightness = hsl
    return f"{hex_code(hsl)}, hsl({h}, {s}%, {lightness}%)"


def colours_text(colours: list, target: int | None = None) -> str:
    """The three colours, lettered in the seat's order; ``target``: the target's position."""
    lines = [f"{LETTERS[i]}: {describe(hsl)}" + ("  <- the target" if i == target else "")
             for i, hsl in enumerate(colours)]
    return "\n".join(lines)


def _current(view: dict) -> tuple[list, int | None]:
    """The current round's colours (HSL lists, the seat's order) and the target's position (the
    speaker's view only)."""
    colours = [c["hsl"] for c in view["colors"]]
    target = next((i for i, c in enumerate(view["colors"]) if c.get("target")), None)
    return colours, target


# ------------------------------------------------------------------------------------------ turns
def _partner_name(role: str) -> str:
    return "Listener" if role == "speaker" else "Speaker"


def _round_lines(view: dict) -> list[tuple[bool, str]]:
    """(mine, text) lines: the last ended rounds, then the current round so far."""
    role = view["role"]
    partner = _partner_name(role)
    lines: list[tuple[bool, str]] = []
    for seen in view["history"][-HISTORY_ROUNDS:]:
        target = seen["target_position"] if role == "speaker" else None
        lines.append((False, f"Round {seen['round']} of {view['rounds']}. The colours:\n"
                             f"{colours_text(seen['colors'], target)}"))
        lines += [_message_line(m, role, partner) for m in seen["messages"]]
        picked, right = LETTERS[seen["clicked_position"]], LETTERS[seen["target_position"]]
        who = "The listener" if role == "speaker" else "You"
        verdict = "correct" if seen["correct"] else f"wrong; the target was {right}"
        lines.append((False, f"{who} picked {picked}: {verdict}."))
    colours, target = _current(view)
    score = view["score"]
    lines.append((False, f"Round {view['round']} of {view['rounds']} (score so far: {score['correct']} correct "
                         f"of {score['played']}). The colours:\n{colours_text(colours, target)}"))
    lines += [_message_line(m, role, partner) for m in view["messages"]]
    return lines


def _message_line(message: dict, role: str, partner: str) -> tuple[bool, str]:
    mine = message["role"] == role
    return mine, message["text"] if mine else f"{partner}: {message['text']}"


def speaker_turns(view: dict) -> list[dict]:
    target = LETTERS[_current(view)[1]]
    lines = _round_lines(view)
    lines.append((False, f"Write your message to the listener describing the target, {target} "
                         f"(at most {view['max_message_len']} characters)."))
    return llm.dialog_turns(lines)


def listener_turns(view: dict) -> list[dict]:
    lines = _round_lines(view)
    lines.append((False, "Which colour does the speaker mean? Answer with its letter."))
    return llm.dialog_turns(lines)


# ------------------------------------------------------------------------------------------ schemas
def speaker_schema(view: dict) -> dict:
    return {"type": "object", "additionalProperties": False, "required": ["message"],
            "properties": {"message": {"type": "string", "description":
                                       f"Your message to the listener describing the target, at most "
                                       f"{view['max_message_len']} characters."}}}


def listener_schema(view: dict) -> dict:
    return {"type": "object", "additionalProperties": False, "required": ["color"],
            "properties": {"color": {"type": "string", "enum": list(LETTERS[:len(view["colors"])]),
                                     "description": "The letter of the colour you pick."}}}


# ------------------------------------------------------------------------------------------ actions
def speaker_action(decision: dict, view: dict) -> dict:
    text = decision.get("message")
    if not isinstance(text, str):
        raise llm.DecisionError('Your answer needs "message": your message to the listener, as a string.')
    text = CONTROL.sub(" ", text).strip()
    if not text:
        raise llm.DecisionError("Your message is empty. Describe the target colour in a few words.")
    limit = view["max_message_len"]
    if len(text) > limit:
        raise llm.DecisionError(f"Your message has {len(text)} characters; the limit is {limit}. "
                                "Describe the target in fewer words.")
    return {"type": "chat", "text": text, "round": view["round"]}


def listener_action(decision: dict, view: dict) -> dict:
    choice = decision.get("color")
    letters = LETTERS[:len(view["colors"])]
    if not isinstance(choice, str) or choice.strip().upper() not in letters:
        raise llm.DecisionError(f'Your answer needs "color": one of {", ".join(letters)} '
                                f"(the letter of the colour you pick), not {choice!r}.")
    if not view.get("can_click"):
        raise llm.DecisionError("The speaker has not described the target yet; wait for the message.")
    return {"type": "click", "position": letters.index(choice.strip().upper()), "round": view["round"]}


# ------------------------------------------------------------------------------------------ images
SWATCH, GAP, LABEL = 120, 24, 34


def swatches(view: dict) -> list[llm.Image]:
    """The round's three colours as the seat sees them, lettered; the speaker's target framed."""
    colours, target = _current(view)
    if not colours:
        return []
    width = len(colours) * SWATCH + (len(colours) + 1) * GAP
    picture = PILImage.new("RGB", (width, SWATCH + 2 * GAP + LABEL), "white")
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=22)
    for i, hsl in enumerate(colours):
        x0, y0 = GAP + i * (SWATCH + GAP), GAP
        if i == target:
            draw.rectangle((x0 - 8, y0 - 8, x0 + SWATCH + 7, y0 + SWATCH + 7), fill="black")
        draw.rectangle((x0, y0, x0 + SWATCH - 1, y0 + SWATCH - 1), fill=hex_code(hsl))
        label = LETTERS[i] + (" (target)" if i == target else "")
        draw.text((x0 + SWATCH / 2, y0 + SWATCH + 12), label, fill="black", font=font, anchor="mt")
    caption = f"Round {view['round']}: the three colours as you see them, {', '.join(LETTERS[:len(colours)])} " \
              "from left to right" + ("; the target is framed in black." if target is not None else ".")
    return [llm.Image(caption, llm.png_bytes(picture))]


# ------------------------------------------------------------------------------------------ roles
def variables(view: dict) -> dict:
    return {"rounds": str(view["rounds"]), "max_message_len": str(view["max_message_len"])}


ROLES = {
    "speaker": llm.role(__file__, template="prompts/speaker.txt", version=VERSION, variables=variables,
                        turns=speaker_turns, schema=speaker_schema, to_action=speaker_action,
                        images=swatches, stream_field="message"),
    "listener": llm.role(__file__, template="prompts/listener.txt", version=VERSION, variables=variables,
                         turns=listener_turns, schema=listener_schema, to_action=listener_action,
                         images=swatches, stream_field=None),
}
