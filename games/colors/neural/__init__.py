"""The neural color agents (docs/games/colors_neural.md): torch modules (model), generated data
(data), training (train), agent families (agents) and evaluation (eval).

Worker-only: these modules import torch (or serve those that do) and are imported by model
workers, ``manage.py train_agent`` and the evaluation commands, never by the web process
(tests/workers/test_web_no_torch.py). This package imports nothing itself.
"""
