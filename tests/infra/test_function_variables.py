"""Each function is given the variables its settings read, and no others: every variable of every
function in every environment's template is one its settings model names (or one Powertools reads
itself), and every variable its settings require is given. A name misspelt in the CDK, or a
setting renamed in one place only, fails here."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import AliasChoices, BaseModel

from coupon_core.settings import KafkaSettings, ObservabilitySettings
from coupon_core.settings.backend import DatabaseSettings
from coupon_core.settings.coupons import CouponsSettings
from coupon_core.settings.http import CorsSettings
from coupon_core.settings.intake import IntakeSettings
from coupon_core.settings.rebuild import RebuildSettings
from coupon_core.settings.relay import RelaySettings
from coupon_core.settings.worker import DlqHandlerSettings, WorkerSettings
from tests.infra.template_support import function_id, resources

HTTP = (CorsSettings,)  # what functions/http_api reads for both HTTP functions
READS: dict[str, tuple[type[BaseModel], ...]] = {  # function -> the settings its handler reads
    "intake": (IntakeSettings, *HTTP),
    "coupons": (CouponsSettings, *HTTP),
    "worker": (WorkerSettings,),
    "dlq": (DlqHandlerSettings,),
    "builder": (RebuildSettings,),
    "rebuild": (RebuildSettings,),
    "relay": (RelaySettings,),
}
DEPLOY_TIME: dict[str, tuple[type[BaseModel], ...]] = {  # run by CloudFormation, each reading parts
    "migrate": (DatabaseSettings, ObservabilitySettings),
    "topic": (KafkaSettings, ObservabilitySettings),
}
POWERTOOLS_OWN = {"POWERTOOLS_TRACE_DISABLED"}  # read by Powertools itself, not by our settings


def names(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """The variables ``model`` reads, at any depth, and those of them it requires."""
    every: set[str] = set()
    required: set[str] = set()
    for field in model.model_fields.values():
        part = next((kind for kind in (field.annotation, *get_args(field.annotation)) if _is_model(kind)), None)
        if part is not None:
            inner, inner_required = names(part)
            every |= inner
            required |= inner_required if field.is_required() else set()
            continue
        alias = field.validation_alias
        aliases = set(alias.choices) if isinstance(alias, AliasChoices) else {alias}
        every |= {name for name in aliases if isinstance(name, str)}
        if field.is_required() and len(aliases) == 1:
            required |= {name for name in aliases if isinstance(name, str)}
    return every, required


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def test_the_reader_finds_what_a_model_reads_and_requires():
    every, required = names(IntakeSettings)
    assert {"REDIS_URL", "KAFKA_TOPIC", "REDIS_WAIT_REPLICAS", "BUILDER_FUNCTION", "AWS_REGION"} <= every
    assert {"REDIS_URL", "POWERTOOLS_SERVICE_NAME"} <= required
    assert "REDIS_WAIT_REPLICAS" not in required


@pytest.mark.parametrize("env", ["dev", "small", "prod", "local"])
def test_every_variable_a_function_is_given_is_one_its_settings_read(env, request):
    template = request.getfixturevalue(env)
    functions = resources(template, "AWS::Lambda::Function")
    models = READS | (DEPLOY_TIME if env != "local" else {})
    for function, reading in models.items():
        given = set(functions[function_id(template, function)]["Properties"]["Environment"]["Variables"])
        every = set().union(*(names(model)[0] for model in reading))
        required = set().union(*(names(model)[1] for model in reading))
        assert given - every - POWERTOOLS_OWN == set(), (env, function)
        assert required - given == set(), (env, function)
