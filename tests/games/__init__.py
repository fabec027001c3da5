"""Tests of each game package (tests/games/<game>/)."""
