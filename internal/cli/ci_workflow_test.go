package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// shellWords splits a command line as a POSIX shell would for the simple
// lines of a workflow: words separated by blanks, '...' and "..." quoting.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			if strings.ContainsRune("<>|;&$`", r) {
				t.Fatalf("unquoted shell character %q in %q", r, line)
			}
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// The GitHub Actions workflow in examples/ci is valid YAML whose lockbench
// command lines are valid: each names a lockbench command, its flags parse,
// a run's flags pass validate, and compare gets its two files.
func TestCIWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ci", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			for _, line := range strings.Split(strings.ReplaceAll(st.Run, "\\\n", " "), "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "lockbench ") {
					continue
				}
				args := shellWords(t, line)[1:]
				root := newRoot()
				cmd, rest, err := root.Find(args)
				if err != nil || cmd == root {
					t.Fatalf("%q: no lockbench command: %v", line, err)
				}
				seen[cmd.Name()]++
				if cmd.Name() == "run" {
					rc, f := newRunCmdFlags()
					if err := rc.ParseFlags(rest); err != nil {
						t.Fatalf("%q: %v", line, err)
					}
					f.out = filepath.Join(t.TempDir(), filepath.Base(f.out))
					if _, err := validate(f); err != nil {
						t.Fatalf("%q: %v", line, err)
					}
					if len(f.failOn) == 0 || f.repeat < 4 {
						t.Fatalf("%q: the gate needs --fail-on and --repeat 4 or more", line)
					}
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
			}
		}
	}
	if seen["run"] != 1 || seen["compare"] != 1 || seen["version"] != 1 {
		t.Fatalf("lockbench commands in the workflow: %v, want one run, one compare, one version", seen)
	}
}
