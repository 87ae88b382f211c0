#!/usr/bin/env bash
# The steps of lockbench's GitHub Action (action.yml at the repository
# root; docs/action.md). The Action passes its inputs as INPUT_* variables;
# set the same variables to run it on your own machine, without GitHub:
#
#   INPUT_SCENARIOS='lockbench/*.yaml' INPUT_PROGRAM=. INPUT_BASELINE=none \
#     path/to/lockbench/scripts/action-run.sh
#
#   action-run.sh setup   install redis-server (apt) when missing; build the
#                         program (INPUT_PROGRAM) or install lockbench
#                         (INPUT_VERSION, else the Action's own ref)
#   action-run.sh run     run each scenario file, fetch the baseline, compare
#   action-run.sh         both
#
# Inputs (environment):
#   INPUT_SCENARIOS          scenario files or globs (** too), blank- or newline-separated; required
#   INPUT_PROGRAM            a Go main package that calls lockbench.Main (go build -o ... PROGRAM)
#   INPUT_VERSION            lockbench version to go install (vX.Y.Z, a commit); default ACTION_REF
#   INPUT_FAIL_ON            --fail-on expressions, one per line, besides --fail-on safety
#   INPUT_THRESHOLD          compare --threshold (default 25%; empty: compare's own, 5%)
#   INPUT_P99_THRESHOLD      compare --p99-threshold (default 150%; empty: --threshold)
#   INPUT_COST_THRESHOLD     compare --cost-threshold (commands/op; empty: compare's own, 10%)
#   INPUT_CPU_THRESHOLD      compare --cpu-threshold (CPU/op; default 100%; empty: compare's own, 25%)
#   INPUT_RSS_THRESHOLD      compare --rss-threshold (peak RSS; empty: compare's own, 25%)
#   INPUT_NORMALIZE          compare --normalize strategy/driver/workload/retry
#   INPUT_COMPARE_ARGS       more lockbench compare flags, blank-separated (no quoting)
#   INPUT_BASELINE           artifact (default), none, or a committed result file or directory
#   INPUT_BASELINE_ARTIFACT  artifact name (default lockbench-baseline)
#   INPUT_REQUIRE_BASELINE   true: no baseline found is an error (exit 2)
#   INPUT_REPEAT             runs of each scenario (default 4: compare tests significance from 4)
#   INPUT_RUN_ARGS           more lockbench run flags, blank-separated (no quoting)
#   INPUT_RESULTS_DIR        where the result files go (default lockbench-results)
#   ACTION_REF, ACTION_PATH  the Action's ref and directory (action.yml sets them)
#   DEFAULT_BRANCH           the branch whose baseline artifact is fetched (default main)
#   GH_TOKEN, GITHUB_REPOSITORY  for the artifact baseline (gh api, gh run download)
#   LOCKBENCH_BIN            use this lockbench binary: setup builds or installs nothing
#   LOCKBENCH_ACTION_DIR     the script's own files (default $RUNNER_TEMP/lockbench-action)
#
# Exit codes: 0 every run passed and no regression; otherwise the first
# non-zero code of the runs (lockbench run: 1 failed, 2 bad input, 3 a
# threshold failed, 130 interrupted), else the first of the comparisons
# (lockbench compare: 1 regression or nothing matched, 2 bad input, 4
# invalid baseline, any other as compare returns it); 2 for bad inputs to
# the Action; a
# failed install or build returns its own code.
set -uo pipefail

die() { # die CODE MESSAGE
	echo "::error::lockbench action: $2" >&2
	exit "$1"
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_path=${ACTION_PATH:-$(dirname "$here")}
work=${LOCKBENCH_ACTION_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/lockbench-action}
module=github.com/lockbench/lockbench

output() { # output NAME VALUE: a step output (multi-line values too)
	[ -n "${GITHUB_OUTPUT:-}" ] || return 0
	local eof="EOF_lockbench_$RANDOM$RANDOM"
	printf '%s<<%s\n%s\n%s\n' "$1" "$eof" "$2" "$eof" >>"$GITHUB_OUTPUT"
}

binary() { echo "${LOCKBENCH_BIN:-$work/bin/lockbench}"; }

setup() {
	if ! command -v redis-server >/dev/null 2>&1; then
		echo "redis-server is missing: installing Debian's redis-server package"
		local sudo=""
		[ "$(id -u)" = 0 ] || sudo="sudo"
		$sudo apt-get update -qq || return
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null || return
	fi
	redis-server --version

	local bin
	bin=$(binary)
	if [ -n "${LOCKBENCH_BIN:-}" ]; then
		[ -x "$bin" ] || die 2 "LOCKBENCH_BIN=$bin is not an executable"
		echo "using $bin (LOCKBENCH_BIN)"
	elif [ -n "${INPUT_PROGRAM:-}" ]; then
		# The program's own go.mod pins the lockbench it is built with.
		mkdir -p "$(dirname "$bin")"
		echo "go build -o $bin ${INPUT_PROGRAM}"
		go build -o "$bin" "${INPUT_PROGRAM}" || return
	else
		local v=${INPUT_VERSION:-${ACTION_REF:-}}
		case "$v" in
		latest | upgrade | patch) die 2 "version $v is not a pin: give a tag (vX.Y.Z) or a commit (docs/releasing.md)" ;;
		*[[:space:]@]*) die 2 "version \"$v\": want a tag (vX.Y.Z), a commit or a branch" ;;
		esac
		mkdir -p "$(dirname "$bin")"
		if [ -n "$v" ]; then
			echo "go install $module/cmd/lockbench@$v"
			GOBIN=$(dirname "$bin") go install "$module/cmd/lockbench@$v" || return
		elif [ -f "$action_path/go.mod" ] && [ -d "$action_path/cmd/lockbench" ]; then
			# No version and no ref (a local action, uses: ./): the
			# Action's own checkout is the lockbench to build.
			echo "no version and no Action ref: building the Action's own checkout ($action_path)"
			(cd "$action_path" && go build -o "$bin" ./cmd/lockbench) || return
		else
			die 2 "no version to install: set the version input (vX.Y.Z)"
		fi
	fi
	"$bin" version || return
	output lockbench "$bin"
	[ -z "${GITHUB_PATH:-}" ] || dirname "$bin" >>"$GITHUB_PATH"
}

# result_name FILE: the result file's name for a scenario file: its path,
# extension dropped, / as - (lockbench/flash-sale.yaml: lockbench-flash-sale).
result_name() {
	local n=${1#./}
	n=${n%.yaml}
	n=${n%.yml}
	n=${n//\//-}
	printf '%s' "${n//[^A-Za-z0-9._-]/-}"
}

# fetch_artifact DIR: the baseline artifact of the newest run on the
# default branch that uploaded one, into DIR. Prints where it came from;
# returns 1 when there is none (yet) or it cannot be fetched.
fetch_artifact() {
	local name=${INPUT_BASELINE_ARTIFACT:-lockbench-baseline} branch=${DEFAULT_BRANCH:-main} repo=${GITHUB_REPOSITORY:-}
	command -v gh >/dev/null 2>&1 || {
		echo "::warning::lockbench action: gh is not installed: no baseline artifact" >&2
		return 1
	}
	[ -n "$repo" ] || {
		echo "::warning::lockbench action: GITHUB_REPOSITORY is not set: no baseline artifact" >&2
		return 1
	}
	local id
	id=$(gh api "repos/$repo/actions/artifacts?name=$name&per_page=100" \
		--jq "[.artifacts[] | select(.expired | not) | select(.workflow_run.head_branch == \"$branch\")] | sort_by(.created_at) | last | .workflow_run.id // empty") || {
		echo "::warning::lockbench action: cannot list the artifacts of $repo (the token needs actions: read)" >&2
		return 1
	}
	if [ -z "$id" ]; then
		echo "no artifact $name from a run on $branch yet: nothing to compare with (this run's result becomes the baseline once it passes on $branch)" >&2
		return 1
	fi
	gh run download "$id" --repo "$repo" --name "$name" --dir "$1" || {
		echo "::warning::lockbench action: cannot download artifact $name of run $id" >&2
		return 1
	}
	echo "artifact $name of run $id ($branch)"
}

run_all() {
	local bin
	bin=$(binary)
	[ -x "$bin" ] || die 2 "no lockbench at $bin: run the setup step first (or set LOCKBENCH_BIN)"
	[ -n "${INPUT_SCENARIOS:-}" ] || die 2 "no scenario files: set the scenarios input"
	local repeat=${INPUT_REPEAT:-4}
	[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die 2 "repeat \"$repeat\": want a positive integer"
	[ "$repeat" -ge 4 ] || echo "::warning::lockbench action: repeat $repeat: compare tests a change for significance from 4 runs a side; with fewer it judges on the threshold alone" >&2

	# The scenario files: each word a file or a glob that must match.
	local files=() words w m seen=" "
	shopt -s nullglob globstar
	set -f
	# shellcheck disable=SC2206 # split on blanks, no globbing yet
	words=(${INPUT_SCENARIOS})
	set +f
	for w in "${words[@]}"; do
		# shellcheck disable=SC2206 # the glob expands here
		m=($w)
		[ ${#m[@]} -gt 0 ] || die 2 "no file matches $w"
		for f in "${m[@]}"; do
			[ -f "$f" ] || die 2 "scenario file $f: no such file"
			case "$seen" in *" $f "*) continue ;; esac
			seen="$seen$f "
			files+=("$f")
		done
	done
	local names=" "
	for f in "${files[@]}"; do
		n=$(result_name "$f")
		case "$names" in *" $n "*) die 2 "two scenario files give the result name $n.json: rename one" ;; esac
		names="$names$n "
	done

	local dir=${INPUT_RESULTS_DIR:-lockbench-results}
	mkdir -p "$dir" || die 2 "cannot create $dir"
	dir=$(cd "$dir" && pwd)
	output results-dir "$dir"

	local fail_on=(--fail-on safety) line
	while IFS= read -r line; do
		line=${line#"${line%%[![:space:]]*}"}
		line=${line%"${line##*[![:space:]]}"}
		[ -z "$line" ] || fail_on+=(--fail-on "$line")
	done <<<"${INPUT_FAIL_ON:-}"
	local extra=()
	set -f
	# shellcheck disable=SC2206 # blank-separated flags
	extra=(${INPUT_RUN_ARGS:-})
	set +f

	local summary=${GITHUB_STEP_SUMMARY:-/dev/null} run_code=0 results=() code out
	for f in "${files[@]}"; do
		out="$dir/$(result_name "$f").json"
		local args=(run -f "$f" --repeat "$repeat" "${fail_on[@]}" "${extra[@]}" --out "$out" --force)
		echo "::group::lockbench ${args[*]}"
		"$bin" "${args[@]}"
		code=$?
		echo "::endgroup::"
		echo "lockbench run -f $f: exit $code"
		[ "$run_code" != 0 ] || run_code=$code
		if [ -f "$out" ]; then
			results+=("$out")
			[ "$summary" = /dev/null ] || {
				echo "### lockbench run -f $f (exit $code)"
				echo
				"$bin" show "$out" --format markdown
				echo
			} >>"$summary" 2>/dev/null
		fi
	done
	output result-files "$(printf '%s\n' "${results[@]}")"
	output run-exit-code "$run_code"

	# The baseline: a directory with NAME.json per scenario file, or one file.
	local base=${INPUT_BASELINE:-artifact} base_dir="" base_file="" from=""
	case "$base" in
	none) from=none ;;
	artifact)
		base_dir="$work/baseline"
		rm -rf "$base_dir" && mkdir -p "$base_dir"
		from=$(fetch_artifact "$base_dir") || {
			base_dir=""
			from=none
		}
		;;
	*)
		if [ -d "$base" ]; then
			base_dir=$base
		elif [ -f "$base" ]; then
			[ ${#files[@]} = 1 ] || die 2 "baseline $base is one file for ${#files[@]} scenario files: give a directory holding NAME.json for each (${names# })"
			base_file=$base
		else
			die 2 "baseline $base: no such file or directory"
		fi
		from=$base
		;;
	esac
	output baseline "$from"
	if [ "$from" = none ] && [ "$base" != none ] && [ "${INPUT_REQUIRE_BASELINE:-false}" = true ]; then
		die 2 "no baseline found, and require-baseline is true"
	fi

	local cmp=() compare_code="" b
	[ -z "${INPUT_THRESHOLD-25%}" ] || cmp+=(--threshold "${INPUT_THRESHOLD-25%}")
	[ -z "${INPUT_P99_THRESHOLD-150%}" ] || cmp+=(--p99-threshold "${INPUT_P99_THRESHOLD-150%}")
	[ -z "${INPUT_COST_THRESHOLD:-}" ] || cmp+=(--cost-threshold "$INPUT_COST_THRESHOLD")
	[ -z "${INPUT_CPU_THRESHOLD-100%}" ] || cmp+=(--cpu-threshold "${INPUT_CPU_THRESHOLD-100%}")
	[ -z "${INPUT_RSS_THRESHOLD:-}" ] || cmp+=(--rss-threshold "$INPUT_RSS_THRESHOLD")
	[ -z "${INPUT_NORMALIZE:-}" ] || cmp+=(--normalize "$INPUT_NORMALIZE")
	set -f
	# shellcheck disable=SC2206 # blank-separated flags
	cmp+=(${INPUT_COMPARE_ARGS:-})
	set +f
	if [ "$from" != none ]; then
		echo "baseline: $from"
		for out in "${results[@]}"; do
			b=${base_file:-$base_dir/$(basename "$out")}
			if [ ! -f "$b" ]; then
				[ "${INPUT_REQUIRE_BASELINE:-false}" != true ] || die 2 "the baseline has no $(basename "$out")"
				echo "::warning::lockbench action: the baseline has no $(basename "$out") (a new scenario file?): not compared" >&2
				continue
			fi
			echo "lockbench compare $b $out ${cmp[*]}"
			"$bin" compare "$b" "$out" "${cmp[@]}" | tee "$work/compare.txt"
			code=${PIPESTATUS[0]}
			echo "lockbench compare: exit $code"
			[ -n "$compare_code" ] && [ "$compare_code" != 0 ] || compare_code=$code
			[ "$summary" = /dev/null ] || {
				echo "### lockbench compare $(basename "$out") (exit $code)"
				echo
				echo '```'
				cat "$work/compare.txt"
				echo '```'
				echo
			} >>"$summary" 2>/dev/null
		done
	fi
	output compare-exit-code "$compare_code"

	[ "$run_code" = 0 ] || exit "$run_code"
	[ -z "$compare_code" ] || exit "$compare_code"
	exit 0
}

mkdir -p "$work" || die 2 "cannot create $work"
case "${1:-all}" in
setup) setup ;;
run) run_all ;;
all)
	setup || exit
	run_all
	;;
*) die 2 "unknown step ${1}: want setup, run or nothing (both)" ;;
esac
