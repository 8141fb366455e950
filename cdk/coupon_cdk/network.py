"""The VPC: private isolated subnets only, the endpoints the functions and the MSK mapping need,
and one security group per kind of resource."""

from __future__ import annotations

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

REDIS_PORT = 6379
POSTGRES_PORT = 5432
MSK_IAM_PORT = 9098

# SQS: the worker's dead letters and the mapping's on-failure destination; Secrets Manager:
# database credentials; STS and Lambda: the MSK mapping's pollers; CloudWatch: logs and metrics.
ENDPOINT_SERVICES = {
    "Sqs": ec2.InterfaceVpcEndpointAwsService.SQS,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    "Sts": ec2.InterfaceVpcEndpointAwsService.STS,
    "Lambda": ec2.InterfaceVpcEndpointAwsService.LAMBDA_,
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "Monitoring": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
}


class Network(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        max_azs: int,
        endpoint_azs: int | None,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=max_azs,
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=22)
            ],
            flow_logs={
                "All": ec2.FlowLogOptions(
                    destination=ec2.FlowLogDestination.to_cloud_watch_logs(
                        logs.LogGroup(self, "FlowLogs", retention=log_retention)
                    )
                )
            },
        )
        self.subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        self.subnet_ids = self.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED).subnet_ids
        self.functions = self._group("Functions", "Lambda functions that use the database")
        # The intake (the function every user reaches) and the topic maker: no path to the proxy.
        self.functions_without_database = self._group("FunctionsNoDatabase", "Lambda functions without the database")
        self.cache = self._group("Cache", "ElastiCache")
        self.kafka = self._group("Kafka", "MSK brokers and the pollers of the event source mapping")
        self.proxy = self._group("Proxy", "RDS Proxy: the only way to the database")
        self.database = self._group("Database", "RDS PostgreSQL, reached through the proxy only")
        endpoints = self._group("Endpoints", "interface VPC endpoints")
        self.proxy.add_ingress_rule(self.functions, ec2.Port.tcp(POSTGRES_PORT), "functions to the proxy")
        self.database.add_ingress_rule(self.proxy, ec2.Port.tcp(POSTGRES_PORT), "proxy to PostgreSQL")
        for group, whose in ((self.functions, "functions"), (self.functions_without_database, "no-database functions")):
            self.cache.add_ingress_rule(group, ec2.Port.tcp(REDIS_PORT), f"{whose} to Valkey")
            self.kafka.add_ingress_rule(group, ec2.Port.tcp(MSK_IAM_PORT), f"{whose} to brokers (IAM)")
        self.kafka.add_ingress_rule(self.kafka, ec2.Port.all_tcp(), "brokers and mapping pollers among themselves")
        for peer in (self.functions, self.functions_without_database, self.kafka):
            endpoints.add_ingress_rule(peer, ec2.Port.tcp(443), "HTTPS to AWS APIs")
        # The endpoints' network interfaces: one per endpoint in each of the first endpoint_azs AZs
        # (billed per endpoint and AZ); a function elsewhere reaches them across AZs.
        isolated = self.vpc.isolated_subnets
        endpoint_subnets = ec2.SubnetSelection(subnets=isolated[: endpoint_azs or len(isolated)])
        for name, service in ENDPOINT_SERVICES.items():
            self.vpc.add_interface_endpoint(
                name,
                service=service,
                subnets=endpoint_subnets,
                security_groups=[endpoints],
                private_dns_enabled=True,
                open=False,
            )

    def _group(self, name: str, description: str) -> ec2.SecurityGroup:
        return ec2.SecurityGroup(self, name, vpc=self.vpc, description=description, allow_all_outbound=True)
