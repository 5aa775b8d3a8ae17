#!/usr/bin/env bash
# Create/refresh the project virtualenv (.venv in the repo root) and put it first on PATH.
#
# Sourced by scripts/test, scripts/demo and friends:   source "$ROOT/scripts/bootstrap.sh"
# or run directly to just set up the environment:      scripts/bootstrap.sh
#
# Dependencies are (re)installed only when the hash of the pyproject.toml files,
# requirements-dev.txt and this script differs from the stamp kept inside .venv,
# so a second run costs well under a second.
#
# Environment:
#   PYTHON        interpreter to build .venv with (default: first of python3, python3.13,
#                 python3.12, python3.11 that is >= 3.11)
#   ARBORETUM_FORCE_INSTALL=1   reinstall even when the stamp matches
set -euo pipefail

ARBORETUM_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd -P)"
export ARBORETUM_ROOT
ARBORETUM_VENV="$ARBORETUM_ROOT/.venv"
_ARB_STAMP="$ARBORETUM_VENV/.arboretum-deps.sha256"
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

_arb_deps_hash() {
    # Anything that changes what should be installed in .venv goes in here.
    (
        cd "$ARBORETUM_ROOT"
        "$ARBORETUM_VENV/bin/python" -c 'import sys; print(sys.version)'
        sha256sum sdk/pyproject.toml server/pyproject.toml worker/pyproject.toml web/pyproject.toml \
            requirements-dev.txt scripts/bootstrap.sh
    ) | sha256sum | cut -d' ' -f1
}

# (Re)create .venv when it is missing, broken or too old.
if [[ ! -x "$ARBORETUM_VENV/bin/python" ]] || ! _arb_py_ok "$ARBORETUM_VENV/bin/python" \
    || ! "$ARBORETUM_VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    _arb_create_venv
fi

_arb_hash="$(_arb_deps_hash)"
if [[ "${ARBORETUM_FORCE_INSTALL:-0}" == 1 || ! -f "$_ARB_STAMP" \
    || "$(cat "$_ARB_STAMP")" != "$_arb_hash" ]]; then
    _arb_log "installing sdk, server, worker, web (editable) and requirements-dev.txt into .venv"
    rm -f "$_ARB_STAMP"
    (
        cd "$ARBORETUM_ROOT"
        "$ARBORETUM_VENV/bin/python" -m pip install -q --disable-pip-version-check \
            -e ./sdk -e ./server -e ./worker -e ./web -r requirements-dev.txt
    ) || _arb_die "pip install failed (see above); .venv left without a stamp, next run retries"
    printf '%s\n' "$_arb_hash" >"$_ARB_STAMP"
    _arb_log "done"
fi
unset _arb_hash

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
