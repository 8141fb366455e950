"""The managed services of an AWS environment (the VPC, the cache, the brokers, the database),
what each function is granted of them, and what the alarms watch."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack
from aws_cdk import aws_logs as logs

from coupon_cdk.config import MSK_IAM_CONNECTIONS, AwsEnvironment, iam_connection_limit
from coupon_cdk.fleet import Fleet, StoreAccess, worker_group
from coupon_cdk.functions import Placement
from coupon_cdk.lambdas import Functions
from coupon_cdk.monitoring import DataStores
from coupon_cdk.network import Network
from coupon_cdk.stores import Cache, Database, Kafka


@dataclass(frozen=True)
class AwsParts:
    """The managed services of an AWS environment."""

    network: Network
    cache: Cache
    kafka: Kafka
    database: Database

    @classmethod
    def build(cls, stack: Stack, config: AwsEnvironment, retention: logs.RetentionDays) -> AwsParts:
        name = f"coupons-{config.name}"
        network = Network(
            stack,
            "Network",
            max_azs=config.availability_zones,
            endpoint_azs=config.endpoint_azs,
            log_retention=retention,
        )
        return cls(
            network=network,
            cache=Cache(stack, "Cache", config=config.cache, network=network, name=name),
            kafka=Kafka(stack, "Kafka", config=config.kafka, network=network, name=name, brokers=config.brokers),
            database=Database(stack, "Database", config=config.database, network=network, name=name),
        )

    def access(self) -> StoreAccess:
        """The functions in the VPC, reaching each store with credentials."""
        network = self.network
        return StoreAccess(
            placement=Placement(network.vpc, network.subnets, network.functions, network.functions_without_database),
            redis=self.cache.environment,
            database={"DB_SECRET_ARN": self.database.secret.secret_arn, "DB_HOST": self.database.host},
            kafka={"KAFKA_BOOTSTRAP_SERVERS": self.kafka.bootstrap_servers, "KAFKA_AUTH": "iam"},
        )

    def grant(self, fleet: Fleet, functions: Functions, *, environment: str) -> None:
        """Each function reads the database secret if it uses the database, connects to the cache
        if it uses Redis, and gets what its Kafka requests need (each function's module says)."""
        for fn in fleet.database_users:
            self.database.secret.grant_read(fn.role)
        for fn in fleet.redis_users:
            self.cache.grant_connect(fn.role)
        functions.grant_kafka(self.kafka, group=self.kafka.group_arn_prefix + worker_group(environment))

    def stores(self, config: AwsEnvironment) -> DataStores:
        return DataStores(
            database_instance=self.database.instance.instance_identifier,
            proxy=self.database.proxy_name,
            cache_kind=config.cache.kind,
            cache=self.cache.name,
            cache_nodes=self.cache.nodes,
            kafka_kind=config.kafka.kind,
            kafka_cluster=f"coupons-{config.name}",
            brokers=config.brokers,
            iam_connections_per_broker=iam_connection_limit(config) or MSK_IAM_CONNECTIONS,
        )
