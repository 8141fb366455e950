"""Benchmark: what reading a function's settings costs a cold start
(``python -m bench.settings_read``).

Each row runs in fresh interpreters, ``--runs`` times round-robin, with the intake's other
imports (pydantic, the issue request's model) already loaded, as they are by then in the intake:
importing the intake's settings, then reading them from an environment once (the first read builds
the models' validators). ``--before PATH`` adds a checkout of another commit's settings beside
this one's. The last row is what pydantic-settings alone would add on top of pydantic: the import
of ``pydantic_settings``, the library the settings do not use for that reason.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {"REDIS_URL": "rediss://cache.example:6379", "KAFKA_BOOTSTRAP_SERVERS": "b-1.example:9098",
       "KAFKA_TOPIC": "coupon.issue.v1", "POWERTOOLS_SERVICE_NAME": "coupon-intake",
       "POWERTOOLS_METRICS_NAMESPACE": "Coupons"}  # fmt: skip
PROBE = """
import json, sys, time
sys.path[:0] = {paths!r}
import pydantic, functions.http_api.request
started = time.perf_counter()
{work}
print(json.dumps({{"ms": (time.perf_counter() - started) * 1000}}))
"""
READ = "from coupon_core.settings.intake import IntakeSettings\nIntakeSettings.from_env({env!r})"


def probe(paths: list[str], work: str) -> float:
    code = PROBE.format(paths=paths, work=work)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout.splitlines()[-1])["ms"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="a checkout of another commit, run beside this one")
    args = parser.parse_args()
    layers = ["layers/coupon_core/python", "layers/lua_redis/python"]
    rows = {"this checkout: import and first read": ([str(ROOT / p) for p in layers], READ.format(env=ENV))}
    if args.before is not None:
        rows["--before: import and first read"] = ([str(args.before / p) for p in layers], READ.format(env=ENV))
    rows["import pydantic_settings (not used)"] = ([], "import pydantic_settings")
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.runs):
        for name, (paths, work) in rows.items():
            times[name].append(probe(paths, work))
    print(f"{args.runs} fresh interpreters each, round-robin; pydantic and the issue request's model loaded first")
    for name, measured in times.items():
        median, p90 = statistics.median(measured), statistics.quantiles(measured, n=10)[-1]
        print(f"{name:45} median {median:6.1f} ms  p90 {p90:6.1f} ms")


if __name__ == "__main__":
    main()
