"""GuessWhich (``guesswhich_v1``): ask an answerer about a secret CLEVR scene, then find it in a pool.

``rules`` (pure state machine), ``content`` (pools of CLEVR scenes), ``agents`` (ALICE versions and
QBot; ``summarize`` for the simulate command), ``exports`` (``--format guesswhich`` and
``--format visdial``). See ``docs/games/guesswhich.md``.
"""
