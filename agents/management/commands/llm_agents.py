"""The LLM agents of the models file (``kind = "openai"``, agents/llm/), and whether their models are served.

    python manage.py llm_agents            # each agent: game/role, endpoint, model, options
    python manage.py llm_agents --check    # GET <base_url>/models for each: served / not served / unreachable

``--check`` asks each endpoint (once per endpoint and key) for the models it serves, with the
agent's key and within its ``timeout_s``, and says for each agent whether its ``model`` is among
them; it exits with status 1 when any agent's model is not served or its endpoint cannot be asked
(the reason is printed: the connection's error or the HTTP status and the server's message). The
key is never printed: only the name of its variable.
"""
from __future__ import annotations

import os

import openai
from django.core.management.base import BaseCommand, CommandError

from agents.llm.agent import NO_KEY
from agents.registry import all_agents


class Command(BaseCommand):
    help = "List the LLM agents (kind = openai) of the models file; --check asks each endpoint whether its model is served."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="GET /models at each endpoint")
        parser.add_argument("--agents", default="", help="comma-separated agent names (default: every LLM agent)")

    def handle(self, *args, **opts):
        configs = [s.model for s in all_agents().values() if s.model is not None and s.model.kind == "openai"]
        wanted = [n for n in opts["agents"].split(",") if n]
        if wanted:
            unknown = sorted(set(wanted) - {c.name for c in configs})
            if unknown:
                raise CommandError(f"Not LLM agents of the models file: {', '.join(unknown)}")
            configs = [c for c in configs if c.name in wanted]
        if not configs:
            self.stdout.write("No LLM agent (kind = \"openai\") in the models file.")
            return
        if not opts["check"]:
            for cfg in configs:
                self.stdout.write(self._describe(cfg))
            return
        served: dict[tuple, tuple[set[str] | None, str]] = {}
        failed = 0
        for cfg in configs:
            key = (cfg.base_url, cfg.api_key_env)
            if key not in served:
                served[key] = self._served(cfg)
            models, problem = served[key]
            if models is None:
                failed += 1
                self.stdout.write(f"{cfg.name}: UNREACHABLE {cfg.endpoint}: {problem}")
            elif cfg.model in models:
                self.stdout.write(f"{cfg.name}: served: {cfg.model} at {cfg.endpoint}")
            else:
                failed += 1
                self.stdout.write(f"{cfg.name}: NOT SERVED: {cfg.model} at {cfg.endpoint}; it serves: "
                                  f"{', '.join(sorted(models)) or '(no model)'}")
        if failed:
            raise CommandError(f"{failed} of {len(configs)} LLM agent(s) cannot play now.", returncode=1)

    @staticmethod
    def _describe(cfg) -> str:
        options = [f"stream={'on' if cfg.stream else 'off'}", f"images={'on' if cfg.images else 'off'}",
                   f"timeout_s={cfg.timeout_s:g}", f"fallback={cfg.fallback}",
                   f"max_concurrency={cfg.max_concurrency or 'none'}",
                   f"key={'$' + cfg.api_key_env if cfg.api_key_env else 'none'}"]
        for name in ("temperature", "top_p", "max_tokens", "seed", "price_in", "price_out"):
            if getattr(cfg, name) is not None:
                options.append(f"{name}={getattr(cfg, name):g}")
        if cfg.reply_pacing:
            options.append("reply_pacing=" + ",".join(f"{k}={v:g}" for k, v in cfg.reply_pacing.items()))
        if cfg.prompt:
            options.append(f"prompt={cfg.prompt}")
        return (f"{cfg.name}: {cfg.game_id}/{cfg.role} -> {cfg.model} at {cfg.endpoint} (version {cfg.version}); "
                + " ".join(options))

    @staticmethod
    def _served(cfg) -> tuple[set[str] | None, str]:
        key = os.environ.get(cfg.api_key_env, "") if cfg.api_key_env else NO_KEY
        client = openai.OpenAI(base_url=cfg.base_url, api_key=key or NO_KEY, max_retries=0, timeout=cfg.timeout_s)
        try:
            return {m.id for m in client.models.list()}, ""
        except openai.APIStatusError as exc:
            return None, f"HTTP {exc.status_code}: {str(exc.message)[:300]}"
        except openai.APIError as exc:
            cause = exc.__cause__
            return None, f"{type(exc).__name__}: {exc}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
        except Exception as exc:   # an answer that is not a list of models
            return None, f"the answer is not a list of models ({type(exc).__name__}: {exc})"
        finally:
            client.close()
