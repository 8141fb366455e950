"""``make up`` / ``make down``: the whole system on this machine, without Docker.

Up: embedded Valkey, PostgreSQL and Tansu; the schema migrated and the topic created;
LocalStack with the real CDK app's ``local`` environment deployed by ``cdklocal``; the
Kafka-to-Lambda bridge; the sample shop page (``web/``) served from an origin of its own, one
the ``local`` environment's ``api.corsOrigins`` lists. Writes ``.local/stack.env``. Every process is recorded by pid in
``.local/pids.json`` and stopped by pid; a second ``up`` finds them alive and starts nothing.

    python -m local.stack.control up | down | env
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from sqlalchemy import make_url

from coupon_client.environment import reachable
from coupon_core.adapters.kafka.topics import CLUSTER_DEFAULT, TopicSpec, ensure_topic
from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.migrate import upgrade
from local.stack import localstack
from local.stack.processes import Process, ServiceError, alive, port_open, spawn, stop, url_port
from local.stack.services import STARTERS, start_all
from local.stack.tls import TRUST_VARIABLES
from local.testkit.kafka_topics import kafka_settings

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".local"
PIDS = STATE / "pids.json"
ENV_FILE = STATE / "stack.env"
REPORTS = STATE / "executor-reports"  # where each function process says what it imported from
TOPIC = "coupon.issue.v1"
EVENTS_TOPIC = "coupon.events.v1"
PARTITIONS = 3
STACK = "Coupons-local"
DATABASE_SECRET = "coupons-local/database"
OUTPUTS_S = 30  # how long LocalStack may take to set a deployed stack's outputs
BRIDGE_JOIN_S = 60  # Tansu holds a group's first join about 5 s
CLIENT_VARIABLES = (*TRUST_VARIABLES, "KAFKA_TLS")  # what a client of the stack needs besides the URLs
# each in .local/stack.env as <NAME>_FUNCTION
FUNCTIONS = ("intake", "coupons", "worker", "dlq", "builder", "rebuild", "relay")
OUTPUTS = {"DlqUrl", "ApiUrl", *(f"{name.title()}FunctionName" for name in FUNCTIONS)}  # what the environment reads
LOCALSTACK_ACCOUNT = "000000000000"  # LocalStack's default account for the "test" credentials
SHOP_ORIGIN = "http://127.0.0.1:8000"  # the shop page's origin: cdk.json's local api.corsOrigins lists it
WEB = ROOT / "web"
AWS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ENDPOINT_URL": localstack.URL,
    "AWS_ENDPOINT_URL_S3": localstack.URL,
}
# What the coupons command and the AWS CLI need to reach the stack with nothing exported:
# LocalStack's endpoint, region and test identity, and the environment's name (a sourced
# stack.env makes `coupons list` and `aws cloudformation describe-stacks` work as they are).
# The region twice: the AWS CLI v2 reads AWS_REGION, v1 AWS_DEFAULT_REGION only.
OPERATOR = {
    "AWS_ENDPOINT_URL": localstack.URL,
    "AWS_REGION": AWS["AWS_DEFAULT_REGION"],
    "AWS_DEFAULT_REGION": AWS["AWS_DEFAULT_REGION"],
    "AWS_ACCESS_KEY_ID": AWS["AWS_ACCESS_KEY_ID"],
    "AWS_SECRET_ACCESS_KEY": AWS["AWS_SECRET_ACCESS_KEY"],
    "COUPONS_ENV": STACK.removeprefix("Coupons-"),
}


def _pids() -> dict[str, list[tuple[int, int]]]:
    """name -> its processes, each (pid, signal that stops it promptly), in start order."""
    if not PIDS.exists():
        return {}
    return {name: [(pid, sig) for pid, sig in value] for name, value in json.loads(PIDS.read_text()).items()}


def _record(name: str, processes: Iterable[Process]) -> None:
    pids = _pids()
    pids[name] = [(process.pid, int(process.stop_signal)) for process in processes]
    PIDS.write_text(json.dumps(pids))


def read_env() -> dict[str, str]:
    lines = ENV_FILE.read_text().splitlines() if ENV_FILE.exists() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


def is_up() -> bool:
    pids = _pids()
    return ENV_FILE.exists() and bool(pids) and all(alive(pid) for group in pids.values() for pid, _ in group)


def up() -> dict[str, str]:
    """The stack's environment, starting it unless it is up; this process's clients trust it
    (``SSL_CERT_FILE``) and speak TLS to its broker (``KAFKA_TLS``) from now on."""
    if is_up():
        print(f"already up; environment in {ENV_FILE}")
        env = read_env()
    else:
        down()
        try:
            env = _start()
        except BaseException:  # what did start is stopped: a failed up leaves nothing running
            down()
            raise
    _trust(env)
    return env


def _trust(env: dict[str, str]) -> None:
    os.environ.update({name: env[name] for name in CLIENT_VARIABLES if name in env})


def _start() -> dict[str, str]:
    STATE.mkdir(exist_ok=True)
    shutil.rmtree(STATE / "services", ignore_errors=True)  # every up starts from an empty system
    env: dict[str, str] = {}
    for service in start_all(STATE / "services"):
        _record(service.env_var, service.processes)
        env |= {service.env_var: service.url, **service.client_environment}
    _trust(env)  # this process's own clients: the migration, the topics
    engine = engine_for_url(env["DATABASE_URL"])
    upgrade(engine)
    engine.dispose()
    _ensure_topics(env["KAFKA_BOOTSTRAP_SERVERS"])
    shutil.rmtree(REPORTS, ignore_errors=True)
    REPORTS.mkdir()
    aws = localstack.start(
        STATE, STATE / "localstack-venv", lambda_python=bare_python(), reports=REPORTS,
        trust={name: env[name] for name in TRUST_VARIABLES if name in env},
    )  # fmt: skip
    _record("LOCALSTACK", aws.processes)
    secret_arn = database_secret(env["DATABASE_URL"])
    outputs = _deploy(env, secret_arn)
    env |= {
        "KAFKA_TOPIC": TOPIC,
        "DLQ_URL": outputs["DlqUrl"],
        **{f"{name.upper()}_FUNCTION": outputs[f"{name.title()}FunctionName"] for name in FUNCTIONS},
        "API_URL": reachable(outputs["ApiUrl"], localstack.URL),
        # the intake's metrics lines (the reports' arrival order): LocalStack writes a function's
        # lines to Lambda's default group, not to the one its LoggingConfig names (IntakeLogGroup)
        "INTAKE_LOG_GROUP": f"/aws/lambda/{outputs['IntakeFunctionName']}",
        **OPERATOR,
    }
    ready = STATE / "bridge.ready"
    ready.unlink(missing_ok=True)
    bridge = spawn(
        [sys.executable, "-m", "local.stack.bridge", "--bootstrap", env["KAFKA_BOOTSTRAP_SERVERS"], "--topic", TOPIC,
         "--function", env["WORKER_FUNCTION"], "--dlq-url", env["DLQ_URL"], "--ready-file", str(ready)],
        STATE / "bridge.log", env={**os.environ, **AWS}, cwd=ROOT,
    )  # fmt: skip
    _record("BRIDGE", [Process(bridge.pid)])
    _wait_for(ready, "the bridge's consumer group joined", BRIDGE_JOIN_S)
    env["SHOP_URL"] = f"{_serve_shop()}/shop.html?api={env['API_URL']}"
    ENV_FILE.touch(mode=0o600)
    ENV_FILE.chmod(0o600)  # it holds the stores' credentials
    ENV_FILE.write_text("".join(f"{name}={value}\n" for name, value in env.items()))
    print(f"up; environment in {ENV_FILE}\nthe shop's page: {env['SHOP_URL']}&coupon=ID&user=ID")
    return env


def _serve_shop() -> str:
    """``web/`` served at :data:`SHOP_ORIGIN`, a page's origin the API lets read its answers."""
    port = url_port(SHOP_ORIGIN)
    if port_open(port):
        raise ServiceError(f"the shop page's port {port} is taken: stop what listens on it, then make up again")
    log = STATE / "shop.log"
    server = spawn(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(WEB)], log
    )
    _record("SHOP", [Process(server.pid)])
    deadline = time.monotonic() + 10
    while not port_open(port):
        if server.poll() is not None or time.monotonic() > deadline:
            raise ServiceError(f"the shop page's server did not start; its log {log}")
        time.sleep(0.1)
    return SHOP_ORIGIN


def bare_python() -> str:
    """The interpreter this venv was made from: the runtime's Python without the venv's packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return str(Path(sys.base_prefix) / "bin" / version)


def stop_service(env_var: str) -> None:
    """Stop one embedded service of the running stack, its TLS front first (tests of outages)."""
    for pid, stop_signal in reversed(_pids()[env_var]):
        stop(pid, stop_signal)


def restart_service(env_var: str) -> None:
    """Start a stopped service again on its port (PostgreSQL keeps its data and its password;
    the in-memory broker comes back empty and gets its topic again)."""
    service = STARTERS[env_var](STATE / "services", url_port(read_env()[env_var]))
    _record(env_var, service.processes)
    if env_var == "KAFKA_BOOTSTRAP_SERVERS":
        _ensure_topics(service.url)


def _ensure_topics(bootstrap_servers: str) -> None:
    """The issue topic and the event stream, as the deploy-time custom resource makes them."""
    for topic in (TOPIC, EVENTS_TOPIC):
        ensure_topic(kafka_settings(bootstrap_servers, topic), TopicSpec(topic, PARTITIONS, CLUSTER_DEFAULT))


def database_secret(database_url: str) -> str:
    """The database's credentials as RDS keeps them (JSON: host, port, username, password,
    dbname) in LocalStack's Secrets Manager, for the functions to read through DB_SECRET_ARN as
    they do on AWS; its ARN."""
    url = make_url(database_url)
    secret = {"host": url.host, "port": url.port, "username": url.username, "password": url.password,
              "dbname": url.database, "engine": "postgres"}  # fmt: skip
    created = _client("secretsmanager").create_secret(Name=DATABASE_SECRET, SecretString=json.dumps(secret))
    return str(created["ARN"])


def _deploy(env: dict[str, str], database_secret_arn: str) -> dict[str, str]:
    """Bootstrap and deploy the CDK app's local environment on LocalStack; return its outputs."""
    cdklocal = ROOT / "node_modules" / ".bin" / "cdklocal"
    if not cdklocal.exists():
        raise ServiceError("cdklocal is missing: run make up (it installs the pinned CLIs from npm)")
    context = [
        "-c", "env=local",
        "-c", f"local:redisUrl={env['REDIS_URL']}",
        "-c", f"local:databaseSecretArn={database_secret_arn}",
        "-c", f"local:kafkaBootstrapServers={env['KAFKA_BOOTSTRAP_SERVERS']}",
        "-c", f"local:kafkaTls={os.environ.get('KAFKA_TLS', 'off')}",
    ]  # fmt: skip
    deploy_env = {**os.environ, **AWS, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
                  "CDK_DISABLE_CLI_TELEMETRY": "true"}  # fmt: skip
    outputs_file, assembly = STATE / "outputs.json", ROOT / "cdk.out"
    # The app is synthesized (cdk synth; it needs no endpoint) while the environment is
    # bootstrapped, and the deploy takes the assembly as it is. The bootstrap names its
    # environment and runs outside the app's folder: where a cdk.json names an app, the CLI
    # synthesizes it first (about 10 s of CPU) though nothing needs it.
    started = time.monotonic()
    with (STATE / "synth.log").open("w") as synth_log, (STATE / "deploy.log").open("w") as log:
        synth = subprocess.Popen(
            [str(cdklocal.with_name("cdk")), "synth", "--quiet", "--output", str(assembly), *context],
            cwd=ROOT, env=deploy_env, stdout=synth_log, stderr=synth_log,
        )  # fmt: skip
        bootstrap = ["bootstrap", f"aws://{LOCALSTACK_ACCOUNT}/{AWS['AWS_DEFAULT_REGION']}"]
        try:
            _cdklocal(cdklocal, bootstrap, STATE, deploy_env, log)
        except BaseException:
            synth.kill()
            synth.wait()
            raise
        if synth.wait():
            raise ServiceError(f"cdk synth failed; see {STATE / 'synth.log'}")
        print(f"cdk synth, beside the bootstrap: {time.monotonic() - started:.0f} s")
        deploy = ["deploy", "--app", str(assembly), "--require-approval", "never", "--outputs-file", str(outputs_file)]
        _cdklocal(cdklocal, deploy, ROOT, deploy_env, log)
    return _outputs(json.loads(outputs_file.read_text()).get(STACK, {}))


def _cdklocal(cdklocal: Path, command: list[str], folder: Path, env: dict[str, str], log: IO[str]) -> None:
    started = time.monotonic()
    done = subprocess.run(  # noqa: PLW1510 - the return code is checked below, to name the log
        [str(cdklocal), *command], cwd=folder, env=env, stdout=log, stderr=log
    )
    if done.returncode:
        raise ServiceError(f"cdklocal {command[0]} failed; see {STATE / 'deploy.log'}")
    print(f"cdklocal {command[0]}: {time.monotonic() - started:.0f} s")


def _outputs(written: dict[str, str], sleep: Callable[[float], None] = time.sleep) -> dict[str, str]:
    """The stack's outputs, as the CLI wrote them; else, when LocalStack reported the stack
    complete before it had set them all (seen on a loaded machine: the CLI then writes none), as
    DescribeStacks gives them once every output the stack's environment reads is set."""
    deadline = time.monotonic() + OUTPUTS_S
    cloudformation = _client("cloudformation", Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 1}))
    while not written.keys() >= OUTPUTS:
        if time.monotonic() > deadline:
            missing = ", ".join(sorted(OUTPUTS - written.keys()))
            raise ServiceError(f"{STACK} deployed, but without its outputs {missing} after {OUTPUTS_S} s; see {STATE}")
        sleep(0.5)
        with contextlib.suppress(BotoCoreError, ClientError):  # LocalStack busy: asked again until the deadline
            stack = cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]
            written = {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}
    return written


def _client(service: str, config: Config | None = None) -> Any:
    """A boto3 client of LocalStack's ``service``."""
    return boto3.client(
        service, region_name=AWS["AWS_DEFAULT_REGION"], endpoint_url=localstack.URL, config=config,
        aws_access_key_id=AWS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=AWS["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip


def _wait_for(marker: Path, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not marker.exists():
        if time.monotonic() > deadline:
            raise ServiceError(f"not within {timeout_s:.0f} s: {what}; see {STATE}")
        time.sleep(0.2)


def down() -> None:
    for name, processes in reversed(list(_pids().items())):
        for pid, stop_signal in reversed(processes):
            if alive(pid):
                stop(pid, stop_signal)
                print(f"stopped {name} (pid {pid})")
    PIDS.unlink(missing_ok=True)
    ENV_FILE.unlink(missing_ok=True)


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "up":
        try:
            up()
        except ServiceError as exc:
            print(f"make up: the local stack did not start.\n{exc}", file=sys.stderr)
            return 1
    elif command == "down":
        down()
    elif command == "env":
        print(ENV_FILE.read_text() if ENV_FILE.exists() else "not up", end="")
    else:
        print("usage: python -m local.stack.control up | down | env", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
