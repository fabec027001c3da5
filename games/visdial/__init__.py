"""Visual-dialog chat (``visdial_v1``): the VisDial two-person collection protocol on CLEVR scenes.

``rules`` (pure state machine), ``content`` (one CLEVR scene and its caption), ``agents`` (ALICE
as answerer, QBot as questioner), ``exports`` (``--format visdial``, VisDial v1.0 JSON). See
``docs/games/guesswhich.md``.
"""
