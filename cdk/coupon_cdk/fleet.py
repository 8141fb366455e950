"""What every function of an environment is made with: its code and layers, the common
variables, and the stores it uses (where it runs, the variables that name them); the functions
themselves are in ``coupon_cdk.lambdas``."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from coupon_cdk.code import Layers, function_code
from coupon_cdk.config import EnvironmentConfig, LocalEnvironment
from coupon_cdk.functions import Function, FunctionSpec, Placement


def worker_group(environment: str) -> str:
    """The consumer group of the worker's event source mapping (and of the local bridge)."""
    return f"coupon-worker-{environment}"


@dataclass(frozen=True)
class StoreAccess:
    """How the functions reach the stores of one environment: where they run, and the variables
    that name the cache, the database and the brokers."""

    placement: Placement
    redis: dict[str, str]
    database: dict[str, str]
    kafka: dict[str, str]


@dataclass(frozen=True)
class Shared:
    """What every function of the environment gets: its code and layers, the common variables,
    its log retention."""

    code: lambda_.Code
    layers: Layers
    environment: dict[str, str]
    log_retention: logs.RetentionDays


@dataclass
class Fleet:
    """The functions of one environment, each made by :meth:`add`; ``redis_users`` and
    ``database_users`` are those given each store, which the stack grants."""

    scope: Construct
    stores: StoreAccess
    shared: Shared
    redis_users: list[Function] = field(default_factory=list)
    database_users: list[Function] = field(default_factory=list)

    def add(self, spec: FunctionSpec, environment: dict[str, str], *, redis: bool = False,
            database: bool = False) -> Function:  # fmt: skip
        """A function given the common variables, those of the stores it uses (and only those)
        and its own."""
        stores = (self.stores.redis if redis else {}) | (self.stores.database if database else {})
        fn = Function(
            self.scope, spec.name.title(), spec=spec, environment=self.shared.environment | stores | environment,
            code=self.shared.code, layers=self.shared.layers, placement=self.stores.placement.of(database=database),
            log_retention=self.shared.log_retention,
        )  # fmt: skip
        if redis:
            self.redis_users.append(fn)
        if database:
            self.database_users.append(fn)
        return fn


def shared(scope: Construct, config: EnvironmentConfig, environment: dict[str, str],
           log_retention: logs.RetentionDays) -> Shared:  # fmt: skip
    """The code, layers and common variables of the environment's functions."""
    local = isinstance(config, LocalEnvironment)
    return Shared(function_code(local=local), Layers(scope, "Layers", local=local), environment, log_retention)
