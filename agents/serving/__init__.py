"""Model agents: agents declared by configuration (``models/models.toml``), served by batched model
workers (torch families) or by an HTTP bridge (``agents/bridge.py``).

* :mod:`agents.model_config` parses and checks the configuration file and turns each entry into
  an :class:`agents.base.AgentSpec` for the registry. It never imports torch nor a model family's
  module: the web process reads it.
* :mod:`agents.serving.family` loads a family (the class named in the configuration) in a worker.
* :mod:`agents.serving.worker` is the model worker's loop: warm-up, then turns collected per
  window and run as one ``act_batch`` call, each answer submitted through the match service.

The contract between the platform and a model family is in docs/agents.md ("Model agents").
"""
