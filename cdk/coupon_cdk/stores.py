"""ElastiCache (Valkey), MSK and RDS PostgreSQL, each encrypted in transit and at rest."""

from __future__ import annotations

from aws_cdk import ArnFormat, Duration, Fn, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticache as elasticache
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_msk as msk
from aws_cdk import aws_rds as rds
from aws_cdk import custom_resources as cr
from constructs import Construct

from coupon_cdk.config import CacheConfig, DatabaseConfig, KafkaConfig
from coupon_cdk.nag import accept
from coupon_cdk.network import REDIS_PORT, Network

TOPIC = "coupon.issue.v1"
EVENTS_TOPIC = "coupon.events.v1"
DATABASE_NAME = "coupons"


NO_EVICTION = {"maxmemory-policy": "noeviction"}


class Cache(Construct):
    """Valkey: serverless (dev) or a replication group with automatic failover (prod). TLS always,
    and IAM authentication always.

    Every key here has a TTL, and ElastiCache's default ``volatile-lru`` evicts exactly those
    under memory pressure: an evicted coupon state or holder set is an oversell or a double
    booking. The replication group runs ``noeviction`` (a full cache refuses writes, and the
    intake answers 503); the serverless cache has no data storage maximum, so it grows instead
    of reaching a limit it would evict at.

    Authentication (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/auth-iam.html): both
    kinds carry a user group of two users, ``default`` switched off (a user group must hold a user
    named default; with it off, a connection that does not authenticate can do nothing) and
    :attr:`user`, IAM-enabled,
    whose name is its id, as IAM authentication requires. A function may connect once its role
    has ``elasticache:Connect`` on the cache and that user (:meth:`grant_connect`); the functions
    sign a token for each connection (``lua_redis.client``).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, config: CacheConfig, network: Network, name: str
    ) -> None:
        super().__init__(scope, construct_id)
        subnet_ids = network.subnet_ids
        self.kind = config.kind
        self.user = f"{name}-app"  # IAM: the user's name is its id; lowercase, as ElastiCache stores ids
        app_user = elasticache.CfnUser(
            self,
            "AppUser",
            engine="valkey",
            user_id=self.user,
            user_name=self.user,
            access_string="on ~* +@all",
            authentication_mode={"Type": "iam"},
        )
        default_user = elasticache.CfnUser(
            self,
            "DefaultUser",
            engine="valkey",
            user_id=f"{name}-default",
            user_name="default",
            access_string="off -@all",
            authentication_mode={"Type": "no-password-required"},
        )
        users = elasticache.CfnUserGroup(
            self, "Users", engine="valkey", user_group_id=f"{name}-users", user_ids=[default_user.ref, app_user.ref]
        )
        self.user_arn = app_user.attr_arn
        if config.kind == "serverless":
            cache = elasticache.CfnServerlessCache(
                self,
                "Serverless",
                engine="valkey",
                major_engine_version="8",
                serverless_cache_name=name,
                security_group_ids=[network.cache.security_group_id],
                subnet_ids=subnet_ids,
                snapshot_retention_limit=1,
                user_group_id=users.ref,
            )
            host, port = cache.attr_endpoint_address, cache.attr_endpoint_port
            self.name = name  # the metrics' clusterId, and the cache's name in an IAM token
            self.arn = cache.attr_arn
        else:
            parameters = elasticache.CfnParameterGroup(
                self,
                "Parameters",
                cache_parameter_group_family="valkey8",
                description=f"{name}: never evict a reservation",
                properties=NO_EVICTION,
            )
            subnet_group = elasticache.CfnSubnetGroup(
                self, "Subnets", description=f"{name} cache subnets", subnet_ids=subnet_ids
            )
            group = elasticache.CfnReplicationGroup(
                self,
                "ReplicationGroup",
                replication_group_description=f"{name} reservations",
                engine="valkey",
                engine_version="8.0",
                cache_node_type=config.node_type,
                num_cache_clusters=1 + config.replicas,  # a primary, each replica in another AZ
                automatic_failover_enabled=True,
                multi_az_enabled=True,
                transit_encryption_enabled=True,
                at_rest_encryption_enabled=True,
                cache_subnet_group_name=subnet_group.ref,
                cache_parameter_group_name=parameters.ref,
                security_group_ids=[network.cache.security_group_id],
                port=REDIS_PORT,
                snapshot_retention_limit=7,
                user_group_ids=[users.ref],
            )
            accept(group, "AwsSolutions-AEC6")
            host, port = group.attr_primary_end_point_address, group.attr_primary_end_point_port
            self.name = group.ref  # its generated id; the nodes are <id>-001, <id>-002, ...
            self.arn = Stack.of(self).format_arn(
                service="elasticache",
                resource="replicationgroup",
                resource_name=group.ref,
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
        self.url = f"rediss://{host}:{port}/0"
        self.nodes = 1 + config.replicas

    @property
    def environment(self) -> dict[str, str]:
        """What a function needs to reach the cache (``coupon_core.settings.RedisSettings``)."""
        return {
            "REDIS_URL": self.url,
            "REDIS_AUTH": "iam",
            "REDIS_USER": self.user,
            "REDIS_CACHE_NAME": self.name,
            "REDIS_CACHE_KIND": self.kind,
        }

    def grant_connect(self, role: iam.IRole) -> None:
        """``elasticache:Connect`` on this cache as its IAM-enabled user, and nothing else."""
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["elasticache:Connect"], resources=[self.arn, self.user_arn])
        )


class Kafka(Construct):
    """MSK with IAM authentication: serverless (dev) or provisioned (prod).

    Provisioned brokers are ``brokers`` over every AZ (MSK wants a multiple of the subnets),
    with a configuration that makes the topic's durability explicit: no topic appears by
    accident, and a write is acknowledged by ``min_insync_replicas`` of its replicas. The topic
    itself is made by :class:`coupon_cdk.topic.KafkaTopics` (the MSK topic API and
    ``AWS::MSK::Topic`` exist for provisioned clusters only).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, config: KafkaConfig, network: Network, name: str, brokers: int
    ) -> None:
        super().__init__(scope, construct_id)
        subnet_ids = network.subnet_ids
        iam_auth = {"sasl": {"iam": {"enabled": True}}}
        cluster: msk.CfnServerlessCluster | msk.CfnCluster
        if config.kind == "serverless":
            cluster = msk.CfnServerlessCluster(
                self,
                "Serverless",
                cluster_name=name,
                client_authentication=iam_auth,
                vpc_configs=[{"subnetIds": subnet_ids, "securityGroups": [network.kafka.security_group_id]}],
            )
        else:
            broker_logs = logs.LogGroup(self, "BrokerLogs")
            settings = msk.CfnConfiguration(
                self,
                "Configuration",
                name=name,
                kafka_versions_list=[KAFKA_VERSION],
                server_properties=_server_properties(config),
            )
            cluster = msk.CfnCluster(
                self,
                "Provisioned",
                cluster_name=name,
                kafka_version=KAFKA_VERSION,
                number_of_broker_nodes=brokers,
                configuration_info={"arn": settings.attr_arn, "revision": 1},
                broker_node_group_info={
                    "instanceType": config.broker_instance_type,
                    "clientSubnets": subnet_ids,
                    "securityGroups": [network.kafka.security_group_id],
                    "storageInfo": {"ebsStorageInfo": {"volumeSize": config.broker_storage_gb}},
                },
                client_authentication=iam_auth,
                encryption_info={"encryptionInTransit": {"clientBroker": "TLS", "inCluster": True}},
                logging_info={
                    "brokerLogs": {"cloudWatchLogs": {"enabled": True, "logGroup": broker_logs.log_group_name}}
                },
            )
        self.cluster_arn = cluster.attr_arn
        lookup = cr.AwsCustomResource(
            self,
            "BootstrapBrokers",
            on_update=cr.AwsSdkCall(
                service="Kafka",
                action="getBootstrapBrokers",
                parameters={"ClusterArn": self.cluster_arn},
                physical_resource_id=cr.PhysicalResourceId.of(f"{name}-bootstrap-brokers"),
            ),
            policy=cr.AwsCustomResourcePolicy.from_sdk_calls(resources=[self.cluster_arn]),
            install_latest_aws_sdk=False,
            log_group=logs.LogGroup(self, "BootstrapBrokersLogs"),
        )
        self.bootstrap_servers = lookup.get_response_field("BootstrapBrokerStringSaslIam")
        # arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID -> the ARNs of its topics and groups
        arn_parts = Fn.split("/", self.cluster_arn)
        name_and_uuid = Fn.join("/", [Fn.select(1, arn_parts), Fn.select(2, arn_parts)])
        stack = Stack.of(self)
        self._topic_arn_prefix = f"arn:{stack.partition}:kafka:{stack.region}:{stack.account}:topic/{name_and_uuid}/"
        self.topic_arn = self.topic_arn_of(TOPIC)
        self.events_topic_arn = self.topic_arn_of(EVENTS_TOPIC)
        self.group_arn_prefix = f"arn:{stack.partition}:kafka:{stack.region}:{stack.account}:group/{name_and_uuid}/"

    def topic_arn_of(self, topic: str) -> str:
        return self._topic_arn_prefix + topic


KAFKA_VERSION = "3.8.x"


def _server_properties(config: KafkaConfig) -> str:
    return "\n".join(
        [
            "auto.create.topics.enable=false",
            f"default.replication.factor={config.replication_factor}",
            f"min.insync.replicas={config.min_insync_replicas}",
            "unclean.leader.election.enable=false",
        ]
    )


class Database(Construct):
    """RDS PostgreSQL, encrypted, credentials in Secrets Manager, TLS forced, behind an RDS Proxy.

    The functions always connect through the proxy: it pools connections for many concurrent
    Lambda containers, and its certificate chains to the Amazon roots of the system trust
    store, which the functions verify.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, config: DatabaseConfig, network: Network, name: str
    ) -> None:
        super().__init__(scope, construct_id)
        engine = rds.DatabaseInstanceEngine.postgres(version=rds.PostgresEngineVersion.VER_17_9)
        self.instance = rds.DatabaseInstance(
            self,
            "Instance",
            engine=engine,
            instance_type=ec2.InstanceType(config.instance_type),
            vpc=network.vpc,
            vpc_subnets=network.subnets,
            security_groups=[network.database],
            credentials=rds.Credentials.from_generated_secret("coupons"),
            database_name=DATABASE_NAME,
            storage_encrypted=True,
            allocated_storage=config.storage_gb,
            multi_az=config.multi_az,
            backup_retention=Duration.days(config.backup_days),
            deletion_protection=config.deletion_protection,
            cloudwatch_logs_exports=["postgresql"],
            parameter_group=rds.ParameterGroup(self, "Parameters", engine=engine, parameters={"rds.force_ssl": "1"}),
        )
        assert self.instance.secret is not None
        self.secret = self.instance.secret
        accept(self.instance, "AwsSolutions-SMG4", "AwsSolutions-RDS11")  # the secret is the instance's child
        if not config.multi_az:
            accept(self.instance, "AwsSolutions-RDS3")
        if not config.deletion_protection:
            accept(self.instance, "AwsSolutions-RDS10")
        proxy = self.instance.add_proxy(
            "Proxy",
            db_proxy_name=name,  # CloudFormation requires one; unique per environment
            secrets=[self.secret],
            vpc=network.vpc,
            security_groups=[network.proxy],
            require_tls=True,
        )
        self.host = proxy.endpoint
        self.proxy_name = name
