# Two commands matter to a newcomer: `make demo` and `make test`. Each creates the virtual
# environment it needs; nothing has to be installed by hand.

# Everything runs on the Lambda runtime's Python, 3.12: the virtual environment, the tests, lint's
# target and the functions on LocalStack. PYTHON names the interpreter; else the first that runs
# and is 3.12 of LAMBDA_PYTHON, python3.12 on PATH and pyenv's 3.12 builds.
RUNTIME_PYTHON := 3.12
COMMA := ,
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for candidate in "$$LAMBDA_PYTHON" python$(RUNTIME_PYTHON) \
	$${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(RUNTIME_PYTHON).*/bin/python$(RUNTIME_PYTHON); do \
	[ -n "$$candidate" ] && "$$candidate" -c 'import sys; assert sys.version_info[:2] == ($(subst .,$(COMMA),$(RUNTIME_PYTHON)))' \
	2>/dev/null && { echo "$$candidate"; break; }; done)
endif
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
UV_DIR := .local/uv
UV := $(UV_DIR)/bin/uv
LAYER_PATHS := $(CURDIR)/layers/lua_redis/python:$(CURDIR)/layers/coupon_core/python
export PYTHONPATH := $(CURDIR):$(LAYER_PATHS):$(CURDIR)/cdk
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true
ENV ?= dev
# Who receives the alarms, added to cdk.json's alarmEmails (prod refuses to deploy without one):
# make deploy ENV=prod ALARM_EMAILS=oncall@example.com,lead@example.com
CDK_CONTEXT = -c env=$(ENV) $(if $(ALARM_EMAILS),-c alarmEmails=$(ALARM_EMAILS))
CDK := node_modules/.bin/cdk

.PHONY: lock explore plan bill rehearse mutate sales venv stunnel chromium test unit processes policy services infra check-deploy integration chaos fuzz lint format demo demo-clock up down bench migrate openapi bootstrap synth diff deploy destroy clean

venv: $(STAMP) stunnel

# The one system package the local stack needs: stunnel, the TLS front of the embedded stores
# (local/stack/tls_front.py), from Debian's archive when it is missing.
stunnel:
	@command -v stunnel4 >/dev/null || command -v stunnel >/dev/null \
		|| { command -v apt-get >/dev/null && { apt-get install -y -qq stunnel4 >/dev/null \
			|| { apt-get update -qq && apt-get install -y -qq stunnel4 >/dev/null; }; }; } \
		|| { echo "make: the local stack needs stunnel; install it (Debian: apt-get install stunnel4)" >&2; exit 1; }

# The browser the report tests open pages in (local/testkit/browser.py): Debian's chromium,
# installed when it is missing.
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null \
		|| { command -v apt-get >/dev/null && { apt-get install -y -qq chromium >/dev/null \
			|| { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; }; } \
		|| { echo "make: the report tests need Chromium; install it (Debian: apt-get install chromium)" >&2; exit 1; }

NO_PYTHON = { echo "make: no Python $(RUNTIME_PYTHON) found, the Lambda runtime's, which everything here runs on." \
	"Install one (pyenv install $(RUNTIME_PYTHON), or your system's python$(RUNTIME_PYTHON) package), or name it:" \
	"make PYTHON=/path/to/python$(RUNTIME_PYTHON)" >&2; exit 1; }

$(STAMP): pyproject.toml uv.lock $(UV)
	@test -n "$(PYTHON)" || $(NO_PYTHON)
	@# Bytecode compiled at install, once: uv leaves it to each first import, which the suite's
	@# forked children and fresh processes would each pay (docs/benchmarks.md, the suite's time).
	$(UV) sync --frozen --quiet --compile-bytecode --python $(PYTHON)
	@# aws-cdk-lib and aws-cdk.cloud-assembly-schema both ship aws_cdk/cloud_assembly_schema/__init__.py,
	@# and the one installed last wins (aws/aws-cdk#38482): aws-cdk-lib's, installed alone after the rest.
	$(UV) sync --frozen --quiet --compile-bytecode --python $(PYTHON) --reinstall-package aws-cdk-lib
	@# The import roots besides the checkout (the layers' python/ folders, cdk/), as the functions
	@# see them on Lambda: an activated .venv runs `python -m bench.intake` as make does.
	printf '%s\n' $(subst :, ,$(LAYER_PATHS)) $(CURDIR)/cdk \
		> $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/coupon_system_roots.pth
	touch $(STAMP)

# uv, pinned by hash, installs every other Python dependency from uv.lock (coupon_cdk/locked.py).
# A virtual environment of its own, so that its pip, not the system's (which Debian and Ubuntu
# keep to their own packages), installs it.
$(UV): requirements-uv.txt
	@test -n "$(PYTHON)" || $(NO_PYTHON)
	rm -rf $(UV_DIR)
	$(PYTHON) -m venv $(UV_DIR)
	$(UV_DIR)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-uv.txt

# Write uv.lock anew from pyproject.toml (after changing a pin or a group): every dependency,
# transitive ones included, with the hashes of its files. A test fails while the two disagree.
lock: $(UV)
	$(UV) lock --python $(PYTHON)

# The whole suite, and each tier alone: unit (in-process, no server, no process started, moto for
# AWS calls), processes (fresh interpreters, a terminal, the package built), policy (the repository's
# own rules: documents, budgets, layers), services (the real embedded Valkey, PostgreSQL and Kafka
# broker), infra (the synthesized stacks), integration (through the API Gateway URL on LocalStack).
# make test runs them all on one worker per core this process may use: the integration and the infra
# tier each whole on one, every other test on whichever is free (tests/conftest.py); WORKERS=0 runs
# them in this process. A worker that dies is not replaced: its replacement would find the stack up
# and leave it running. One worker more than the cores is faster but not yet sound: docs/benchmarks.md.
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
test: venv chromium lint $(CDK)
	$(BIN)/pytest -m "not sale" --numprocesses=$(WORKERS) --max-worker-restart=0 --durations=25

# The sales make test leaves out (it runs one, the integration burst): the demo's report in a
# browser, and a rehearsal on the local stack, each end to end through its tool.
sales: venv chromium $(CDK)
	$(BIN)/pytest -m sale tests/integration --durations=10

unit: venv
	$(BIN)/pytest tests/unit --numprocesses=$(WORKERS)

processes: venv
	$(BIN)/pytest tests/processes

policy: venv
	$(BIN)/pytest tests/policy

services: venv
	$(BIN)/pytest tests/services

infra: check-deploy

# What AWS would refuse, before AWS sees it: dev, small and prod synthesized (cdk-nag fails the synth on
# an unacknowledged finding), cfn-lint on every template, checkov's rules (every finding fixed or
# accepted with its reason in cdk/coupon_cdk/checkov_accepted.py), and a test per documented AWS rule.
check-deploy: venv $(CDK)
	$(BIN)/pytest tests/infra --durations=10

integration: venv chromium $(CDK)
	$(BIN)/pytest tests/integration

# A flash sale under random faults, in-process against the real servers, with the I1-I5 report
# (make test runs a small one); CHAOS_ARGS="--users 1000 --quantity 300 --seed 7" for a big one.
chaos: venv
	$(BIN)/python -m local.tools.chaos $(CHAOS_ARGS)

# The interleavings machine (tests/services/interleavings.py) with random seeds; make test runs a
# fixed sample. EXPLORE_EXAMPLES=500 (the default: 200), or EXPLORE_SECONDS=600; EXPLORE_STEPS=50.
explore: venv
	EXPLORE=1 $(BIN)/pytest -s -p no:logging tests/services/test_interleavings.py::test_every_interleaving_holds_the_invariants

# The API fuzzer (schemathesis, from docs/openapi.json) at length with a random seed; make test
# runs a fixed sample of it. FUZZ_EXAMPLES="2000" for a longer one.
fuzz: venv
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-500} FUZZ_RANDOM=1 $(BIN)/pytest tests/services/test_fuzz.py

# Mutation testing of the clients' decisions (Stryker on web/coupon-client.js, mutmut on
# coupon_client/retry.py), each held to 85 % killed (local/tools/mutate.py); minutes, so not in test.
mutate: venv $(CDK)
	$(BIN)/python -m local.tools.mutate

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The demo's report counts the installs too: demo-clock notes the time before make runs them.
demo: demo-clock venv $(CDK)
	DEMO_STARTED=$$(cat .local/demo-started) $(BIN)/python -m local.tools.demo $(DEMO_ARGS)

# When the demo began, before its installs: the demo's report counts them in its time.
demo-clock:
	@mkdir -p .local && date +%s.%N > .local/demo-started

# The whole system on this machine (services, LocalStack with the local CDK environment, the
# Kafka bridge); .local/stack.env says where everything is. down stops what up started.
up: venv $(CDK)
	$(BIN)/python -m local.stack.control up

down: venv
	$(BIN)/python -m local.stack.control down

bench: venv
	$(BIN)/python -m bench.reserve alternatives
	$(BIN)/python -m bench.intake
	$(BIN)/python -m bench.worker
	$(BIN)/python -m bench.reconcile
	$(BIN)/python -m bench.reserve wait
	$(BIN)/python -m bench.write_limit
	$(BIN)/python -m bench.reserve ceiling
	$(BIN)/python -m bench.reserve ceiling --depth 1
	$(BIN)/python -m bench.first_seconds

# Will a sale fit an environment: each AWS limit it meets, what binds first, what to raise or
# warm up. make plan ENV=prod SALE="copies=5000 users=300000 peak=20000/s opens=2026-12-24T12:00Z"
# QUOTAS="api_rps=20000" for quotas your account has had raised (local/planner/quotas.py).
plan: venv
	@test -n "$(SALE)" || { echo 'make plan: describe the sale, SALE="copies=5000 users=300000 peak=20000/s"' >&2; exit 2; }
	$(BIN)/python -m local.tools.plan --env $(ENV) --sale "$(SALE)" --quotas "$(QUOTAS)"

# What each AWS environment of cdk.json costs a month at idle, priced from its synthesized template
# (local/planner/bill.py), written into docs/deploy.md's "What it costs".
bill: venv
	$(BIN)/python -m local.tools.bill --write

# A flash sale rehearsed on a running environment with locust, audited from outside through the API
# (local/tools/rehearse.py): make rehearse on the local stack (brought up first), or
# make rehearse TARGET=dev URL=https://ID.execute-api.REGION.amazonaws.com/dev REGION=eu-west-1
# (TOKENS=file of Cognito ID tokens for prod; INTAKE_LOGS=the stack's IntakeLogGroup output, for the
# report's arrival order); REHEARSE_ARGS="--users 5000 --copies 500".
TARGET ?= local
rehearse: venv $(CDK)
	$(if $(filter local,$(TARGET)),$(BIN)/python -m local.stack.control up)
	$(BIN)/python -m local.tools.rehearse --target $(TARGET) $(if $(URL),--url $(URL)) \
		$(if $(REGION),--region $(REGION)) $(if $(TOKENS),--id-tokens $(TOKENS)) \
		$(if $(INTAKE_LOGS),--intake-log-group $(INTAKE_LOGS)) $(REHEARSE_ARGS)

# Upgrade the database named by DATABASE_URL (or DB_SECRET_ARN) to the newest schema.
migrate: venv
	$(BIN)/python -m coupon_core.adapters.postgres.migrate

# Regenerate docs/openapi.json from the routes, and docs/design.md's API table from it.
openapi: venv
	$(BIN)/python -m local.tools.openapi

# The CDK app per environment: make synth ENV=dev|prod|local (deploy, diff and destroy alike).
$(CDK): package.json
	npm install --no-audit --no-fund --silent
	touch $(CDK)

bootstrap: venv $(CDK)
	$(CDK) bootstrap $(CDK_CONTEXT)

synth: venv $(CDK)
	$(CDK) synth $(CDK_CONTEXT) --quiet

diff: venv $(CDK)
	$(CDK) diff $(CDK_CONTEXT) Coupons-$(ENV)

# The environment's stack and, the first time, the shared Coupons-ApiGatewayAccount it depends on.
deploy: venv $(CDK)
	$(CDK) deploy $(CDK_CONTEXT) --require-approval broadening Coupons-$(ENV)

destroy: venv $(CDK)
	$(CDK) destroy $(CDK_CONTEXT) Coupons-$(ENV)

clean:
	rm -rf $(VENV) .local .pytest_cache .ruff_cache cdk.out node_modules
