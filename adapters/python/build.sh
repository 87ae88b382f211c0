#!/bin/sh
# Builds the Python adapter (adapters/python/adapter.py): a virtual
# environment in adapters/python/.venv (git ignores it) with the pinned
# packages of requirements.txt, made only when .venv is missing or older
# than requirements.txt. Run from anywhere (make adapters runs it from the
# repository's root). Exits 0 with a message when python3 (3.11 or newer,
# which redis 8.2.0 needs) or its venv module is absent: the strategies
# redis-py-lock and python-redis-lock* are then skipped.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
venv="$dir/.venv"
if ! command -v python3 >/dev/null 2>&1; then
	echo "adapters/python: python3 not found, not built (its strategies are skipped)"
	exit 0
fi
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
	echo "adapters/python: python3's venv module (python3-venv) not found, not built (its strategies are skipped)"
	exit 0
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
	echo "adapters/python: $(python3 --version 2>&1) is older than 3.11 (redis 8.2.0 needs 3.11), not built (its strategies are skipped)"
	exit 0
fi
stamp="$venv/.installed"
if [ -f "$stamp" ] && [ ! "$dir/requirements.txt" -nt "$stamp" ]; then
	exit 0
fi
echo "adapters/python: building .venv from requirements.txt"
rm -rf "$venv"
python3 -m venv "$venv"
req="$dir/requirements.txt" check=--require-hashes
if grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$req" | grep -q -v -e '--hash='; then
	# A pin without its hash (scripts/with-library.sh pip): pip checks all
	# or none, so none, with the other pins' hashes taken off, and the
	# dependencies of that other version resolved by pip.
	req="$venv/requirements-unhashed.txt" check=
	sed 's/[[:space:]]*--hash=[^[:space:]]*//g' "$dir/requirements.txt" >"$req"
	echo "adapters/python: a pin without a hash in requirements.txt: installing without hash checking"
fi
# shellcheck disable=SC2086 # $check is one word or none
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check ${check:+--no-deps} $check -r "$req"
"$venv/bin/python" -c 'import redis, redis_lock' # the pins import together
touch "$stamp"
