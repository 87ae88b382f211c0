package cli

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
)

// docLayers reads the file order of doc.go's "Layers" list: every file
// named there, bottom first.
func docLayers(t *testing.T) map[string]int {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	in := false
	name := regexp.MustCompile(`\b[a-z0-9_]+\.go\b`)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "// # Layers") {
			in = true
			continue
		}
		if !in || !strings.HasPrefix(line, "//") {
			continue
		}
		for _, f := range name.FindAllString(line, -1) {
			if _, dup := rank[f]; !dup {
				rank[f] = len(rank)
			}
		}
	}
	return rank
}

// TestFileLayers holds internal/cli's files to the layers doc.go
// describes: every non-test file is listed there, and a file refers
// (a function, type, variable, constant, method or field declared in the
// package) only to files listed before it.
func TestFileLayers(t *testing.T) {
	t.Parallel()
	rank := docLayers(t)
	// The export data of the imports, from the build cache of this test
	// binary's build (with -race when it is built with -race).
	args := []string{"list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				args = append(args, "-race")
			}
		}
	}
	out, err := exec.Command("go", append(args, ".")...).Output()
	if err != nil {
		t.Skipf("go list -export: %v", err) // no go command: nothing to check with
	}
	exports := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(l, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		if _, ok := rank[n]; !ok && n != "doc.go" {
			t.Errorf("%s is not in doc.go's layers", n)
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check("github.com/lockbench/lockbench/internal/cli", fset, files, info)
	if err != nil {
		t.Fatalf("type-check: %v", err)
	}
	bad := map[string][]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || (obj.Parent() != nil && obj.Parent() != pkg.Scope()) {
			continue // another package's, or a local
		}
		from := fset.Position(id.Pos()).Filename
		to := fset.Position(obj.Pos()).Filename
		if from != to && rank[from] < rank[to] {
			k := from + " -> " + to
			bad[k] = append(bad[k], obj.Name())
		}
	}
	keys := make([]string, 0, len(bad))
	for k := range bad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s (%s): a file refers only to files listed before it in doc.go's layers", k, strings.Join(bad[k], ", "))
	}
}
