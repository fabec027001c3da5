"""The neural ALICE and QBot of GuessWhich (docs/games/guesswhich_neural.md): torch modules (model),
generated dialogs (data), supervised training (train), the ALICE family (agents), the neural
QBot (qbot), the cooperative fine-tune of the two (coop) and the evaluation (eval).

Worker-only: these modules import torch (or serve those that do) and are imported by model
workers, ``manage.py train_agent`` and the evaluation commands, never by the web process
(tests/workers/test_web_no_torch.py). This package imports nothing itself.
"""
