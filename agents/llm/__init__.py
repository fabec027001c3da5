"""LLM and VLM agents behind OpenAI-compatible endpoints (vLLM, TGI, Ollama, a hosted API).

An ``[[agent]]`` of the models file with ``kind = "openai"`` (agents/model_config.py) plays a
role whose game has an LLM adapter (``games/<game>/llm.py``, :class:`games.llm.LlmRole`): what the
model is told and what its answer means belong to the game; the endpoint belongs to this package:

``agent.py``    :class:`LlmAgent`: the request, the call (the ``openai`` library, streamed or not),
                retries, the repair request, the pacing and the record of every call
``request.py``  the chat request from a role's adapter and the seat's view; images as data URLs
                in the request sent, as their sha256 in the request recorded
``typing_frames.py``  the partner's view of a reply being written: the partial ``stream_field`` text
                of a partial JSON answer, paced and throttled into ``typing`` frames
``slots.py``    ``max_concurrency``: calls in flight to one model at one endpoint, counted in Redis
                across every worker (a process-local count without Redis)
``record.py``   :class:`agents.models.AgentCall`, one row per call, and its cost
``connections.py``  the PostgreSQL connection of a thread whose turn waits on the endpoint, given
                back (apart from agent.py: agents/tasks.py uses it without importing ``openai``)
"""
