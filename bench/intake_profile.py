"""Where a warm intake request's time goes: ``python -m bench.intake_profile [--requests N]``.

cProfile around N requests of POST /coupon-issues, in one process, against embedded servers (or
those named by REDIS_URL, KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL), on a warm coupon, shaped as
one of bench/intake.py's loads (``--shape "sale mix"``, or one answer: ``--shape SOLD_OUT``;
SUCCESS-heavy by default): prints the functions with the most cumulative time. Profiling inflates
pure-Python work against waits, so read it for shares, not for absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
from contextlib import ExitStack

from bench.intake import ANSWERS, SHAPES, call, create_coupon, intake_servers, printed_to


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3_000)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", choices=["cumulative", "tottime", "ncalls"], default="cumulative")
    parser.add_argument("--shape", choices=[*SHAPES, *ANSWERS], default="SUCCESS-heavy")
    args = parser.parse_args()
    with ExitStack() as stack:
        intake_servers(stack, "bench-profile-")
        profile = cProfile.Profile()
        with printed_to(io.StringIO()):  # the handler's metrics (EMF) and logs
            shape = {**SHAPES, **ANSWERS}[args.shape]
            coupon_id = create_coupon(total=shape.copies(args.requests) + 1)  # the warm-up takes one
            users = shape.users(args.requests)
            if shape.name == "DUPLICATE":
                for user in users:
                    call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
            profile.enable()
            for user in users:
                call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
            profile.disable()
        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
