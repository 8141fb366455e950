"""A smoke test of a deployed environment, through its API with the repository's client.

    python -m local.tools.smoke --url https://ID.execute-api.REGION.amazonaws.com/dev --region REGION
    python -m local.tools.smoke --url .../prod --region REGION --id-token "$ID_TOKEN"

Creates a coupon of two copies open now (an admin route, SigV4-signed), requests one for a user
(signed in dev, with the Cognito ID token in prod, whose ``custom:user_id`` is the user), and
polls the issue's status until the worker has persisted it. Exits non-zero on any other answer.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta

from coupon_client.api_client import ApiClient
from coupon_client.aws_auth import id_token, sigv4
from coupon_client.retry import Kind

PERSIST_WAIT_S = 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the stack's ApiUrl output")
    parser.add_argument("--region", required=True)
    parser.add_argument("--id-token", help="a Cognito ID token (prod); without it, public routes are signed too")
    parser.add_argument("--user-id", type=int, default=random.randint(1, 2**31), help="dev only: the user")
    args = parser.parse_args()
    admin = ApiClient(args.url, sign=sigv4(args.region))
    public = ApiClient(args.url, sign=id_token(args.id_token) if args.id_token else sigv4(args.region))

    now = datetime.now(UTC)
    created = admin.request("POST", "/coupons", {
        "name": "smoke test", "totalQuantity": 2,
        "issueStartsAt": now.isoformat(), "issueEndsAt": (now + timedelta(hours=1)).isoformat(),
    })  # fmt: skip
    _expect(created.status_code == 201, "create coupon", created.body)
    coupon_id = created.body["couponId"]
    issued = public.request_coupon(coupon_id, args.user_id)
    _expect(issued.kind is Kind.SUCCESS, "request a coupon", issued.reply.body)
    user_id = issued.reply.body["userId"]
    deadline = time.monotonic() + PERSIST_WAIT_S
    while (status := public.request("GET", f"/coupons/{coupon_id}/issues/{user_id}")).status != "ISSUED":
        _expect(time.monotonic() < deadline and status.status == "PENDING", "wait for the worker", status.body)
        time.sleep(2)
    print(f"coupon {coupon_id}: user {user_id} ISSUED in {issued.seconds:.2f} s (request) - the pipeline works")


def _expect(ok: bool, step: str, body: object) -> None:
    if not ok:
        sys.exit(f"smoke test failed at '{step}': {body}")


if __name__ == "__main__":
    main()
