"""Benchmark: signing MSK IAM auth tokens (``python -m bench.msk_token``).

Every Kafka connection with ``KAFKA_AUTH=iam`` signs a token: the intake's producer in INIT (the
bootstrap server, then each partition leader), and again whenever a connection is re-established,
then on a user's request. Two ways side by side, taking turns, in one process with the
credentials in the environment as Lambda sets them: AWS's signer through its default chain
(``generate_auth_token``: a new botocore session per token), and the project's
``coupon_core.adapters.kafka.connection.MskIamTokenProvider`` (the same signer, the chain walked once). Nothing is sent:
a token is a presigned URL. Prints the median per token and the ratio, and the first token of
each (the project's includes its one walk of the chain).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

REGION = "eu-west-1"


def _seconds(sign: Callable[[], object]) -> float:
    started = time.perf_counter()
    sign()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=200, help="tokens per way")
    args = parser.parse_args()
    os.environ.update(
        AWS_ACCESS_KEY_ID="ASIAEXAMPLEKEY", AWS_SECRET_ACCESS_KEY="example-secret", AWS_SESSION_TOKEN="example-token"
    )
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider  # noqa: PLC0415 - after the credentials are set

    from coupon_core.adapters.kafka.connection import MskIamTokenProvider  # noqa: PLC0415

    ways: dict[str, Callable[[], object]] = {
        "the signer's default chain, per token": lambda: MSKAuthTokenProvider.generate_auth_token(REGION),
        "the chain walked once (MskIamTokenProvider)": MskIamTokenProvider(REGION).token,
    }
    first = {name: _seconds(sign) for name, sign in ways.items()}
    runs: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.tokens):
        for name, sign in ways.items():
            runs[name].append(_seconds(sign))
    medians = {name: statistics.median(seconds) for name, seconds in runs.items()}
    baseline = medians["the signer's default chain, per token"]
    print(f"| way ({args.tokens} tokens each, taking turns) | first token ms | median ms per token | vs default |")
    print("|---|---:|---:|---:|")
    for name in ways:
        print(f"| {name} | {first[name] * 1000:.1f} | {medians[name] * 1000:.2f} | {medians[name] / baseline:.2f}x |")


if __name__ == "__main__":
    main()
