package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionStep runs one step of the GitHub Action's script
// (scripts/action-run.sh setup|run) in dir with env standing in for the
// Action's inputs, as action.yml passes them, and the GitHub files
// (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH) in a temporary
// directory. It returns the exit code, stdout and stderr together, and
// the step's outputs.
func actionStep(t *testing.T, dir, step string, env ...string) (int, string, map[string]string) {
	t.Helper()
	gh := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(actionRoot(t), "scripts", "action-run.sh"), step)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		// The test may itself run in GitHub Actions: none of its GITHUB_*
		// files or INPUT_* values reach the script.
		if !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "INPUT_") && !strings.HasPrefix(kv, "RUNNER_") &&
			!strings.HasPrefix(kv, "LOCKBENCH_BIN=") && !strings.HasPrefix(kv, "LOCKBENCH_ACTION_DIR=") && !strings.HasPrefix(kv, "ACTION_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+filepath.Join(gh, "output"), "GITHUB_STEP_SUMMARY="+filepath.Join(gh, "summary"),
		"GITHUB_PATH="+filepath.Join(gh, "path"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	b, _ := os.ReadFile(filepath.Join(gh, "output"))
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		outputs[name] = strings.Join(val, "\n")
	}
	if s, err := os.ReadFile(filepath.Join(gh, "summary")); err == nil {
		outputs["(summary)"] = string(s)
	}
	return code, string(out), outputs
}

func actionRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The sample repository's test inputs: the committed baseline
// examples/action-sample/testdata/baseline.json was made with these, from
// examples/action-sample, by
//
//	INPUT_PROGRAM=. INPUT_SCENARIOS='lockbench/*.yaml' INPUT_BASELINE=none INPUT_REPEAT=2 \
//	  INPUT_RUN_ARGS='--driver rueidis --stock 200' ../../scripts/action-run.sh
//
// (compare matches scenarios on their parameters: change both together).
// Short runs (about 0.4 s each) and thresholds (10x, on every figure compare
// judges) no loaded machine reaches:
// the test checks the steps, not this machine's speed.
var actionTestInputs = []string{"INPUT_SCENARIOS=lockbench/*.yaml", "INPUT_REPEAT=2", "INPUT_RUN_ARGS=--driver rueidis --stock 200",
	"INPUT_THRESHOLD=1000%", "INPUT_P99_THRESHOLD=1000%", "INPUT_COST_THRESHOLD=1000%", "INPUT_CPU_THRESHOLD=1000%", "INPUT_RSS_THRESHOLD=1000%"}

// TestAction runs the GitHub Action's steps locally on the sample
// repository examples/action-sample: setup builds its program (lockbench
// with the lock "inhouse"), run runs its scenario file with the sample
// workflow's fail-on and normalize and compares the result with the
// committed baseline; a threshold that cannot hold exits 3 (the result
// still compared, here with the baseline artifact a stand-in gh fetches).
func TestAction(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	sample := filepath.Join(actionRoot(t), "examples", "action-sample")
	wf := sampleWorkflow(t)
	work := t.TempDir()
	common := append([]string{"LOCKBENCH_ACTION_DIR=" + work}, actionTestInputs...)

	code, out, o := actionStep(t, sample, "setup", append(common, "INPUT_PROGRAM="+wf["program"])...)
	if code != 0 || !strings.Contains(out, "go build -o ") || !strings.Contains(out, "\nlockbench ") {
		t.Fatalf("setup: exit %d, want 0 after go build and lockbench version:\n%s", code, out)
	}
	if bin := filepath.Join(work, "bin", "lockbench"); o["lockbench"] != bin {
		t.Fatalf("setup: output lockbench %q, want %s", o["lockbench"], bin)
	}

	t.Run("committed baseline", func(t *testing.T) {
		results := t.TempDir()
		code, out, o := actionStep(t, sample, "run", append(common, "INPUT_RESULTS_DIR="+results, "INPUT_BASELINE=testdata/baseline.json",
			"INPUT_FAIL_ON="+wf["fail-on"], "INPUT_NORMALIZE="+wf["normalize"])...)
		if code != 0 {
			t.Fatalf("run: exit %d, want 0:\n%s", code, out)
		}
		want := map[string]string{"results-dir": results, "result-files": filepath.Join(results, "lockbench-flash-sale.json"),
			"run-exit-code": "0", "compare-exit-code": "0", "baseline": "testdata/baseline.json"}
		for k, v := range want {
			if o[k] != v {
				t.Errorf("output %s = %q, want %q", k, o[k], v)
			}
		}
		checkActionResult(t, o["result-files"], 2)
		for _, w := range []string{"lockbench run -f lockbench/flash-sale.yaml: exit 0", "lockbench compare testdata/baseline.json " + o["result-files"],
			"inhouse/rueidis/flash-sale/backoff", "no regression in 2 scenarios", "lockbench compare: exit 0"} {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
		if s := o["(summary)"]; !strings.Contains(s, "| inhouse ") || !strings.Contains(s, "### lockbench compare lockbench-flash-sale.json (exit 0)") {
			t.Errorf("job summary lacks the result table or the comparison:\n%s", s)
		}
	})

	t.Run("failed threshold, artifact baseline", func(t *testing.T) {
		// A stand-in gh: gh api lists one artifact's run (42), gh run
		// download copies the committed baseline as the artifact's file.
		fake, log := t.TempDir(), filepath.Join(t.TempDir(), "gh.log")
		writeScript(t, filepath.Join(fake, "gh"), `#!/bin/sh
echo "$*" >>"$FAKE_GH_LOG"
case "$1" in
api) echo 42 ;;
run) while [ $# -gt 0 ]; do [ "$1" = --dir ] && cp testdata/baseline.json "$2/lockbench-flash-sale.json"; shift; done ;;
esac
`)
		results := t.TempDir()
		code, out, o := actionStep(t, sample, "run", append(common, "INPUT_RESULTS_DIR="+results, "INPUT_FAIL_ON=ops_per_sec > 1e9", "INPUT_NORMALIZE="+wf["normalize"],
			"PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_GH_LOG="+log, "GITHUB_REPOSITORY=acme/locks", "DEFAULT_BRANCH=main")...)
		if code != exitThresholds {
			t.Fatalf("run: exit %d, want 3 (threshold failed):\n%s", code, out)
		}
		want := map[string]string{"run-exit-code": "3", "compare-exit-code": "0", "baseline": "artifact lockbench-baseline of run 42 (main)"}
		for k, v := range want {
			if o[k] != v {
				t.Errorf("output %s = %q, want %q", k, o[k], v)
			}
		}
		checkActionResult(t, filepath.Join(results, "lockbench-flash-sale.json"), 2)
		if !strings.Contains(out, "ops_per_sec > 1e9") || !strings.Contains(out, "FAIL") || !strings.Contains(out, "no regression in 2 scenarios") {
			t.Errorf("output lacks the failed threshold or the comparison:\n%s", out)
		}
		b, _ := os.ReadFile(log)
		if calls := string(b); !strings.Contains(calls, "repos/acme/locks/actions/artifacts?name=lockbench-baseline") ||
			!strings.Contains(calls, `head_branch == "main"`) || !strings.Contains(calls, "run download 42 --repo acme/locks --name lockbench-baseline --dir ") {
			t.Errorf("gh calls:\n%s", calls)
		}
	})
}

// checkActionResult checks that the result file at path holds the sample
// scenario file's scenarios, inhouse's among them, each run repeat times.
func checkActionResult(t *testing.T, path string, repeat int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scenarios []struct {
			Strategy, Driver, Workload string
			Ops                        int64
			Samples                    []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Scenarios {
		got = append(got, s.Strategy+"/"+s.Driver+"/"+s.Workload)
		if s.Ops == 0 || len(s.Samples) != repeat {
			t.Errorf("%s: %s/%s: %d ops, %d samples; want ops and %d samples", path, s.Strategy, s.Driver, s.Ops, len(s.Samples), repeat)
		}
	}
	if want := []string{"inhouse/rueidis/flash-sale", "atomic/rueidis/flash-sale"}; !slices.Equal(got, want) {
		t.Fatalf("%s: scenarios %v, want %v", path, got, want)
	}
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// sampleWorkflow returns the with: inputs of the sample workflow's step
// that uses the Action, and checks that the step pins a release tag.
func sampleWorkflow(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(actionRoot(t), "examples", "action-sample", ".github", "workflows", "lockbench.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if repo, ref, _ := strings.Cut(s.Uses, "@"); repo == "lockbench/lockbench" {
				if !releaseTag.MatchString(ref) {
					t.Fatalf("the sample workflow uses lockbench/lockbench@%s, want a release tag vX.Y.Z", ref)
				}
				return s.With
			}
		}
	}
	t.Fatal("the sample workflow has no step that uses lockbench/lockbench")
	return nil
}

var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// The setup step installs the lockbench the version input names, else
// the Action's own ref (never @latest), with go install; a stand-in go
// records the command and installs a stand-in lockbench.
func TestActionInstallsPinnedVersion(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	fake := t.TempDir()
	writeScript(t, filepath.Join(fake, "go"), `#!/bin/sh
echo "go $*" >>"$FAKE_GO_LOG"
v=${2##*@}
printf '#!/bin/sh\necho "lockbench %s commit unknown go1.26.8"\n' "$v" >"$GOBIN/lockbench"
chmod +x "$GOBIN/lockbench"
`)
	path := "PATH=" + fake + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, c := range []struct {
		env  []string
		code int
		want string // in the go log, or in the output when code != 0
	}{
		{[]string{"ACTION_REF=v1.2.3"}, 0, "go install github.com/lockbench/lockbench/cmd/lockbench@v1.2.3\n"},
		{[]string{"ACTION_REF=v1.2.3", "INPUT_VERSION=v1.4.0"}, 0, "go install github.com/lockbench/lockbench/cmd/lockbench@v1.4.0\n"},
		{[]string{"ACTION_REF=0123456789abcdef0123456789abcdef01234567"}, 0, "@0123456789abcdef0123456789abcdef01234567\n"},
		{[]string{"INPUT_VERSION=latest", "ACTION_REF=v1.2.3"}, 2, "version latest is not a pin"},
		{[]string{"ACTION_PATH=" + t.TempDir()}, 2, "no version to install"},
	} {
		work, log := t.TempDir(), filepath.Join(t.TempDir(), "go.log")
		code, out, o := actionStep(t, t.TempDir(), "setup", append(c.env, path, "FAKE_GO_LOG="+log, "LOCKBENCH_ACTION_DIR="+work)...)
		b, _ := os.ReadFile(log)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d:\n%s", c.env, code, c.code, out)
			continue
		}
		if c.code != 0 {
			if !strings.Contains(out, c.want) || len(b) != 0 {
				t.Errorf("%v: output lacks %q, or go ran (%q):\n%s", c.env, c.want, b, out)
			}
			continue
		}
		if !strings.Contains(string(b), c.want) || strings.Contains(string(b), "@latest") {
			t.Errorf("%v: go ran %q, want %q", c.env, b, c.want)
		}
		if o["lockbench"] != filepath.Join(work, "bin", "lockbench") || !strings.Contains(out, " commit unknown go1.26.8") {
			t.Errorf("%v: output lockbench %q; the installed lockbench's version not printed:\n%s", c.env, o["lockbench"], out)
		}
	}
}

// action.yml and its script agree: every input is used by a step, every
// INPUT_* variable the script reads is one action.yml sets, each input
// and output is in docs/action.md's tables, and the examples pin a
// version (no @latest).
func TestActionMetadata(t *testing.T) {
	root := actionRoot(t)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	text, script, doc := read("action.yml"), read("scripts/action-run.sh"), read("docs/action.md")
	var action struct {
		Inputs  map[string]struct{ Description, Default *string }
		Outputs map[string]struct{ Description, Value string }
		Runs    struct {
			Using string
			Steps []struct {
				Run string
				Env map[string]string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(text), &action); err != nil {
		t.Fatal(err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", action.Runs.Using)
	}
	_, steps, _ := strings.Cut(text, "\nruns:")
	set := map[string]bool{}
	input := regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`)
	for _, s := range action.Runs.Steps {
		for k, v := range s.Env {
			set[k] = true
			if !strings.Contains(script, k) {
				t.Errorf("action.yml sets %s, which scripts/action-run.sh does not read", k)
			}
			// The script, run locally, takes the input's default when
			// the variable is unset.
			m := input.FindStringSubmatch(v)
			if m == nil {
				continue
			}
			in, ok := action.Inputs[m[1]]
			if !ok || in.Default == nil {
				continue
			}
			for _, d := range regexp.MustCompile(`\$\{`+k+`:?-([^}]*)\}`).FindAllStringSubmatch(script, -1) {
				if d[1] != *in.Default && !strings.HasPrefix(d[1], "$") { // $: another variable's value
					t.Errorf("scripts/action-run.sh defaults %s to %q, action.yml input %s to %q", k, d[1], m[1], *in.Default)
				}
			}
		}
	}
	for name, in := range action.Inputs {
		if in.Description == nil || (in.Default == nil && name != "scenarios") {
			t.Errorf("input %s: want a description and a default", name)
		}
		if !strings.Contains(steps, "inputs."+name+" ") && !strings.Contains(steps, "inputs."+name+"\n") && !strings.Contains(steps, "inputs."+name+" }}") {
			t.Errorf("input %s is used by no step", name)
		}
		if !strings.Contains(doc, "| `"+name+"` |") {
			t.Errorf("docs/action.md does not list input %s", name)
		}
	}
	for name := range action.Outputs {
		if !strings.Contains(doc, "| `"+name+"` |") {
			t.Errorf("docs/action.md does not list output %s", name)
		}
	}
	for _, v := range regexp.MustCompile(`\bINPUT_[A-Z0-9_]+`).FindAllString(script, -1) {
		if !set[v] {
			t.Errorf("scripts/action-run.sh reads %s, which action.yml does not set", v)
		}
	}
	for _, f := range []string{"examples/ci/github-actions.yml", "examples/action-sample/.github/workflows/lockbench.yml", "docs/action.md", "action.yml"} {
		if strings.Contains(read(f), "@latest") {
			t.Errorf("%s installs @latest: pin a version", f)
		}
	}
}
