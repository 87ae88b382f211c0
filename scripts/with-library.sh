#!/bin/sh
# with-library.sh: a lockbench that runs another version of a lock library
# or driver, for comparing two versions on the same scenarios
# (docs/libraries.md, "Two versions side by side"):
#
#   scripts/with-library.sh go  MODULE VERSION OUT   # a lockbench built against MODULE@VERSION
#   scripts/with-library.sh npm PACKAGE VERSION OUT  # bin/lockbench with adapters/node's PACKAGE at VERSION
#   scripts/with-library.sh pip PACKAGE VERSION OUT  # bin/lockbench with adapters/python's PACKAGE at VERSION
#
# OUT is an executable: for go, a lockbench binary; for npm and pip, a
# wrapper script that runs bin/lockbench (make build) with
# LOCKBENCH_ADAPTERS set to a copy of adapters/ (in OUT.adapters/) whose
# adapter installed PACKAGE@VERSION. Either is a side of `lockbench ab`:
#
#   lockbench ab bin/lockbench OUT -- --strategy rueidislock --workload long-task --ttl 1s
#
# Each result records the version it ran (scenarios[].library). Exit 2 on
# bad arguments; the build's own exit status when it fails.
set -eu

usage() {
	echo "usage: $0 go|npm|pip MODULE-OR-PACKAGE VERSION OUT" >&2
	exit 2
}
[ $# -eq 4 ] || usage
kind=$1 pkg=$2 version=$3 out=$4
case "$pkg$version" in *[!A-Za-z0-9._/@+~-]*) echo "$0: bad module or version: $pkg $version" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
mkdir -p "$(dirname "$out")"

case "$kind" in
go)
	# A copy of go.mod and go.sum with MODULE at VERSION, and the modules
	# released with it that go.mod requires (MODULE/...: rueidis's
	# rueidiscompat) at the same version; go get says what else it had to
	# move (a library that needs a newer MODULE is downgraded), and the
	# result's scenarios[].library and deps record what was linked in.
	# The build uses them through -modfile: the repository's go.mod is
	# left as it is.
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp "$root/go.mod" "$tmp/go.mod"
	cp "$root/go.sum" "$tmp/go.sum"
	cd "$root"
	companions=""
	for m in $(awk -v p="$pkg/" 'index($1, p) == 1 { print $1 }' go.mod); do
		# at the same version when it was released at it
		if go list -m "$m@$version" >/dev/null 2>&1; then companions="$companions $m@$version"; fi
	done
	# shellcheck disable=SC2086
	go get -modfile="$tmp/go.mod" "$pkg@$version" $companions
	go mod tidy -modfile="$tmp/go.mod"
	go build -modfile="$tmp/go.mod" -o "$out" ./cmd/lockbench
	echo "$out: lockbench built with $pkg@$version"
	;;
npm | pip)
	folder=node
	[ "$kind" = pip ] && folder=python
	dir="$out.adapters"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$root/adapters/README.md" "$dir/"
	for d in "$root"/adapters/*/; do
		name=$(basename "$d")
		if [ "$name" = "$folder" ]; then
			mkdir "$dir/$name"
			# the sources and pins, not the built folders
			(cd "$d" && find . -maxdepth 1 -type f -exec cp {} "$dir/$name/" \;)
		else
			ln -s "$d" "$dir/$name"
		fi
	done
	if [ "$kind" = npm ]; then
		(cd "$dir/node" && npm install --no-audit --no-fund --save-exact "$pkg@$version" >/dev/null)
		sh "$dir/node/build.sh"
	else
		sed -i "/^$pkg[=<>~ ]/d" "$dir/python/requirements.txt"
		echo "$pkg==$version" >>"$dir/python/requirements.txt"
		sh "$dir/python/build.sh"
	fi
	cat >"$out" <<EOF
#!/bin/sh
# lockbench with adapters/$folder's $pkg at $version (scripts/with-library.sh)
[ -x '$root/bin/lockbench' ] || { echo "$out: $root/bin/lockbench is missing: run make build" >&2; exit 2; }
LOCKBENCH_ADAPTERS='$dir' exec '$root/bin/lockbench' "\$@"
EOF
	chmod +x "$out"
	echo "$out: bin/lockbench with $pkg@$version in $dir/$folder"
	;;
*)
	usage
	;;
esac
