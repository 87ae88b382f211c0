#!/bin/sh
# Builds lockbench's Node.js adapter (adapters/node): installs the pinned
# npm packages of package-lock.json into adapters/node/node_modules (git
# ignores it) with `npm ci`, only when node_modules is missing or older
# than package-lock.json. Run from anywhere (make adapters runs it from the
# repository's root). Exits 0 with a message when node or npm is absent:
# the Node.js strategies are then skipped.
set -e
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "adapters/node: node or npm not on PATH; skipping (the Node.js strategies will be skipped)"
	exit 0
fi
dir=$(cd "$(dirname "$0")" && pwd)
stamp="$dir/node_modules/.package-lock.json"
if [ -f "$stamp" ] && [ ! "$dir/package-lock.json" -nt "$stamp" ]; then
	exit 0
fi
echo "adapters/node: npm ci (redlock, redis-semaphore, ioredis as pinned in package-lock.json)"
cd "$dir"
npm ci --omit=dev --no-audit --no-fund --loglevel=error
touch "$stamp"
