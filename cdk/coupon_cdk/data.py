"""ElastiCache (Valkey), MSK and RDS PostgreSQL, each encrypted in transit and at rest."""

from __future__ import annotations

from aws_cdk import Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticache as elasticache
from aws_cdk import aws_logs as logs
from aws_cdk import aws_msk as msk
from aws_cdk import aws_rds as rds
from aws_cdk import custom_resources as cr
from constructs import Construct

from coupon_cdk.config import CacheConfig, DatabaseConfig, KafkaConfig
from coupon_cdk.nag import accept
from coupon_cdk.network import REDIS_PORT, Network

TOPIC = "coupon.issue.v1"
DATABASE_NAME = "coupons"


class Cache(Construct):
    """Valkey: serverless (dev) or a replication group with automatic failover (prod). TLS always."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: CacheConfig, network: Network, name: str
    ) -> None:
        super().__init__(scope, construct_id)
        subnet_ids = network.subnet_ids
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
            )
            host, port = cache.attr_endpoint_address, cache.attr_endpoint_port
        else:
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
                num_cache_clusters=2,
                automatic_failover_enabled=True,
                multi_az_enabled=True,
                transit_encryption_enabled=True,
                at_rest_encryption_enabled=True,
                cache_subnet_group_name=subnet_group.ref,
                security_group_ids=[network.cache.security_group_id],
                port=REDIS_PORT,
                snapshot_retention_limit=7,
            )
            accept(group, "AwsSolutions-AEC6")
            host, port = group.attr_primary_end_point_address, group.attr_primary_end_point_port
        self.url = f"rediss://{host}:{port}/0"


class Kafka(Construct):
    """MSK with IAM authentication: serverless (dev) or provisioned (prod), and the topic."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: KafkaConfig, network: Network, name: str
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
            broker_logs = logs.LogGroup(self, "BrokerLogs", retention=logs.RetentionDays.ONE_MONTH)
            cluster = msk.CfnCluster(
                self,
                "Provisioned",
                cluster_name=name,
                kafka_version="3.8.x",
                number_of_broker_nodes=len(subnet_ids),
                broker_node_group_info={
                    "instanceType": config.broker_instance_type,
                    "clientSubnets": subnet_ids,
                    "securityGroups": [network.kafka.security_group_id],
                    "storageInfo": {"ebsStorageInfo": {"volumeSize": 100}},
                },
                client_authentication=iam_auth,
                encryption_info={"encryptionInTransit": {"clientBroker": "TLS", "inCluster": True}},
                logging_info={
                    "brokerLogs": {"cloudWatchLogs": {"enabled": True, "logGroup": broker_logs.log_group_name}}
                },
            )
        self.cluster_arn = cluster.attr_arn
        self.topic = msk.CfnTopic(
            self,
            "Topic",
            cluster_arn=self.cluster_arn,
            topic_name=TOPIC,
            partition_count=config.partitions,
            replication_factor=3,  # fixed by MSK Serverless; one replica per AZ when provisioned
        )
        brokers = cr.AwsCustomResource(
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
        )
        self.bootstrap_servers = brokers.get_response_field("BootstrapBrokerStringSaslIam")
        # arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID -> the ARNs of its topics and groups
        arn_parts = Fn.split("/", self.cluster_arn)
        name_and_uuid = Fn.join("/", [Fn.select(1, arn_parts), Fn.select(2, arn_parts)])
        stack = Stack.of(self)
        self.topic_arn = f"arn:{stack.partition}:kafka:{stack.region}:{stack.account}:topic/{name_and_uuid}/{TOPIC}"
        self.group_arn_prefix = f"arn:{stack.partition}:kafka:{stack.region}:{stack.account}:group/{name_and_uuid}/"


class Database(Construct):
    """RDS PostgreSQL, encrypted, credentials in Secrets Manager, TLS forced, behind an RDS Proxy.

    The functions always connect through the proxy: it pools connections for many concurrent
    Lambda containers, and its certificate chains to the Amazon roots of the system trust
    store, which the functions verify.
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: DatabaseConfig, network: Network) -> None:
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
            multi_az=config.multi_az,
            backup_retention=Duration.days(config.backup_days),
            deletion_protection=config.deletion_protection,
            removal_policy=RemovalPolicy.SNAPSHOT if config.deletion_protection else RemovalPolicy.DESTROY,
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
            "Proxy", secrets=[self.secret], vpc=network.vpc, security_groups=[network.database], require_tls=True
        )
        self.host = proxy.endpoint
