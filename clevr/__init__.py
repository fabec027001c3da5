"""CLEVR-style scenes for GroundTalk's GuessWhich and visual-dialog games.

* :mod:`clevr.scenes`: the scene format (CLEVR's own scene JSON plus ``provenance``), a
  seeded generator, the CLEVR importer and the image-folder importer.
* :mod:`clevr.render`: deterministic Pillow/numpy renderer (PNG) of a scene.
* :mod:`clevr.embedding`: a fixed-length scene embedding, GuessWhich-style pools built on
  concentric distance bands around the secret, and the per-round coarse rank.
* :mod:`clevr.dataset`: a CLEVR dataset on disk (scenes file and, when there, its renders),
  read by ``import_content guesswhich|visdial``.

See ``docs/games/clevr.md``.
"""
