"""GroundTalk games: one package per game (rules, content, agents, exports) plus the platform that runs them."""
