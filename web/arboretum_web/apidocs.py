"""``/docs/api``: the HTTP API's reference as a page, read from the same OpenAPI document that
``/api/v1/openapi.json`` serves (one source): every operation grouped by its first path word,
with its parameters, its answers and whether it needs an author's token, then the schemas."""

from __future__ import annotations

from functools import cache
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .identity import request_author
from .openapi import RATE_LIMITED, openapi_document
from .safety import CSRF_FIELD, LazyToken

__all__ = ["reference", "routes"]

_METHODS = ("get", "post", "put", "delete", "patch")


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: its type or the schema it names, and its bounds."""
    if "$ref" in schema:
        return str(schema["$ref"]).rpartition("/")[2]
    if "enum" in schema:
        return " | ".join(map(str, schema["enum"]))
    kind = schema.get("type", "any")
    kind = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        kind = f"array of {_type(schema['items'])}"
    bounds = [
        f"{word} {schema[key]}"
        for key, word in (("minimum", "from"), ("maximum", "to"), ("maxLength", "at most"))
        if key in schema
    ]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _answers(operation: dict[str, Any]) -> list[dict[str, Any]]:
    """Each answer but the rate limit's 429, which the page says once for every operation."""
    out = []
    for status, answer in sorted(operation.get("responses", {}).items()):
        description = answer.get("description", "").removesuffix(f"; or {RATE_LIMITED}")
        if description == RATE_LIMITED:
            continue
        content: dict[str, Any] = answer.get("content", {})
        schema: dict[str, Any] = next(iter(content.values()))["schema"] if content else {}
        out.append(
            {
                "status": status,
                "description": description,
                "schema": _type(schema) if schema else "",
                "named": "$ref" in schema,
            }
        )
    return out


@cache
def reference() -> dict[str, Any]:
    """The document as the page lists it: operations by group, and the schemas."""
    document = openapi_document()
    groups: dict[str, list[dict[str, Any]]] = {}
    for path, item in document["paths"].items():
        group = path.removeprefix("/api/v1").removeprefix("/api").strip("/").split("/")[0]
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            params = [
                {
                    "name": p["name"],
                    "in": p["in"],
                    "required": bool(p.get("required")),
                    "type": _type(p.get("schema", {})),
                    "description": p.get("description", ""),
                }
                for p in operation.get("parameters", [])
            ]
            body = operation.get("requestBody", {}).get("content", {})
            groups.setdefault(group, []).append(
                {
                    "anchor": f"{method}-{path}".replace("/", "-")
                    .replace("{", "")
                    .replace("}", ""),
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "token": bool(operation.get("security")),
                    "params": params,
                    "body": [f"{kind}: {_type(c.get('schema', {}))}" for kind, c in body.items()],
                    "answers": _answers(operation),
                }
            )
    schemas = [
        {
            "name": name,
            "type": _type({k: v for k, v in schema.items() if k != "properties"}),
            "fields": [
                {
                    "name": field,
                    "type": _type(spec),
                    "required": field in schema.get("required", []),
                    "description": spec.get("description", ""),
                }
                for field, spec in schema.get("properties", {}).items()
            ],
        }
        for name, schema in sorted(document["components"]["schemas"].items())
    ]
    return {"info": document["info"], "groups": groups, "schemas": schemas}


def api_docs_page(request: Request) -> Response:
    context = {
        "author": request_author(request),
        "csrf": LazyToken(request),
        "csrf_field": CSRF_FIELD,
        "api": reference(),
        "nav": "api",
    }
    return request.app.state.templates.TemplateResponse(request, "api_docs.html", context)


def routes() -> list[Route]:
    return [Route("/docs/api", api_docs_page)]
