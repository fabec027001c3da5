"""The GuessWhich tests' fixtures: small contents of hand-made and generated CLEVR scenes
(tests/clevr/conftest.py, shared with the CLEVR library's tests)."""
from tests.clevr.conftest import build, content4, scene5  # noqa: F401 (fixtures)
