"""The neural CoDraw Drawer and Teller (docs/games/codraw_neural.md): the Drawer's torch modules and
both agents' checkpoint format (model), the Teller's torch module (teller_model), their words (vocab), generated data
(data), training (drawer_train, teller_train), agent families (agents) and the paper's Table 1 (eval).

Worker-only: these modules import torch (or serve those that do) and are imported by model
workers, ``manage.py train_agent`` and the evaluation commands, never by the web process
(tests/workers/test_web_no_torch.py). This package imports nothing itself.
"""
