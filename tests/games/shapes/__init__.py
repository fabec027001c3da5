"""The fifth game of the test suite (tests/fixtures/shapes_game): contract, lobby, worker, export, no platform edit."""
