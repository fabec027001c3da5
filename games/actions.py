"""Typed schemas of the actions each game accepts (pydantic v2; pure Python, no Django).

Every game declares, in ``games/<game>/actions.py``, one model per action type its rules accept
(a subclass of :class:`ActionModel`: unknown keys refused, strict types, frozen, a ``type``
literal as the discriminator) and registers them as ``SCHEMA = ActionSchema(GAME_ID, (...))``;
``GameSpec.actions`` (games/registry.py) is that schema. It is the single source for

* validation: ``live.services`` runs :func:`validate_action` on every action, a person's, an
  agent's or the server's own (role ``system``), before the rules see it;
* the JSON Schema of each game (:meth:`ActionSchema.json_schema`; ``manage.py action_schema``
  writes ``docs/schemas/<game_id>.json``, served at ``/schemas/<game_id>.json``);
* the reference ``docs/actions.md`` (:func:`render_markdown`, from the JSON Schemas).

The schema checks structure and types: which keys an action may carry, their JSON types (no
coercion: ``true`` is not 1, ``"3"`` is not 3, ``1.0`` is not a whole number), fixed bounds
(text length, number ranges) and the characters text may hold. Whose turn it is, whether a round
is still on, whether a piece is in the palette and every other check that needs the match's state
stay in the rules. The rules keep their own checks too, so replaying a logged match (which goes to
the rules directly) refuses the same moves.

Text (:func:`Text`): counted and checked for blankness after trimming surrounding whitespace, as
the rules do (``games.base.text_field``); no C0 control character other than tab and newline, and
no lone UTF-16 surrogate (PostgreSQL stores neither in ``jsonb``). The text is not altered.

The normalised action (what the rules apply and the log keeps) is
``model.model_dump(mode="json", exclude_unset=True)``: exactly the keys that were sent, with plain
JSON values; defaults are not filled in, because the rules read an absent key as "unchanged" or
"the default" (a CoDraw ``update`` changes only what it names). So the logged action is what the
client sent plus the server's ``"at"``, which is stamped after validation: a client may not send
``"at"`` itself.

Error codes (:class:`games.base.IllegalAction`; the first problem found is reported):

* ``bad_action``: not a JSON object, or no text ``"type"``; ``unknown_action``: a type the game
  does not have (the same codes and messages as the rules' ``games.base.action_type``);
* ``bad_field``: an unknown key, a missing one, a wrong type, a forbidden character; the message
  names the action and field, e.g. ``chat: unknown key 'fallback'`` or
  ``place.depth: must be a whole number, not 1.0``;
* ``empty_message``, ``message_too_long``: blank or over-long text, with the rules' messages;
* ``out_of_range``: a number outside its bounds;
* a model may name its own codes per field (``ERROR_CODES``: every error of that field;
  ``RANGE_CODES``: range errors only), so that a game keeps the codes its rules documented
  (CoDraw's ``bad_depth``, ``unknown_clipart``...), and keys that forge a server-computed result
  (``FORGED``: GuessWhich's ``bonus``, ``score``...) are refused as ``forged_field``.
"""
from __future__ import annotations

import json
import math
import re
import typing
from typing import Annotated, Any, ClassVar, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, StrictStr, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticCustomError

from games.base import SYSTEM, IllegalAction, action_type
from games.registry import get_game

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# C0 control characters except tab (0x09) and newline (0x0a); lone surrogates (Python strings can
# hold them, UTF-8 cannot).
_FORBIDDEN_CHARS = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff]")
# The same rule for JSON Schema (ECMA-262 regular expressions; surrogates cannot be said there
# without also refusing proper pairs, so only the server checks that part).
TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000b-\\u001f]*$"

_RANGE_ERRORS = {"out_of_range", "greater_than_equal", "less_than_equal", "greater_than", "less_than"}
# Custom errors whose message is already a whole sentence for people (the rules' wording).
_SENTENCE_CODES = {"empty_message", "message_too_long"}


# ----------------------------------------------------------------------------------- field types
def _check_chars(value: str) -> str:
    bad = _FORBIDDEN_CHARS.search(value)
    if bad:
        char = ord(bad.group())
        if 0xD800 <= char <= 0xDFFF:
            raise PydanticCustomError("bad_field", "contains a lone surrogate (U+{code}), which is not a character",
                                      {"code": f"{char:04X}"})
        raise PydanticCustomError("bad_field", "contains a control character (U+{code}); text may hold tab and "
                                               "newline but no other control characters", {"code": f"{char:04X}"})
    return value


def Text(max_len: int, *, what: str = "message", required: bool = True) -> Any:
    """Text of at most ``max_len`` characters once surrounding whitespace is trimmed; not blank
    when ``required``; tab and newline are its only control characters. ``what`` names it in
    the messages for people ("The question is empty.")."""

    def check(value: str) -> str:
        _check_chars(value)
        length = len(value.strip())
        if required and length == 0:
            raise PydanticCustomError("empty_message", "The {what} is empty.", {"what": what})
        if length > max_len:
            raise PydanticCustomError("message_too_long",
                                      "The {what} is {length} characters long; the limit is {limit}.",
                                      {"what": what, "length": length, "limit": max_len})
        return value

    extra = {"x-maxTrimmedLength": max_len, "pattern": TEXT_PATTERN}
    if required:
        extra["minLength"] = 1
    blank = "not blank; " if required else "may be empty; "
    description = (f"Text, at most {max_len} characters once surrounding whitespace is trimmed; "
                   f"{blank}no control characters but tab and newline.")
    return Annotated[StrictStr, AfterValidator(check), Field(description=description, json_schema_extra=extra)]


def Id(max_len: int = 200) -> Any:
    """An identifier: 1..``max_len`` characters, no control characters."""
    return Annotated[StrictStr, Field(min_length=1, max_length=max_len, json_schema_extra={"pattern": TEXT_PATTERN}),
                     AfterValidator(_check_chars)]


def Int(lo: int | None = None, hi: int | None = None) -> Any:
    """A whole number (JSON integer; ``true`` and ``1.0`` are refused) within ``lo..hi``
    (``out_of_range`` unless the model names a code for the field)."""

    def check(value: int) -> int:
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            if lo is not None and hi is not None:
                raise PydanticCustomError("out_of_range", "must be between {lo} and {hi}, not {value}",
                                          {"lo": lo, "hi": hi, "value": value})
            if lo is not None:
                raise PydanticCustomError("out_of_range", "must be at least {lo}, not {value}", {"lo": lo, "value": value})
            raise PydanticCustomError("out_of_range", "must be at most {hi}, not {value}", {"hi": hi, "value": value})
        return value

    bounds = {key: bound for key, bound in (("minimum", lo), ("maximum", hi)) if bound is not None}
    return Annotated[int, AfterValidator(check), Field(json_schema_extra=bounds or None)]


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PydanticCustomError("number_type", "must be a number")
    if not math.isfinite(value):
        raise PydanticCustomError("finite_number", "must be a finite number")
    return int(value) if isinstance(value, int) else float(value)


# A JSON number, whole or not, kept as it came (1 stays 1, 1.5 stays 1.5); booleans, NaN and
# infinities refused.
Number = Annotated[Union[int, float], PlainValidator(_number, json_schema_input_type=float)]


def Absent() -> Any:
    """The default of an optional key that may not be ``null``: the key is simply left out (the
    rules read its absence as "unchanged" or "the default"); the JSON Schema shows no default."""
    return Field(default=None)


# -------------------------------------------------------------------------------------- the models
def _model_schema_extra(schema: dict, cls: type[ActionModel]) -> None:
    if not hasattr(cls, "ROLES"):
        return
    schema["x-roles"] = list(cls.ROLES)
    properties = schema.get("properties", {})
    for prop in properties.values():
        if "default" in prop and prop["default"] is None and "anyOf" not in prop:
            del prop["default"]     # Absent(): the key may be left out, not sent as null
    for name, code in cls.ERROR_CODES.items():
        properties[name]["x-error-code"] = code
    for name, code in cls.RANGE_CODES.items():
        properties[name]["x-range-error-code"] = code
    if cls.FORGED:
        schema["x-forged-keys"] = list(cls.FORGED)


class StrictModel(BaseModel):
    """Unknown keys refused, no type coercion, immutable once validated."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, json_schema_extra=_model_schema_extra)


class ActionModel(StrictModel):
    """One action type. Subclasses declare ``type: Literal["..."]`` and their fields."""

    ROLES: ClassVar[tuple[str, ...]] = ()               # who may send it (the rules enforce it)
    ERROR_CODES: ClassVar[dict[str, str]] = {}          # field -> code for every error of it
    RANGE_CODES: ClassVar[dict[str, str]] = {}          # field -> code for its range errors
    FORGED: ClassVar[tuple[str, ...]] = ()             # keys refused as ``forged_field``

    @classmethod
    def action_type(cls) -> str:
        return typing.get_args(cls.model_fields["type"].annotation)[0]


class _NoFieldTitles(GenerateJsonSchema):
    """JSON Schema without the ``title`` pydantic derives from every field name."""

    def field_title_should_be_set(self, schema) -> bool:
        return False


class ActionSchema:
    """A game's actions: a discriminated union of its :class:`ActionModel` subclasses."""

    def __init__(self, game_id: str, models: tuple[type[ActionModel], ...], description: str = ""):
        self.game_id = game_id
        self.models = {model.action_type(): model for model in models}
        if len(self.models) != len(models):
            raise ValueError(f"{game_id}: two action models share a type")
        self.types = tuple(self.models)
        self.description = description
        self.union = Annotated[Union[tuple(models)], Field(discriminator="type")]
        self.adapter = TypeAdapter(self.union)

    def validate(self, action: Any) -> dict:
        """The normalised action (see the module docstring), or :class:`IllegalAction`."""
        kind = action_type(action, self.types)         # bad_action / unknown_action, as the rules say
        try:
            model = self.adapter.validate_python(action)
        except ValidationError as exc:
            raise illegal(self.models[kind], exc) from None
        return model.model_dump(mode="json", exclude_unset=True)

    def json_schema(self) -> dict:
        body = self.adapter.json_schema(schema_generator=_NoFieldTitles)
        roles = sorted({role for model in self.models.values() for role in model.ROLES})
        description = (
            f"An action of {self.game_id}: the \"action\" of a seat's "
            "{\"type\": \"action\", \"id\", \"action\"} message (docs/protocol.md). The server adds "
            "\"at\" (its clock, ms) after validation; a client does not send it. "
            f"Roles: {', '.join(roles)} ({SYSTEM!r} is the server itself). " + self.description).strip()
        return {"$schema": JSON_SCHEMA_DIALECT, "title": f"{self.game_id} actions",
                "description": description, "x-game-id": self.game_id, **body}


# ------------------------------------------------------------------------------------- the errors
def _shown(value: Any) -> str:
    """A value as a message names it, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, int) or math.isfinite(value) else str(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 20 else value[:20] + "...", ensure_ascii=True)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _problem(error: dict) -> str:
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "missing":
        return "missing; it is required"
    if kind == "int_type":
        return f"must be a whole number, not {_shown(value)}"
    if kind == "string_type":
        return f"must be text, not {_shown(value)}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be an object, not {_shown(value)}"
    if kind in ("number_type", "finite_number"):
        return f"{error['msg']}, not {_shown(value)}"
    if kind == "out_of_range":
        return error["msg"]
    if kind == "greater_than_equal":
        return f"must be at least {ctx['ge']}, not {_shown(value)}"
    if kind == "less_than_equal":
        return f"must be at most {ctx['le']}, not {_shown(value)}"
    if kind == "string_too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else error["msg"][0].lower() + error["msg"][1:]
    if kind == "string_too_long":
        return f"must be at most {ctx['max_length']} characters long"
    message = error["msg"]
    return message[:1].lower() + message[1:]


def _explain(model: type[ActionModel], error: dict) -> tuple[str, str]:
    """``(code, message)`` for one pydantic error of ``model`` (loc: tag, field, ...)."""
    loc = tuple(str(part) for part in error["loc"])
    field = loc[1] if len(loc) > 1 else ""
    kind = error["type"]
    if kind == "extra_forbidden":
        if len(loc) == 2 and field in model.FORGED:
            return "forged_field", f"{field!r} is computed by the server and cannot be sent."
        return "bad_field", f"{'.'.join(loc[:-1])}: unknown key {loc[-1]!r}"
    if kind in _SENTENCE_CODES:
        return kind, error["msg"]
    if kind in _RANGE_ERRORS and field in model.RANGE_CODES:
        code = model.RANGE_CODES[field]
    elif field in model.ERROR_CODES:
        code = model.ERROR_CODES[field]
    elif kind in _RANGE_ERRORS:
        code = "out_of_range"
    else:
        code = "bad_field"
    return code, f"{'.'.join(loc)}: {_problem(error)}"


def illegal(model: type[ActionModel], exc: ValidationError) -> IllegalAction:
    """The first problem of a failed validation as an :class:`IllegalAction` (forged keys first,
    as the rules check them first); how many more there were is only counted."""
    errors = exc.errors(include_url=False)
    explained = sorted(((_explain(model, error), error) for error in errors),
                       key=lambda item: item[0][0] != "forged_field")
    (code, message), first = explained[0]
    told = 1
    if first["type"] == "extra_forbidden" and code == "bad_field":
        # every unknown key of the same object in one message: "chat: unknown keys 'a', 'b'"
        where = first["loc"][:-1]
        keys = [repr(str(error["loc"][-1])) for (kind, _), error in explained
                if kind == "bad_field" and error["type"] == "extra_forbidden" and error["loc"][:-1] == where]
        if len(keys) > 1:
            message = f"{'.'.join(map(str, where))}: unknown keys {', '.join(keys)}"
            told = len(keys)
    more = len(explained) - told
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return IllegalAction(code, message)


# ------------------------------------------------------------------------------------ entry points
def validate_action(game_id: str, action: Any) -> dict:
    """``action`` checked against ``game_id``'s schema: the normalised plain dict, or
    :class:`IllegalAction` (nothing changed). :class:`games.registry.UnknownGame` for a game
    that does not exist."""
    return get_game(game_id).actions.validate(action)


def action_json_schema(game_id: str) -> dict:
    """``game_id``'s actions as a JSON Schema (draft 2020-12) document."""
    return get_game(game_id).actions.json_schema()


def schema_json(game_id: str) -> str:
    """The text of ``docs/schemas/<game_id>.json``."""
    return json.dumps(action_json_schema(game_id), indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------- the docs
def _type_of(prop: dict, defs: dict) -> str:
    if "$ref" in prop:
        return "object (below)"
    if "anyOf" in prop:
        return " or ".join(_type_of(part, defs) for part in prop["anyOf"])
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    return {"string": "text", "integer": "whole number", "number": "number", "null": "null",
            "object": "object", "boolean": "true/false"}.get(prop.get("type"), str(prop.get("type", "any")))


def _limits(prop: dict) -> str:
    parts = []
    for part in prop.get("anyOf", [prop]):
        if "minimum" in part and "maximum" in part:
            parts.append(f"{part['minimum']}..{part['maximum']}")
        elif "minimum" in part:
            parts.append(f">= {part['minimum']}")
        elif "maximum" in part:
            parts.append(f"<= {part['maximum']}")
        if "x-maxTrimmedLength" in part:
            blank = "not blank, " if part.get("minLength") else ""
            parts.append(f"{blank}<= {part['x-maxTrimmedLength']} characters trimmed")
        elif "maxLength" in part:
            parts.append(f"{part.get('minLength', 0)}..{part['maxLength']} characters")
    return "; ".join(parts)


def _codes(prop: dict) -> str:
    """The codes a field's errors get besides ``bad_field``."""
    if "x-error-code" in prop:
        return f"`{prop['x-error-code']}`"
    codes = []
    parts = prop.get("anyOf", [prop])
    if any("x-maxTrimmedLength" in part and part.get("minLength") for part in parts):
        codes.append("`empty_message`")
    if any("x-maxTrimmedLength" in part for part in parts):
        codes.append("`message_too_long`")
    if any("minimum" in part or "maximum" in part for part in parts):
        codes.append(f"`{prop.get('x-range-error-code', 'out_of_range')}` (range)")
    return ", ".join(codes)


def _field_rows(schema: dict, defs: dict, prefix: str = "") -> list[str]:
    rows = []
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        if name == "type" and not prefix:
            continue
        need = "yes" if name in required else (f"no (default `{json.dumps(prop['default'])}`)"
                                                if "default" in prop else "no")
        rows.append(f"| `{prefix}{name}` | {_type_of(prop, defs)} | {need} | {_limits(prop)} | {_codes(prop)} |")
        ref = prop.get("$ref")
        if ref:
            rows += _field_rows(defs[ref.rsplit("/", 1)[-1]], defs, prefix=f"{prefix}{name}.")
    return rows


def render_markdown(schemas: list[dict]) -> str:
    """``docs/actions.md`` from the games' JSON Schemas (``ActionSchema.json_schema``)."""
    out = [
        "# Actions",
        "",
        "<!-- Generated by `python manage.py action_schema` from games/<game>/actions.py "
        "(games/actions.py renders it); do not edit by hand. -->",
        "",
        "What each game accepts as the `action` of a seat's `{\"type\": \"action\", \"id\", \"action\"}` "
        "message (docs/protocol.md). The JSON Schema of each game is in `docs/schemas/<game_id>.json` "
        "and served at `/schemas/<game_id>.json`.",
        "",
        "Every action is a JSON object with a `type`. Keys not listed are refused (`bad_field`), and so "
        "are wrong JSON types: no coercion (`true` is not 1, `\"3\"` is not 3, `1.0` is not a whole "
        "number). Text is counted after trimming surrounding whitespace, must hold no control character "
        "but tab and newline, and is logged as sent. The server adds `at` (its clock) after validation; "
        "do not send it. Which role may send an action, and when, is the rules' check (`wrong_role`, "
        "turn and round codes: docs/games/); the role column says who may.",
        "",
        "Codes: `bad_action` (not an object, no `type`), `unknown_action`, `bad_field` (unknown key, "
        "missing key, wrong type, forbidden character), `empty_message`, `message_too_long`, "
        "`out_of_range`; the code column names those a field's errors get instead of `bad_field`.",
    ]
    for schema in schemas:
        defs = schema.get("$defs", {})
        out += ["", f"## `{schema['x-game-id']}`", ""]
        for ref in schema["oneOf"]:
            model = defs[ref["$ref"].rsplit("/", 1)[-1]]
            kind = model["properties"]["type"]["const"]
            out += [f"### `{kind}`", "", f"Roles: {', '.join(f'`{r}`' for r in model.get('x-roles', []))}.", ""]
            if model.get("description"):
                out += [" ".join(model["description"].split()), ""]
            rows = _field_rows(model, defs)
            if rows:
                out += ["| field | type | required | limits | code |", "| --- | --- | --- | --- | --- |", *rows, ""]
            else:
                out += ["No fields besides `type`.", ""]
            if model.get("x-forged-keys"):
                out += [f"Refused as `forged_field` (computed by the server): "
                        f"{', '.join(f'`{k}`' for k in model['x-forged-keys'])}.", ""]
        while out[-1] == "":
            out.pop()
    return "\n".join(out) + "\n"
