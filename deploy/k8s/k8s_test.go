package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/scripttest"
)

// files are the manifests here and what each holds; kustomization.yaml is
// checked on its own (kustomization).
var files = map[string][]string{
	"pvc.yaml":                  {"PersistentVolumeClaim"},
	"job.yaml":                  {"Job"},
	"merge-job.yaml":            {"Job"},
	"redis-secret.example.yaml": {"Secret"},
	"results-pod.yaml":          {"Pod"},
}

// object is one decoded manifest.
type object struct {
	kind, name string
	job        *batchv1.Job
	pvc        *corev1.PersistentVolumeClaim
	secret     *corev1.Secret
	pod        *corev1.Pod
	configMap  *corev1.ConfigMap
}

// decode splits a YAML stream into documents and decodes each strictly
// (sigs.k8s.io/yaml UnmarshalStrict: an unknown or duplicate field is an
// error) into the Kubernetes API type its apiVersion and kind name.
func decode(t *testing.T, name string, b []byte) []object {
	t.Helper()
	var out []object
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("%s document %d: %v", name, i+1, err)
		}
		var o object
		var into any
		switch tm.APIVersion + " " + tm.Kind {
		case "batch/v1 Job":
			o.job = &batchv1.Job{}
			into = o.job
		case "v1 PersistentVolumeClaim":
			o.pvc = &corev1.PersistentVolumeClaim{}
			into = o.pvc
		case "v1 Secret":
			o.secret = &corev1.Secret{}
			into = o.secret
		case "v1 Pod":
			o.pod = &corev1.Pod{}
			into = o.pod
		case "v1 ConfigMap":
			o.configMap = &corev1.ConfigMap{}
			into = o.configMap
		default:
			t.Fatalf("%s document %d: apiVersion %q kind %q is not one this test knows", name, i+1, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s document %d (%s): %v", name, i+1, tm.Kind, err)
		}
		o.kind = tm.Kind
		switch {
		case o.job != nil:
			o.name = o.job.Name
		case o.pvc != nil:
			o.name = o.pvc.Name
		case o.secret != nil:
			o.name = o.secret.Name
		case o.pod != nil:
			o.name = o.pod.Name
		case o.configMap != nil:
			o.name = o.configMap.Name
		}
		out = append(out, o)
	}
	return out
}

// kustomization is the part of kustomization.yaml's schema
// (kustomize.config.k8s.io/v1beta1 Kustomization) these files use, decoded
// strictly: a field outside it fails the test, to be added here.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
	} `json:"labels"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name     string   `json:"name"`
		Literals []string `json:"literals"`
	} `json:"configMapGenerator"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
	Replacements []struct {
		Source struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			FieldPath string `json:"fieldPath"`
		} `json:"source"`
		Targets []struct {
			Select struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"select"`
			FieldPaths []string `json:"fieldPaths"`
		} `json:"targets"`
	} `json:"replacements"`
}

// setup is the decoded folder: the kustomization, its ConfigMap literals
// and the manifests by file.
type setup struct {
	k       kustomization
	config  map[string]string // the lockbench ConfigMap's literals
	objects map[string][]object
}

func load(t *testing.T) setup {
	t.Helper()
	var s setup
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &s.k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if s.k.APIVersion != "kustomize.config.k8s.io/v1beta1" || s.k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml: apiVersion %q kind %q", s.k.APIVersion, s.k.Kind)
	}
	if len(s.k.ConfigMapGenerator) != 1 || s.k.ConfigMapGenerator[0].Name != "lockbench" {
		t.Fatalf("kustomization.yaml: want one configMapGenerator, lockbench, got %+v", s.k.ConfigMapGenerator)
	}
	s.config = map[string]string{}
	for _, l := range s.k.ConfigMapGenerator[0].Literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("kustomization.yaml: literal %q is not KEY=VALUE", l)
		}
		s.config[k] = v
	}
	names, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for f := range files {
		want = append(want, f)
	}
	want = append(want, "kustomization.yaml")
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("manifests %v, want exactly %v (add a new file to this test)", names, want)
	}
	s.objects = map[string][]object{}
	for f, kinds := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs := decode(t, f, b)
		var got []string
		for _, o := range objs {
			got = append(got, o.kind)
		}
		if !slices.Equal(got, kinds) {
			t.Errorf("%s holds %v, want %v", f, got, kinds)
		}
		s.objects[f] = objs
	}
	return s
}

func (s setup) job(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	if len(s.objects[file]) != 1 || s.objects[file][0].job == nil {
		t.Fatalf("%s: want one Job", file)
	}
	return s.objects[file][0].job
}

// segments is the ConfigMap's SEGMENTS, the run's N.
func (s setup) segments(t *testing.T) int {
	t.Helper()
	n, err := strconv.Atoi(s.config["SEGMENTS"])
	if err != nil || n < 1 {
		t.Fatalf("kustomization.yaml: SEGMENTS=%q, want a count >= 1", s.config["SEGMENTS"])
	}
	return n
}

func TestManifestsDecodeStrictly(t *testing.T) {
	s := load(t)
	var resources []string
	for f := range files {
		if !strings.Contains(f, "example") && f != "results-pod.yaml" {
			resources = append(resources, f)
		}
	}
	got := slices.Clone(s.k.Resources)
	slices.Sort(got)
	slices.Sort(resources)
	if !slices.Equal(got, resources) {
		t.Errorf("kustomization resources %v, want %v (the Secret template and the results pod stay out)", got, resources)
	}
	for _, key := range []string{"SEGMENTS", "REDIS_ADDR", "RUN_ID"} {
		if s.config[key] == "" {
			t.Errorf("kustomization.yaml: the lockbench ConfigMap has no %s", key)
		}
	}
	if len(s.k.Images) != 1 || s.k.Images[0].Name != "lockbench" {
		t.Errorf("kustomization images %+v, want one, named lockbench (the image of the Jobs)", s.k.Images)
	}
	pvc := s.objects["pvc.yaml"][0].pvc
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
		t.Errorf("PVC access modes %v, want ReadWriteMany (the pods may run on different nodes)", pvc.Spec.AccessModes)
	}
	secret := s.objects["redis-secret.example.yaml"][0].secret
	if _, ok := secret.StringData["password"]; !ok || secret.Name != "lockbench-redis" {
		t.Errorf("Secret template %s with keys %v, want lockbench-redis with password", secret.Name, secret.StringData)
	}
	user := dockerfileUser(t)
	specs := map[string]corev1.PodSpec{
		"job.yaml":         s.job(t, "job.yaml").Spec.Template.Spec,
		"merge-job.yaml":   s.job(t, "merge-job.yaml").Spec.Template.Spec,
		"results-pod.yaml": s.objects["results-pod.yaml"][0].pod.Spec,
	}
	for f, spec := range specs {
		if spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never", f, spec.RestartPolicy)
		}
		sc := spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != user ||
			sc.FSGroup == nil || *sc.FSGroup != user {
			t.Errorf("%s: pod securityContext %+v, want runAsNonRoot, runAsUser and fsGroup %d (the Dockerfile's USER)", f, sc, user)
		}
		if len(spec.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", f, len(spec.Containers))
		}
		c := spec.Containers[0]
		if f != "results-pod.yaml" && c.Image != s.k.Images[0].Name {
			t.Errorf("%s: image %q, want %q (kustomization images sets it)", f, c.Image, s.k.Images[0].Name)
		}
		claims := 0
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims++
				if v.PersistentVolumeClaim.ClaimName != pvc.Name {
					t.Errorf("%s: volume %s claims %q, want %q", f, v.Name, v.PersistentVolumeClaim.ClaimName, pvc.Name)
				}
				if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name && m.MountPath == "/results" }) {
					t.Errorf("%s: volume %s is not mounted on /results", f, v.Name)
				}
			}
		}
		if claims != 1 {
			t.Errorf("%s: %d volumes of a claim, want 1 (the results)", f, claims)
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
				ref := e.ValueFrom.ConfigMapKeyRef
				if ref.Name != "lockbench" || s.config[ref.Key] == "" {
					t.Errorf("%s: env %s from ConfigMap %s key %s, which the kustomization does not generate", f, e.Name, ref.Name, ref.Key)
				}
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				ref := e.ValueFrom.SecretKeyRef
				if ref.Name != secret.Name || ref.Key != "password" || e.Name != "LOCKBENCH_PASSWORD" {
					t.Errorf("%s: env %s from Secret %s key %s, want LOCKBENCH_PASSWORD from %s key password", f, e.Name, ref.Name, ref.Key, secret.Name)
				}
			}
		}
	}
}

// dockerfileUser is the uid of the repository Dockerfile's USER.
func dockerfileUser(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Dockerfile: no numeric USER")
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	if n == 0 {
		t.Fatal("Dockerfile: USER is root")
	}
	return n
}

func TestSegmentJobIsIndexed(t *testing.T) {
	s := load(t)
	n := s.segments(t)
	job := s.job(t, "job.yaml")
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed (JOB_COMPLETION_INDEX gives each pod its segment)", job.Spec.CompletionMode)
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || int(*job.Spec.Completions) != n || int(*job.Spec.Parallelism) != n {
		t.Errorf("completions %v, parallelism %v, want both %d (SEGMENTS): every segment at once", ptr(job.Spec.Completions), ptr(job.Spec.Parallelism), n)
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v, want 0 (a segment rerun late is another run)", ptr(job.Spec.BackoffLimit))
	}
	// The kustomization keeps completions and parallelism on SEGMENTS.
	var paths []string
	for _, r := range s.k.Replacements {
		if r.Source.Kind != "ConfigMap" || r.Source.Name != "lockbench" || r.Source.FieldPath != "data.SEGMENTS" {
			continue
		}
		for _, tg := range r.Targets {
			if tg.Select.Kind == "Job" && tg.Select.Name == job.Name {
				paths = append(paths, tg.FieldPaths...)
			}
		}
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"spec.completions", "spec.parallelism"}) {
		t.Errorf("replacements from data.SEGMENTS set %v of Job %s, want spec.completions and spec.parallelism", paths, job.Name)
	}
	merge := s.job(t, "merge-job.yaml")
	if merge.Spec.CompletionMode != nil && *merge.Spec.CompletionMode != batchv1.NonIndexedCompletion ||
		merge.Spec.Completions != nil && *merge.Spec.Completions != 1 || merge.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("merge Job: want one pod and an activeDeadlineSeconds, got %+v", merge.Spec)
	}
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// expand replaces Kubernetes' $(NAME) references in s with vars[NAME];
// a name not in vars fails the test (Kubernetes would leave it as is).
func expand(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := vars[name]
		if !ok {
			t.Errorf("$(%s) names no variable of the container", name)
		}
		return v
	})
}

// TestJobCommandLines checks the segment pods' command line, as each
// pod's container gets it (the $(NAME) references replaced with the
// ConfigMap's values and the pod's JOB_COMPLETION_INDEX, /results a
// temporary directory), with lockbench's own command tree and run's
// validation (cli.CheckArgs): a valid run line, --segment-count the Job's
// completions, one result file per index.
//
// It needs the flags of the segments and histories work (--segment-count,
// --run-id, --barrier-timeout, --history): before those are merged it
// fails with "unknown flag: --segment-count".
func TestJobCommandLines(t *testing.T) {
	s := load(t)
	n := s.segments(t)
	job := s.job(t, "job.yaml")
	c := job.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 4 || c.Command[0] != "sh" || c.Command[1] != "-c" || c.Command[3] != "lockbench" ||
		!strings.Contains(c.Command[2], `lockbench "$@"`) {
		t.Errorf("command %q, want sh -c SCRIPT lockbench (the script runs lockbench \"$@\", the args)", c.Command)
	}
	if !slices.Contains(c.Args, "--allow-nonempty") {
		t.Errorf("args %q: want --allow-nonempty (a shared Redis holds other keys; the run's are under lockbench:<run-id>:)", c.Args)
	}
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("args %q, want lockbench run ...", c.Args)
	}
	if i := slices.Index(c.Args, "--segment-count"); i < 0 || i+1 == len(c.Args) || expand(t, c.Args[i+1], map[string]string{"SEGMENTS": s.config["SEGMENTS"]}) != strconv.Itoa(n) {
		t.Errorf("args %q: want --segment-count %d (the completions)", c.Args, n)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--segment=") || a == "--segment" || a == "--password" || strings.HasPrefix(a, "--password=") {
			t.Errorf("args %q: %s does not belong (the index comes from JOB_COMPLETION_INDEX, the password from the Secret)", c.Args, a)
		}
	}
	results := t.TempDir()
	t.Setenv("LOCKBENCH_PASSWORD", "sample-password")
	outs := map[string]bool{}
	for i := range n {
		vars := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
				vars[e.Name] = s.config[e.ValueFrom.ConfigMapKeyRef.Key]
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				vars[e.Name] = "sample-password"
			default:
				vars[e.Name] = expand(t, e.Value, vars)
			}
		}
		var args []string
		for _, a := range c.Args {
			a = expand(t, a, vars)
			if strings.HasPrefix(a, "/results/") {
				a = filepath.Join(results, strings.TrimPrefix(a, "/results/"))
			}
			args = append(args, a)
		}
		if o := args[slices.Index(args, "--out")+1]; outs[o] {
			t.Errorf("index %d writes %s, as another index does", i, o)
		} else {
			outs[o] = true
		}
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		if err := cli.CheckArgs(args); err != nil {
			t.Errorf("index %d: lockbench %s: %v", i, strings.Join(args, " "), err)
		}
	}
	if len(outs) != n {
		t.Errorf("%d result files for %d segments", len(outs), n)
	}
}

// TestMergeJobScript runs the merge Job's shell script with sh, /results a
// temporary directory holding the N segment files and lockbench a stub
// that records its arguments; the line it is given must be a valid
// lockbench merge line over exactly those N files.
func TestMergeJobScript(t *testing.T) {
	s := load(t)
	n := s.segments(t)
	c := s.job(t, "merge-job.yaml").Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"sh", "-c"}) || len(c.Args) != 1 {
		t.Fatalf("merge command %q args %q, want sh -c SCRIPT", c.Command, c.Args)
	}
	tmp := t.TempDir()
	results := filepath.Join(tmp, "results")
	dir := filepath.Join(results, s.config["RUN_ID"])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("seg-%d.json", i))
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	// Beside them, what the runs also leave: histories and hidden files.
	for _, extra := range []string{"seg-0.history.jsonl.gz", ".lockbench-lock-seg-0.json"} {
		if err := os.WriteFile(filepath.Join(dir, extra), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
			t.Fatalf("merge env %s: want every variable from the ConfigMap", e.Name)
		}
		env = append(env, e.Name+"="+s.config[e.ValueFrom.ConfigMapKeyRef.Key])
	}
	r := scripttest.Run(t, strings.ReplaceAll(c.Args[0], "/results", results), env)
	if r.Err != nil || r.Args == nil {
		t.Fatalf("merge script: %v (ran lockbench: %v)\n%s", r.Err, r.Args != nil, r.Output)
	}
	args := r.Args
	if len(args) < 1 || args[0] != "merge" {
		t.Fatalf("lockbench %q, want lockbench merge ...", args)
	}
	var inputs []string
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") {
			i++ // the flag's value
			continue
		}
		inputs = append(inputs, args[i])
	}
	if !slices.Equal(inputs, want) {
		t.Errorf("merges %q, want the %d segment files %q", inputs, n, want)
	}
	if err := cli.CheckArgs(args); err != nil {
		t.Errorf("lockbench %s: %v", strings.Join(args, " "), err)
	}
}

// TestKustomizeBuild renders the folder with kubectl's built-in kustomize
// (skipped without kubectl) and decodes the output strictly: the Job's
// completions and parallelism are SEGMENTS, the images and the ConfigMap
// name are rewritten.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on this machine: the kustomize build is not checked")
	}
	s := load(t)
	n := s.segments(t)
	cmd := exec.Command(kubectl, "kustomize", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, stderr.String())
	}
	objs := decode(t, "kubectl kustomize output", b)
	var kinds []string
	var cm string
	for _, o := range objs {
		kinds = append(kinds, o.kind+"/"+o.name)
		if o.configMap != nil {
			cm = o.name
		}
	}
	if !strings.HasPrefix(cm, "lockbench-") {
		t.Fatalf("rendered objects %v: no generated lockbench ConfigMap", kinds)
	}
	image := s.k.Images[0].NewName + ":" + s.k.Images[0].NewTag
	jobs := 0
	for _, o := range objs {
		if o.job == nil {
			continue
		}
		jobs++
		spec := o.job.Spec
		c := spec.Template.Spec.Containers[0]
		if c.Image != image {
			t.Errorf("Job %s: image %q, want %q", o.name, c.Image, image)
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name != cm {
				t.Errorf("Job %s: env %s from ConfigMap %q, want the generated %q", o.name, e.Name, e.ValueFrom.ConfigMapKeyRef.Name, cm)
			}
		}
		if o.name == "lockbench" && (spec.Completions == nil || spec.Parallelism == nil || int(*spec.Completions) != n || int(*spec.Parallelism) != n) {
			t.Errorf("rendered Job lockbench: completions %v parallelism %v, want %d", ptr(spec.Completions), ptr(spec.Parallelism), n)
		}
	}
	if jobs != 2 {
		t.Errorf("rendered objects %v, want 2 Jobs", kinds)
	}
}

// TestSegmentFailureMarker runs the segment pods' sh script with a
// lockbench stub: exiting 2 (a refusal, no result file) it leaves
// seg-<index>.failed holding "exit status 2" and exits 2; exiting 0 it
// leaves no marker and removes a stale one.
func TestSegmentFailureMarker(t *testing.T) {
	s := load(t)
	c := s.job(t, "job.yaml").Spec.Template.Spec.Containers[0]
	for _, code := range []int{2, 0} {
		results := t.TempDir()
		mark := filepath.Join(results, s.config["RUN_ID"], "seg-1.failed")
		if code == 0 {
			if err := os.MkdirAll(filepath.Dir(mark), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mark, []byte("exit status 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		script := "set -- run --quiet\n" + strings.ReplaceAll(c.Command[2], "/results", results)
		r := scripttest.RunExit(t, script, []string{"RUN_ID=" + s.config["RUN_ID"], "JOB_COMPLETION_INDEX=1"}, code)
		got := 0
		if r.Err != nil {
			got = r.Err.(*exec.ExitError).ExitCode()
		}
		if got != code || !slices.Equal(r.Args, []string{"run", "--quiet"}) {
			t.Errorf("lockbench stub exiting %d: script exit %d, lockbench args %q, want %d and run --quiet\n%s", code, got, r.Args, code, r.Output)
		}
		b, err := os.ReadFile(mark)
		switch {
		case code != 0 && string(b) != "exit status 2\n":
			t.Errorf("after exit %d: marker %q (%v), want \"exit status 2\"", code, b, err)
		case code == 0 && err == nil:
			t.Errorf("after exit 0: marker %q left, want none", b)
		}
	}
}

// TestMergeJobFailsFast runs the merge Job's script over a volume where it
// must not wait: a segment's failure marker without its result file (exit
// 1 at once, naming the index and the status); some files but not all,
// past the straggler bound (the sleeps removed: exit 1 after 61 rounds).
// Both ways: a marker beside the segment's result file (a run that failed
// but wrote its partial results) does not stop the merge.
func TestMergeJobFailsFast(t *testing.T) {
	s := load(t)
	n := s.segments(t)
	c := s.job(t, "merge-job.yaml").Spec.Template.Spec.Containers[0]
	env := []string{"SEGMENTS=" + s.config["SEGMENTS"], "RUN_ID=" + s.config["RUN_ID"]}
	for _, tc := range []struct {
		name   string
		files  []string
		want   string // in the output; "" for a merge
		rounds int
	}{
		{"marker without result", []string{"seg-0.json", "seg-2.failed"}, "the segment of index 2 failed (exit status 2)", 1},
		{"lost pod", []string{"seg-0.json"}, "1 of " + s.config["SEGMENTS"] + " segment files", 61},
		{"marker beside result", append(segFiles(n), "seg-1.failed"), "", 0},
	} {
		results := t.TempDir()
		dir := filepath.Join(results, s.config["RUN_ID"])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("exit status 2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		script := strings.ReplaceAll(strings.ReplaceAll(c.Args[0], "/results", results), "sleep 10", ":")
		r := scripttest.Run(t, script, env)
		rounds := strings.Count(r.Output, "waiting for")
		if tc.want == "" {
			if r.Err != nil || len(r.Args) == 0 || r.Args[0] != "merge" {
				t.Errorf("%s: exit %v, lockbench %q, want a merge\n%s", tc.name, r.Err, r.Args, r.Output)
			}
			continue
		}
		if r.Err == nil || r.Args != nil || !strings.Contains(r.Output, tc.want) || rounds != tc.rounds-1 {
			t.Errorf("%s: exit %v, lockbench %q, %d rounds of waiting, want exit 1 without a merge after %d, saying %q\n%s", tc.name, r.Err, r.Args, rounds, tc.rounds-1, tc.want, r.Output)
		}
	}
}

func segFiles(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("seg-%d.json", i))
	}
	return out
}
