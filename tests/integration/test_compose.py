"""docker-compose.yml is a valid Compose file and declares the stack docs/league.md describes.

Validation needs ``docker-compose`` (Debian package, installed by .ci/run) or ``check-jsonschema``;
with neither, the test fails loudly instead of skipping.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from arboretum_worker.sandbox.docker_runner import DEFAULT_IMAGE
from arboretum_worker.settings import WorkerSettings, job_timeout
from arboretum_worker.worker import HAND_BACK_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"

pytestmark = pytest.mark.integration


def _validators() -> list[list[str]]:
    found = []
    if shutil.which("docker-compose"):
        found.append(["docker-compose", "-f", str(COMPOSE), "config", "-q"])
    if shutil.which("check-jsonschema"):
        found.append(["check-jsonschema", "--builtin-schema", "vendor.compose-spec", str(COMPOSE)])
    return found


def test_compose_file_is_valid() -> None:
    validators = _validators()
    if not validators:
        pytest.fail(
            "neither docker-compose nor check-jsonschema is installed, so docker-compose.yml "
            "cannot be validated: apt-get install docker-compose (.ci/run does)"
        )
    for command in validators:
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"{command[0]} rejects docker-compose.yml:\n{done.stderr}"


def _resolved() -> dict:
    """The compose file as docker-compose resolves it (anchors, defaults), as a dict."""
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.fail("docker-compose is not installed (apt-get install docker-compose)")
    done = subprocess.run(
        [exe, "-f", str(COMPOSE), "config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return _parse_yaml(done.stdout)


def _parse_yaml(text: str) -> dict:
    """YAML to a dict with PyYAML from docker-compose's own interpreter (the venv has no PyYAML)."""
    exe = shutil.which("docker-compose")
    assert exe is not None
    with open(exe, encoding="utf-8", errors="replace") as fh:
        first = fh.readline()
    python = first[2:].strip().split() if first.startswith("#!") else ["python3"]
    done = subprocess.run(
        [*python, "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict = json.loads(done.stdout)
    return result


def test_compose_declares_the_stack() -> None:
    config = _resolved()
    services = config["services"]
    assert {"redis", "referee", "worker"} <= set(services)

    redis = services["redis"]
    command = " ".join(str(part) for part in redis["command"])
    assert "--appendonly yes" in command
    assert "--appendfsync everysec" in command
    assert "--maxmemory-policy noeviction" in command
    assert "healthcheck" in redis
    assert any(
        ":/data" in str(v) or (isinstance(v, dict) and v.get("target") == "/data")
        for v in redis["volumes"]
    )

    referee = services["referee"]
    assert referee["command"][:2] == ["arena", "serve"]

    worker = services["worker"]
    assert worker["command"] == ["arena", "worker"]
    assert worker["deploy"]["replicas"] >= 2
    assert "container_name" not in worker, "a container_name would prevent --scale"
    env = worker["environment"]
    assert env["ARENA_SANDBOX"] == "docker"
    assert env["REDIS_URL"].startswith("redis://redis:")
    volumes = [
        str(v) if not isinstance(v, dict) else f"{v.get('source')}:{v.get('target')}"
        for v in worker["volumes"]
    ]
    assert any("docker.sock" in v for v in volumes)
    match_root = env["ARENA_MATCH_ROOT"]
    assert any(v.startswith(f"{match_root}:{match_root}") for v in volumes), volumes
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_runs_workers_for_the_casual_games() -> None:
    """Casual games (people against bots) have workers of their own: the worker's image and
    sandbox, listening to the casual queue only, as many as CASUAL_WORKERS (default 2)."""
    services = _resolved()["services"]
    casual, worker = services["casual"], services["worker"]
    assert casual["command"] == ["arena", "worker"] and casual["image"] == worker["image"]
    assert casual["environment"]["ARENA_QUEUES"] == "casual"
    assert "ARENA_QUEUES" not in worker["environment"], "the league's workers take every queue"
    assert casual["environment"]["ARENA_SANDBOX"] == "docker"
    assert int(casual["deploy"]["replicas"]) == 2
    assert casual["volumes"] == worker["volumes"]
    assert _healthcheck(casual) == ["python", "-m", "arboretum_worker.healthcheck"]
    assert casual["restart"] == "unless-stopped"


def _healthcheck(service: dict) -> list[str]:
    check = service.get("healthcheck")
    assert check, "no healthcheck"
    test = [str(part) for part in check["test"]]
    assert test[0] == "CMD", test
    return test[1:]


def test_compose_heals_and_builds_the_bot_image() -> None:
    services = _resolved()["services"]
    # Every long-running service restarts when its process ends and has a healthcheck that runs
    # one of the project's own probes.
    assert _healthcheck(services["referee"])[:3] == ["python", "-m", "arboretum_server.healthcheck"]
    assert _healthcheck(services["worker"]) == ["python", "-m", "arboretum_worker.healthcheck"]
    web = _healthcheck(services["web"])
    assert web[:2] == ["python", "-c"] and "/api/v1/health" in web[2]
    for name in ("redis", "referee", "worker", "web"):
        assert services[name]["restart"] == "unless-stopped", name
    importlib.import_module("arboretum_server.healthcheck")
    importlib.import_module("arboretum_worker.healthcheck")
    # The bots' image is built from Dockerfile.bot, and the workers (and the web's submission
    # check) start their bots from it by default, once its self-check passed.
    bot = services["bot"]
    assert bot["build"]["dockerfile"] == "worker/docker/Dockerfile.bot"
    assert bot["network_mode"] == "none" and bot["restart"] == "no"
    for name in ("worker", "web", "cli"):
        assert services[name]["environment"]["ARENA_BOT_IMAGE"] == bot["image"], name
        assert services[name]["depends_on"]["bot"]["condition"] == (
            "service_completed_successfully"
        )
    assert services["worker"]["environment"]["ARENA_SANDBOX"] == "docker"
    assert bot["image"] == DEFAULT_IMAGE
    # SIGTERM lets a worker finish its match for ARENA_STOP_DRAIN_S, then hand it back (which
    # may take HAND_BACK_TIMEOUT_S): the grace period leaves room for both, and is longer than a
    # one-game match's job timeout with the default clock.
    grace = services["worker"]["stop_grace_period"]
    assert grace.endswith("m")
    drain = WorkerSettings().stop_drain_s
    assert "ARENA_STOP_DRAIN_S" not in services["worker"]["environment"]
    assert int(grace[:-1]) * 60 >= drain + HAND_BACK_TIMEOUT_S + 30
    assert int(grace[:-1]) * 60 > job_timeout(2, 1, 1000, 10_000)
    command = " ".join(str(part) for part in services["redis"]["command"])
    assert "--hash-max-listpack-value 512" in command
