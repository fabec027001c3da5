"""Create colors matches with two human seats in the benchmark database (run by bench/relay.py).

    DATABASE_URL=... REDIS_URL=... python bench/make_matches.py --count 500 --rounds 50 --out FILE

Writes ``[{"match_id", "speaker", "listener"}, ...]`` (seat tokens) as JSON to ``--out``. Every
match goes through ``live.services.match_create`` (the service a lobby uses); the colour contexts
are generated once and shared, so creating hundreds of matches takes seconds, not minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("make_matches: DATABASE_URL must point at the benchmark PostgreSQL database")

    import django

    django.setup()
    from games.colors.content import generate
    from live.models import Seat
    from live.services import SeatSpec, match_create

    started = time.monotonic()
    content = generate(12345, {"rounds": args.rounds})
    seats = {role: SeatSpec(Seat.Kind.HUMAN) for role in ("speaker", "listener")}
    out = []
    for i in range(args.count):
        match = match_create(game_id="colors_v1", seats=seats, seed=1000 + i, config={"rounds": args.rounds},
                             content=content)
        tokens = dict(Seat.objects.filter(match=match).values_list("role", "token"))
        out.append({"match_id": str(match.id), "speaker": tokens["speaker"], "listener": tokens["listener"]})
    Path(args.out).write_text(json.dumps(out))
    print(f"make_matches: {args.count} matches in {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
