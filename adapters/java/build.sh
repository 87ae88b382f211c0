#!/bin/sh
# Builds lockbench's Redisson adapter (docs/external-locks.md) into
# adapters/java/target: target/lockbench-redisson.jar and its runtime
# dependencies in target/lib, from the versions pinned in pom.xml. Run
# from the repository root by `make adapters`. It builds only when the jar
# is missing or older than pom.xml or a source file, and exits 0 with a
# message when java or mvn is absent (the redisson strategies are then
# skipped with that reason).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
for tool in java mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "adapters/java: $tool not found; the Redisson adapter is not built (install a JDK 17+ and Maven)"
		exit 0
	fi
done
jar="$dir/target/lockbench-redisson.jar"
if [ -f "$jar" ] && [ -d "$dir/target/lib" ] &&
	[ -z "$(find "$dir/pom.xml" "$dir/src" -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
	exit 0
fi
echo "adapters/java: building the Redisson adapter (mvn package)"
cd "$dir"
# Offline first (a warm ~/.m2 needs no network), then with the registry.
mvn -B -q -o package >/dev/null 2>&1 || mvn -B -q package
touch "$jar"
