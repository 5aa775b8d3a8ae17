#!/usr/bin/env bash
# Create/refresh the project virtualenv (.venv in the repo root) and put it first on PATH.
#
# Sourced by scripts/demo (the product: sdk, server, worker, web, editable) and by scripts/test,
# which sets ARBORETUM_DEV_TOOLS=1 first for requirements-dev.txt too (pytest, ruff, mypy, the
# browser and docker test clients, ...):      source "$ROOT/scripts/bootstrap.sh"
# Run directly, it sets up both, as a developer wants:   scripts/bootstrap.sh
#
# Each part is (re)installed only when the hash of what it installs differs from its stamp kept
# inside .venv, so a second run costs well under a second.
#
# Environment:
#   PYTHON        interpreter to build .venv with (default: first of python3, python3.13,
#                 python3.12, python3.11 that is >= 3.11)
#   ARBORETUM_DEV_TOOLS=1       also install requirements-dev.txt (set by scripts/test)
#   ARBORETUM_FORCE_INSTALL=1   reinstall even when the stamps match
set -euo pipefail

ARBORETUM_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd -P)"
export ARBORETUM_ROOT
ARBORETUM_VENV="$ARBORETUM_ROOT/.venv"
_ARB_STAMP="$ARBORETUM_VENV/.arboretum-deps.sha256"
_ARB_DEV_STAMP="$ARBORETUM_VENV/.arboretum-dev.sha256"
_ARB_MIN_PY="3.11"

_arb_log() { printf 'bootstrap: %s\n' "$*" >&2; }
_arb_die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }

# True if "$1" runs and is a CPython >= 3.11.
_arb_py_ok() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

_arb_find_python() {
    local cand
    if [[ -n "${PYTHON:-}" ]]; then
        _arb_py_ok "$PYTHON" || _arb_die "PYTHON=$PYTHON is not a working Python >= $_ARB_MIN_PY"
        printf '%s\n' "$PYTHON"
        return
    fi
    for cand in python3 python3.13 python3.12 python3.11 python; do
        if command -v "$cand" >/dev/null 2>&1 && _arb_py_ok "$cand"; then
            printf '%s\n' "$cand"
            return
        fi
    done
    _arb_die "no Python >= $_ARB_MIN_PY found (tried python3, python3.13, python3.12, python3.11, python).
  On Debian/Ubuntu: apt-get install -y python3 python3-venv    (or set PYTHON=/path/to/python3.X)"
}

_arb_create_venv() {
    local py out ver
    py="$(_arb_find_python)"
    ver="$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    _arb_log "creating .venv with $py (Python $ver)"
    rm -rf "$ARBORETUM_VENV"
    if ! out="$("$py" -m venv "$ARBORETUM_VENV" 2>&1)"; then
        rm -rf "$ARBORETUM_VENV"   # never leave a half-built venv behind
        printf '%s\n' "$out" >&2
        if grep -qiE 'ensurepip|python3(\.[0-9]+)?-venv' <<<"$out"; then
            _arb_die "'$py -m venv' failed because ensurepip is missing.
  On Debian/Ubuntu install the venv package, then re-run:
      apt-get install -y python${ver}-venv     (python3-venv if $py is the distribution's default python3)"
        fi
        _arb_die "'$py -m venv $ARBORETUM_VENV' failed (see above)"
    fi
}

_arb_hash_of() {
    # The interpreter's version and the files given: what decides what a part installs.
    (
        cd "$ARBORETUM_ROOT"
        "$ARBORETUM_VENV/bin/python" -c 'import sys; print(sys.version)'
        sha256sum "$@" scripts/bootstrap.sh
    ) | sha256sum | cut -d' ' -f1
}

# (Re)install one part when its stamp does not match: _arb_install NAME STAMP HASH PIP-ARGS...
_arb_install() {
    local name="$1" stamp="$2" hash="$3"
    shift 3
    if [[ "${ARBORETUM_FORCE_INSTALL:-0}" == 1 || ! -f "$stamp" || "$(cat "$stamp")" != "$hash" ]]; then
        _arb_log "installing $name into .venv"
        rm -f "$stamp"
        (
            cd "$ARBORETUM_ROOT"
            "$ARBORETUM_VENV/bin/python" -m pip install -q --disable-pip-version-check "$@"
        ) || _arb_die "pip install failed (see above); .venv left without a stamp, next run retries"
        printf '%s\n' "$hash" >"$stamp"
        _arb_log "done"
    fi
}

# (Re)create .venv when it is missing, broken or too old.
if [[ ! -x "$ARBORETUM_VENV/bin/python" ]] || ! _arb_py_ok "$ARBORETUM_VENV/bin/python" \
    || ! "$ARBORETUM_VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    _arb_create_venv
fi

# Run directly (not sourced), the script sets up the developer's tools too.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    ARBORETUM_DEV_TOOLS=1
fi

_arb_install "sdk, server, worker, web (editable)" "$_ARB_STAMP" \
    "$(_arb_hash_of sdk/pyproject.toml server/pyproject.toml worker/pyproject.toml web/pyproject.toml)" \
    -e ./sdk -e ./server -e ./worker -e ./web
if [[ "${ARBORETUM_DEV_TOOLS:-0}" == 1 ]]; then
    _arb_install "the development and test tools (requirements-dev.txt)" "$_ARB_DEV_STAMP" \
        "$(_arb_hash_of requirements-dev.txt)" -r requirements-dev.txt
fi

# Bytecode for the project's own packages (pip compiles what it installs, but not an editable
# source tree, and PYTHONDONTWRITEBYTECODE may be set). Every sandboxed bot imports the SDK from
# a read-only mount where Python cannot cache it, so without this each bot start compiles the
# SDK again: about twice the CPU. Up-to-date files are skipped, so this costs a fraction of a second.
(
    cd "$ARBORETUM_ROOT"
    "$ARBORETUM_VENV/bin/python" -m compileall -q -j 0 \
        sdk/arboretum sdk/arboretum_sdk sdk/arboretum_proto \
        server/arboretum_server worker/arboretum_worker web/arboretum_web >/dev/null
) || _arb_log "warning: compileall failed; bots will start slower"

export VIRTUAL_ENV="$ARBORETUM_VENV"
export PATH="$ARBORETUM_VENV/bin:$PATH"
unset PYTHONHOME
