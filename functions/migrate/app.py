"""Migration function: upgrades the database to the newest schema, run at deploy time (CDK trigger).

Invoked once per deployment that changes it; any event is accepted and ignored. Fails loudly
(and with it the deployment) if the upgrade fails.
"""

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.migrate import upgrade
from coupon_core.observability import logger
from coupon_core.settings.backend import DatabaseSettings


@logger.inject_lambda_context(clear_state=True)
def handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    engine = make_engine(DatabaseSettings.from_env(os.environ), pool_size=1)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    logger.info("database at the newest schema")
    return {"status": "MIGRATED"}
