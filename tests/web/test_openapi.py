"""The OpenAPI document against the API itself: a bounded schemathesis run over every operation
(valid and invalid inputs, with and without an author's token) finds no answer the document does
not describe: no 500, no undocumented status, no body off its schema."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData
from arboretum_web.openapi import openapi_document
from arboretum_web.ratelimit import RateLimits
from arboretum_web.screenshots import serve_in_thread

from .conftest import CheckRecorder

MAX_EXAMPLES = int(os.environ.get("ARENA_API_EXAMPLES", "12"))
"""Per operation: enough to go through the bounds, short enough for the suite (a deeper run:
``ARENA_API_EXAMPLES=200 pytest tests/web/test_openapi.py``)."""


schema = schemathesis.openapi.from_dict(openapi_document())
# A query parameter the API does not know is ignored, as docs/web.md says (a client may send a
# cache-buster); not an invalid input to refuse.
schema.config.generation.update(allow_extra_parameters=False)


@pytest.fixture(scope="module")
def base_url(redis_server_url: str) -> Iterator[str]:
    """The app over real HTTP (schemathesis sends its probes, such as a call without the token,
    through its own transport)."""
    client = redis.Redis.from_url(redis_server_url)
    # The limits are off: a deep run sends hundreds of requests a minute from one address, and
    # would test the limiter (tests/web/test_ratelimit.py) instead of the operations. Every
    # operation's 429 is documented (test_every_counted_operation_may_answer_429).
    settings = WebSettings(check=CheckRecorder(), rate_limits=RateLimits(enabled=False))
    app = create_app(settings, client=client)
    with serve_in_thread(app) as url:
        yield url
    client.close()


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_the_api_answers_as_its_document_says(case: Any, base_url: str, demo: DemoData) -> None:
    headers = {"Authorization": f"Bearer {demo.tokens['alice']}"}
    excluded = []
    if case.operation.method.upper() in ("POST", "DELETE"):
        # A schema-valid upload is any file: whether it is a bot is for the league to say (400
        # with the reason), which no schema can tell; a schema-valid action may be refused for
        # the state it meets (a ladder closed, a test over: 409). Every other check still runs.
        excluded.append(positive_data_acceptance)
    case.call_and_validate(base_url=base_url, headers=headers, excluded_checks=excluded)


def test_the_document_is_closed_and_bounded() -> None:
    doc = openapi_document()
    for name, schema_ in doc["components"]["schemas"].items():
        if schema_.get("type") == "object" and name != "Replay":
            assert schema_.get("additionalProperties") is False, name
            assert set(schema_["required"]) <= set(schema_["properties"]), name
    for path, item in doc["paths"].items():
        for op in item.values():
            for param in op.get("parameters", []):
                s = param["schema"]
                if s.get("type") == "integer":
                    assert "minimum" in s and "maximum" in s, (path, param["name"])
                if s.get("type") == "string":
                    assert "maxLength" in s, (path, param["name"])
            for status, response in op["responses"].items():
                for media in response["content"].values():
                    assert media["schema"] != {"type": "object"} or path.endswith("openapi.json"), (
                        path,
                        status,
                    )


def test_every_counted_operation_may_answer_429() -> None:
    """The rate limiter counts every operation of the API (docs/web.md), so each one documents
    its 429; one with a quota of its own keeps it and adds the rate limit."""
    document = openapi_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "put", "post", "delete", "patch"):
                continue
            answer = operation["responses"].get("429")
            assert answer is not None, (method, path)
            assert "over the rate limit" in answer["description"], (method, path)
    upload = document["paths"]["/api/v1/bots/{name}/versions"]["post"]["responses"]["429"]
    assert upload["description"].startswith("the bot had its quota of new versions"), upload
