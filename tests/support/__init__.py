"""What the tests share and is no test: builders (factories, play, crowd_helpers), protocol-level
clients (stall_client), the platforms' recording servers (mturk_server, prolific_server,
platform_ids), the scripted OpenAI-compatible stand-in (openai_standin), staff accounts (staff_users) and the leak audit (leak_audit)."""
