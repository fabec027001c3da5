"""CoDraw (``codraw_v1``): a Teller describes a clip-art park scene, a Drawer rebuilds it.

Modules: ``clipart`` (the 58-piece Abstract Scenes library), ``scenes`` (pieces, the scene string
format, dataset import, a scene generator), ``metric`` (scene similarity), ``content`` (targets and
palettes), ``rules`` (the game), ``exports`` (CoDraw_1_0.json), ``agents`` (baselines).
"""
