"""``python -m arboretum_server.healthcheck [ADDRESS]``: exit 0 when the referee serves.

Asks the gRPC health service of the referee at ADDRESS (default ``127.0.0.1:50051``, where
``arena serve --listen 0.0.0.0:50051`` answers inside its container) for the match service, and
exits 0 for ``SERVING``, 1 otherwise (not reachable, draining, or an error), with one line on
stderr saying which. docker-compose.yml's healthcheck of the referee runs it.
"""

from __future__ import annotations

import sys

__all__ = ["check", "main"]

DEFAULT_ADDRESS = "127.0.0.1:50051"


def check(address: str, timeout: float = 3.0) -> str | None:
    """None when the referee at ``address`` serves its match service, else why not."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from .service import MATCH_SERVICE

    with grpc.insecure_channel(address, options=[("grpc.enable_retries", 0)]) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=MATCH_SERVICE), timeout=timeout
            )
        except grpc.RpcError as exc:
            return f"the referee at {address} does not answer: {exc.code().name}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return f"the referee at {address} is {status}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    problem = check(args[0] if args else DEFAULT_ADDRESS)
    if problem is not None:
        print(f"arena: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
