"""Writes CoDraw_handmade.json next to it: 40 hand-written CoDraw dialogs in the released
``CoDraw_1_0.json`` shape (``{"count", "stat", "data": {"train_00000": {"image_id", "abs_t",
"socketId", "dialog": [{"seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d"}]}}}``), for
tests/games/codraw/neural/test_corpus.py and test_commands.py (``train_agent codraw_neural_drawer
--data``). Keys: 30 ``train_``, 10 ``val_``.

The Teller messages are written by hand in the way people wrote them in CoDraw (words for the clip
art, sizes, facing, people's poses and faces, worn and held things, several pieces in one message,
moves, messages that ask for nothing); each round lists what the Drawer then drew (added or moved),
from which abs_b / abs_d are built; the target (abs_t) is the final canvas. Nothing here comes from
the generator (games/codraw/neural/data.py) or from the validation set of games/codraw.

    .venv/bin/python tests/games/codraw/neural/data/handmade.py
"""
from __future__ import annotations

import json
from pathlib import Path

from games.codraw import clipart as ca
from games.codraw.scenes import Piece, Scene, format_scene

BY_NAME = {c.name.lower(): c.idx for c in ca.CLIPARTS}
POSE = {p: i for i, p in enumerate(ca.POSES)}
FACE = {e: i for i, e in enumerate(ca.EXPRESSIONS)}


def P(name, x, y, depth=1, flip=0, pose=None, face=None):
    sub = ca.subtype_of(POSE[pose], FACE[face]) if pose else 0
    return {"idx": BY_NAME[name], "x": x, "y": y, "depth": depth, "flip": flip, "subtype": sub}


# (message, Drawer's reply, pieces the Drawer then drew or moved)
D = [
    [("big sun in the top left corner", "ok", [P("sun", 60, 50, 0)]),
     ("a boy standing in the middle, happy, facing right", "done", [P("mike", 250, 250, 1, 0, "arms out", "smile")]),
     ("looks great", "thanks", [])],
    [("a big tree on the left", "got it", [P("oak tree", 90, 180, 0)]),
     ("girl sitting under the tree facing right, she looks sad", "ok", [P("jenny", 110, 290, 1, 0, "sitting", "sad")]),
     ("not yet", "ok", []),
     ("small cloud top right", "done", [P("cloud", 420, 50, 2)])],
    [("there is a dog on the right facing left", "ok", [P("dog", 400, 320, 1, 1)]),
     ("a small cat next to the dog", "done", [P("cat", 330, 330, 2, 1)]),
     ("move the dog a bit more to the right", "moved", [P("dog", 440, 320, 1, 1)])],
    [("large pine tree on the far right, cut off at the top", "ok", [P("pine tree", 450, 150, 0)]),
     ("tent in the middle facing left, medium", "done", [P("tent", 250, 260, 1, 1)]),
     ("campfire in front of the tent", "ok", [P("campfire", 240, 330, 1)]),
     ("thats it", "ok", [])],
    [("hi", "hello", []),
     ("a sun on the top right and a cloud to the left of it", "done", [P("sun", 440, 50, 1), P("cloud", 330, 60, 1)]),
     ("girl in the middle waving with a big smile", "ok", [P("jenny", 250, 260, 1, 0, "waving", "wide smile")])],
    [("boy kicking a soccer ball on the left, angry face", "ok",
      [P("mike", 120, 260, 1, 0, "kicking", "angry"), P("soccer ball", 190, 330, 2)]),
     ("he has a baseball cap on", "ok", [P("cap", 120, 175, 1)]),
     ("ok", "anything else?", [])],
    [("airplane in the sky on the left facing right", "ok", [P("airplane", 110, 70, 1)]),
     ("under it a big apple tree", "done", [P("apple tree", 120, 200, 0)]),
     ("a small duck on the grass right side", "ok", [P("duck", 400, 330, 2)])],
    [("lightning cloud top middle", "ok", [P("lightning cloud", 250, 50, 1)]),
     ("a girl running to the right looking scared", "done", [P("jenny", 200, 270, 1, 0, "running", "scared")]),
     ("she wears sunglasses", "ok", [P("sunglasses", 205, 195, 1)]),
     ("perfect", ":)", [])],
    [("slide on the right facing left", "ok", [P("slide", 390, 250, 1, 1)]),
     ("boy with his arms up at the top of the slide", "done", [P("mike", 420, 190, 1, 1, "arms up", "wide smile")]),
     ("a ball near the bottom of the slide", "which ball?", []),
     ("beach ball", "done", [P("beach ball", 330, 340, 2)])],
    [("big oak tree in the center", "ok", [P("oak tree", 250, 170, 0)]),
     ("owl in the tree hole", "done", [P("owl", 260, 150, 2)]),
     ("small snake on the grass left", "ok", [P("snake", 80, 340, 2)])],
    [("table in the middle, bottom", "ok", [P("table", 250, 320, 1)]),
     ("pizza and a hamburger on the table", "done", [P("pizza", 220, 290, 2), P("hamburger", 280, 290, 2)]),
     ("drink on the right of the table", "ok", [P("drink", 330, 290, 2)])],
    [("rain cloud top left", "ok", [P("rain cloud", 90, 60, 1)]),
     ("a boy sitting cross legged on the right facing left, sad", "done",
      [P("mike", 380, 280, 1, 1, "legs crossed", "sad")]),
     ("make him bigger", "ok", [P("mike", 380, 270, 0, 1, "legs crossed", "sad")])],
    [("grill on the left", "ok", [P("grill", 100, 280, 1)]),
     ("hot dog on the grill", "done", [P("hot dog", 100, 240, 2)]),
     ("girl next to the grill holding a ketchup bottle, smiling", "ok",
      [P("jenny", 190, 270, 1, 0, "arms out", "smile"), P("ketchup", 225, 265, 2)])],
    [("sandbox in the bottom right", "ok", [P("sandbox", 380, 340, 1)]),
     ("pail and shovel in the sandbox", "done", [P("pail", 360, 330, 2), P("shovel", 410, 330, 2)]),
     ("great job", "thanks", [])],
    [("a hot air balloon top right", "ok", [P("hot air balloon", 420, 80, 1)]),
     ("kite on the left in the sky", "done", [P("kite", 100, 90, 1)]),
     ("a boy flying the kite, running, happy", "ok", [P("mike", 140, 270, 1, 0, "running", "smile")])],
    [("swing set in the middle", "ok", [P("swing", 250, 230, 0)]),
     ("girl sitting on the swing, laughing", "done", [P("jenny", 250, 250, 1, 0, "sitting", "wide smile")]),
     ("hold on", "ok", []),
     ("she has a crown on her head", "done", [P("crown", 250, 175, 1)])],
    [("bear on the left facing right, big", "ok", [P("bear", 110, 280, 0)]),
     ("bee flying above the bear", "done", [P("bee", 130, 150, 2)]),
     ("move the bear closer to the middle", "ok", [P("bear", 180, 280, 0)])],
    [("helicopter top left", "ok", [P("helicopter", 90, 60, 1)]),
     ("rocket top right pointing up", "done", [P("rocket", 430, 70, 1)]),
     ("a small sun in the middle of the sky", "ok", [P("sun", 250, 60, 2)])],
    [("boy on the left and girl on the right, facing each other", "ok",
      [P("mike", 120, 260, 1, 0, "arms out", "smile"), P("jenny", 380, 260, 1, 1, "arms out", "smile")]),
     ("frisbee in between them", "done", [P("frisbee", 250, 200, 2)]),
     ("cool", "what next?", [])],
    [("apple tree on the right", "ok", [P("apple tree", 400, 180, 1)]),
     ("a girl with a witch hat in front of the tree, arms up, scared", "done",
      [P("jenny", 380, 270, 1, 0, "arms up", "scared"), P("witch hat", 380, 185, 1)]),
     ("the tree is a little too high", "moved", [P("apple tree", 400, 200, 1)])],
    [("pine tree left", "ok", [P("pine tree", 80, 170, 1)]),
     ("another cloud, small, top center", "done", [P("cloud", 250, 40, 2)]),
     ("a dog sitting in the middle facing left", "ok", [P("dog", 250, 320, 1, 1)]),
     ("that's all", "bye", [])],
    [("big boy on the right waving, facing left, mad", "ok", [P("mike", 400, 250, 0, 1, "waving", "angry")]),
     ("he has a pirate hat", "done", [P("pirate hat", 400, 140, 0, 1)]),
     ("baseball bat in his hand", "ok", [P("baseball bat", 350, 250, 0, 1)])],
    [("tennis racket and a tennis ball on the left side on the grass", "ok",
      [P("tennis racket", 90, 320, 1), P("tennis ball", 140, 340, 2)]),
     ("girl on the right kicking, happy", "done", [P("jenny", 380, 260, 1, 1, "kicking", "smile")])],
    [("the sun is top left corner, cut off", "ok", [P("sun", 30, 30, 0)]),
     ("airplane on the right flying left", "done", [P("airplane", 400, 80, 1, 1)]),
     ("is that done?", "yes", [])],
    [("small basketball in the center on the ground", "ok", [P("basketball", 250, 330, 2)]),
     ("boy with arms up behind the ball, surprised", "done", [P("mike", 250, 250, 1, 0, "arms up", "scared")]),
     ("he wears glasses", "ok", [P("glasses", 250, 185, 1)])],
    [("a football on the left", "ok", [P("football", 100, 330, 2)]),
     ("a girl standing on the right, angry, facing left", "done", [P("jenny", 390, 260, 1, 1, "arms out", "angry")]),
     ("she has a viking helmet on", "ok", [P("viking helmet", 390, 180, 1, 1)])],
    [("campfire in the middle", "ok", [P("campfire", 250, 320, 1)]),
     ("boy sitting on the left of the fire facing right", "done", [P("mike", 170, 300, 1, 0, "sitting", "smile")]),
     ("girl sitting on the right of the fire facing left", "ok", [P("jenny", 330, 300, 1, 1, "sitting", "smile")])],
    [("mustard and ketchup on the left side", "ok", [P("mustard", 80, 320, 2), P("ketchup", 120, 320, 2)]),
     ("a pie next to them", "done", [P("pie", 170, 330, 2)]),
     ("nice", "thanks", [])],
    [("balloons in the boy's hand, boy on the left facing right", "ok",
      [P("mike", 130, 260, 1, 0, "waving", "wide smile"), P("balloons", 170, 170, 1)]),
     ("he has a propeller hat", "done", [P("rainbow hat", 130, 175, 1)])],
    [("storm cloud top right", "ok", [P("lightning cloud", 420, 60, 1)]),
     ("owl on the left, small", "done", [P("owl", 80, 300, 2)]),
     ("the owl should be bigger", "ok", [P("owl", 80, 290, 1)])],
    # ---------------------------------------------------------------- validation dialogs
    [("sun top right", "ok", [P("sun", 440, 50, 1)]),
     ("a boy running in the middle, happy", "done", [P("mike", 250, 260, 1, 0, "running", "smile")]),
     ("looks good", "thanks", [])],
    [("big tree on the right side", "ok", [P("oak tree", 410, 180, 0)]),
     ("a dog on the left facing right", "done", [P("dog", 100, 320, 1)]),
     ("a cloud in the middle of the sky", "ok", [P("cloud", 250, 60, 1)])],
    [("girl on the left, sad, sitting", "ok", [P("jenny", 120, 290, 1, 0, "sitting", "sad")]),
     ("she has sunglasses", "done", [P("sunglasses", 120, 220, 1)]),
     ("not yet", "ok", [])],
    [("airplane top left", "ok", [P("airplane", 100, 60, 1)]),
     ("tent on the right", "done", [P("tent", 390, 260, 1, 1)]),
     ("campfire next to the tent", "ok", [P("campfire", 300, 320, 1)])],
    [("a cat and a dog in the middle", "ok", [P("cat", 220, 320, 2), P("dog", 290, 320, 1)]),
     ("apple tree on the left", "done", [P("apple tree", 90, 190, 1)]),
     ("great", ":)", [])],
    [("boy on the right kicking a soccer ball", "ok",
      [P("mike", 380, 260, 1, 1, "kicking", "smile"), P("soccer ball", 320, 330, 2)]),
     ("he has a cap", "done", [P("cap", 380, 175, 1, 1)])],
    [("pine tree on the left", "ok", [P("pine tree", 90, 170, 1)]),
     ("sun in the top middle", "done", [P("sun", 250, 50, 1)]),
     ("ok", "ok", [])],
    [("slide in the middle", "ok", [P("slide", 250, 250, 1)]),
     ("girl with her arms up on the slide, laughing", "done", [P("jenny", 270, 200, 1, 0, "arms up", "wide smile")]),
     ("a duck on the right", "ok", [P("duck", 420, 330, 2)])],
    [("table on the left", "ok", [P("table", 120, 310, 1)]),
     ("hamburger on the table", "done", [P("hamburger", 120, 280, 2)]),
     ("thanks", "np", [])],
    [("rain cloud on the right", "ok", [P("rain cloud", 400, 60, 1)]),
     ("a bear in the middle facing left", "done", [P("bear", 250, 290, 1, 1)]),
     ("move the bear to the left a bit", "ok", [P("bear", 200, 290, 1, 1)])],
]
N_TRAIN = 30


def scene(pieces: dict[int, dict]) -> str:
    return format_scene(Scene(tuple(Piece.from_dict(p) for p in pieces.values())))


def document() -> dict:
    data, stat = {}, {}
    for n, rounds in enumerate(D):
        key = f"train_{n:05d}" if n < N_TRAIN else f"val_{n - N_TRAIN:05d}"
        canvas: dict[int, dict] = {}
        entries = []
        for k, (msg_t, msg_d, drawn) in enumerate(rounds):
            before = scene(canvas)
            for piece in drawn:
                canvas[piece["idx"]] = piece
            entries.append({"seq_t": k, "seq_d": k, "msg_t": msg_t, "msg_d": msg_d, "abs_t": "",
                            "abs_b": before, "abs_d": scene(canvas)})
        target = scene(canvas)
        for entry in entries:
            entry["abs_t"] = target
        socket = f"/#handmade{n:03d}"
        data[key] = {"image_id": 1000 + n, "abs_t": target, "socketId": socket, "dialog": entries}
        stat[socket] = {"start": 0, "end": 0, "duration": 0, "round": len(entries)}
    return {"count": len(data), "stat": stat, "data": data}


if __name__ == "__main__":
    out = Path(__file__).with_name("CoDraw_handmade.json")
    out.write_text(json.dumps(document(), indent=1) + "\n")
    print(f"{out}: {len(D)} dialogs, {sum(len(r) for r in D)} rounds")
