"""Whether an address or host name is this machine's loopback (no Django imports: the settings use it)."""
from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``127.0.0.0/8``, ``::1``, ``localhost`` and ``*.localhost`` (an optional ``:port`` and the
    brackets of ``[::1]`` are ignored); anything else, ``0.0.0.0`` and ``::`` included, is not."""
    name = (host or "").strip().lower()
    if name.startswith("["):                       # [::1] or [::1]:8000
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:                     # localhost:8000, 127.0.0.1:8000
        name = name.split(":", 1)[0]
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
