"""The routes and the dependency providers Powertools resolves on every request carry their
annotations as objects: string annotations would be compiled and evaluated per request."""

import inspect

import pytest

from functions.coupons import dependencies
from functions.coupons.routes import coupons, issues, lifecycle, operations


@pytest.mark.parametrize("module", [dependencies, coupons, issues, lifecycle, operations])
def test_route_and_provider_signatures_are_not_strings(module):
    functions = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f.__module__ == module.__name__]
    assert functions
    strings = {
        f"{f.__name__}.{name}"
        for f in functions
        for name, annotation in inspect.get_annotations(f).items()
        if isinstance(annotation, str)
    }
    assert strings == set()
