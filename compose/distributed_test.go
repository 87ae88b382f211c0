package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/scripttest"
)

// segmentServices are distributed.yaml's lockbench services by segment
// (1-based), with N, the count every --segment i/N names.
func segmentServices(t *testing.T, p *types.Project) (map[int]types.ServiceConfig, int) {
	t.Helper()
	byIndex := map[int]types.ServiceConfig{}
	n := 0
	for _, s := range p.Services {
		if !strings.HasPrefix(s.Name, "lockbench-") || s.Name == "lockbench-merge" {
			continue
		}
		seg := arg(s.Command, "--segment")
		is, ns, ok := strings.Cut(seg, "/")
		i, err1 := strconv.Atoi(is)
		c, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("%s: --segment %q, want i/N", s.Name, seg)
		}
		if s.Name != "lockbench-"+is {
			t.Errorf("%s runs segment %s", s.Name, seg)
		}
		if n != 0 && c != n {
			t.Errorf("%s: --segment %s, the others say /%d", s.Name, seg, n)
		}
		n = c
		if _, dup := byIndex[i]; dup {
			t.Errorf("segment %d twice", i)
		}
		byIndex[i] = s
	}
	if n == 0 || len(byIndex) != n {
		t.Fatalf("%d segment services for N=%d", len(byIndex), n)
	}
	for i := 1; i <= n; i++ {
		if _, ok := byIndex[i]; !ok {
			t.Errorf("no service runs segment %d/%d", i, n)
		}
	}
	return byIndex, n
}

// TestDistributedSegments checks compose/distributed.yaml: N services run
// segments 1/N..N/N of one plan (their command lines differ only in
// --segment and their file names), each against the password-protected
// redis service once it is healthy, and each command line is a valid
// lockbench run line by lockbench's own command tree and validation
// (cli.CheckArgs, /results a temporary directory).
//
// It needs the flags of the segments and histories work (--segment,
// --run-id, --barrier-timeout, --history): before those are merged it
// fails with "unknown flag: --segment".
func TestDistributedSegments(t *testing.T) {
	p, err := load(t, "distributed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	redis, err := p.GetService("redis")
	if err != nil {
		t.Fatal(err)
	}
	password := arg(redis.Command, "--requirepass")
	if password == "" || len(redis.Ports) > 0 {
		t.Errorf("redis: command %q ports %v, want --requirepass and no published port", redis.Command, redis.Ports)
	}
	segs, n := segmentServices(t, p)
	results := t.TempDir()
	t.Setenv("LOCKBENCH_PASSWORD", password)
	var plan []string
	for i := 1; i <= n; i++ {
		s := segs[i]
		if pw := s.Environment["LOCKBENCH_PASSWORD"]; pw == nil || *pw != password {
			t.Errorf("%s: LOCKBENCH_PASSWORD is not redis's --requirepass", s.Name)
		}
		if d, ok := s.DependsOn["redis"]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s: does not wait for redis to be healthy", s.Name)
		}
		if s.Image != "lockbench:dev" || s.Build == nil || s.Build.Dockerfile != "Dockerfile" {
			t.Errorf("%s: image %q build %+v, want lockbench:dev from the repository's Dockerfile", s.Name, s.Image, s.Build)
		}
		if slices.Contains(s.Command, "--password") {
			t.Errorf("%s: the password is on the command line", s.Name)
		}
		args := slices.Clone([]string(s.Command))
		if args[0] != "run" {
			t.Fatalf("%s: command %q, want run ...", s.Name, args)
		}
		// The plan: the command without --segment and the file names.
		var same []string
		for j := 0; j < len(args); j++ {
			switch args[j] {
			case "--segment", "--out", "--history":
				j++
				continue
			}
			same = append(same, args[j])
		}
		if plan == nil {
			plan = same
		} else if !slices.Equal(same, plan) {
			t.Errorf("%s runs %q, segment 1 runs %q: the segments must run one plan", s.Name, same, plan)
		}
		for j, a := range args {
			if strings.HasPrefix(a, "/results/") {
				args[j] = filepath.Join(results, strings.TrimPrefix(a, "/results/"))
			}
		}
		if want := filepath.Join(results, "compose", fmt.Sprintf("seg-%d.json", i)); arg(s.Command, "--out") == "" || args[slices.Index(args, "--out")+1] != want {
			t.Errorf("%s: --out %q, want %s", s.Name, arg(s.Command, "--out"), "/results/compose/"+filepath.Base(want))
		}
		if err := cli.CheckArgs(args); err != nil {
			t.Errorf("%s: lockbench %s: %v", s.Name, strings.Join(args, " "), err)
		}
	}
	merge, err := p.GetService("lockbench-merge")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		name := "lockbench-" + strconv.Itoa(i)
		if d, ok := merge.DependsOn[name]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("lockbench-merge does not wait for %s to complete successfully", name)
		}
	}
	if seg := merge.Environment["SEGMENTS"]; seg == nil || *seg != strconv.Itoa(n) {
		t.Errorf("lockbench-merge: SEGMENTS %v, want %d", seg, n)
	}
}

// TestDistributedMergeScript runs lockbench-merge's script (as compose
// hands it to sh -c, $$ unescaped) with /results a temporary directory
// and lockbench a stub recording its arguments: with the N segment files
// it runs a valid lockbench merge over exactly those; with one missing
// it fails without running lockbench.
func TestDistributedMergeScript(t *testing.T) {
	p, err := load(t, "distributed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	merge, err := p.GetService("lockbench-merge")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(merge.Entrypoint, types.ShellCommand{"sh", "-c"}) || len(merge.Command) != 1 {
		t.Fatalf("lockbench-merge: entrypoint %q command %q, want sh -c SCRIPT", merge.Entrypoint, merge.Command)
	}
	n, _ := strconv.Atoi(*merge.Environment["SEGMENTS"])
	for _, missing := range []bool{false, true} {
		tmp := t.TempDir()
		results := filepath.Join(tmp, "results")
		dir := filepath.Join(results, "compose")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := 1; i <= n; i++ {
			f := filepath.Join(dir, fmt.Sprintf("seg-%d.json", i))
			want = append(want, f)
			if missing && i == n {
				continue
			}
			if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := scripttest.Run(t, strings.ReplaceAll(merge.Command[0], "/results", results), []string{"SEGMENTS=" + strconv.Itoa(n)})
		if missing {
			if r.Err == nil || !strings.Contains(r.Output, fmt.Sprintf("%d segment files", n-1)) {
				t.Errorf("with %d of %d files: err %v, output %q; want a failure naming the count", n-1, n, r.Err, r.Output)
			}
			if r.Args != nil {
				t.Error("lockbench merge ran over an incomplete set")
			}
			continue
		}
		if r.Err != nil || r.Args == nil {
			t.Fatalf("merge script: %v (ran lockbench: %v)\n%s", r.Err, r.Args != nil, r.Output)
		}
		args := r.Args
		if args[0] != "merge" || !slices.Equal(args[1:1+n], want) {
			t.Errorf("lockbench %q, want merge over %q", args, want)
		}
		if err := cli.CheckArgs(args); err != nil {
			t.Errorf("lockbench %s: %v", strings.Join(args, " "), err)
		}
	}
}
