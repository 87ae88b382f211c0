package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// timedDecl is how a timing-lane test is declared: the Makefile's
// TIMED_PKGS finds the packages to run the lane in by this line.
var timedDecl = regexp.MustCompile(`(?m)^func Test[A-Za-z0-9_]*Timed.t [*]testing[.]T`)

// The split of make test into its two lanes (Makefile, test): a test whose
// name ends in Timed compares measured rates or latencies and runs in the
// timing lane, one at a time; every other test runs in the first lane,
// packages two at a time. Every Timed test in the module is declared as
// the Makefile's grep finds it and does not call t.Parallel (it would run
// beside the package's other Timed tests); the Makefile's test target
// skips them in the first lane and runs only them, one package at a
// time, in the second.
func TestTimingLane(t *testing.T) {
	t.Parallel()
	root := "../.."
	var timed []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "bin" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		declared := map[string]bool{}
		for _, m := range timedDecl.FindAll(src, -1) {
			declared[strings.TrimSuffix(strings.TrimPrefix(string(m), "func "), "(t *testing.T")] = true
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || !strings.HasSuffix(fn.Name.Name, "Timed") {
				continue
			}
			name := filepath.ToSlash(path) + ": " + fn.Name.Name
			timed = append(timed, name)
			if !declared[fn.Name.Name] {
				t.Errorf("%s: not declared as func %s(t *testing.T) at the start of a line; the Makefile's TIMED_PKGS would miss its package", name, fn.Name.Name)
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
						t.Errorf("%s calls %s.Parallel: a timing test runs alone", name, receiverName(sel.X))
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(timed) == 0 {
		t.Fatal("no test ends in Timed: the timing lane is empty")
	}
	t.Logf("timing lane: %s", strings.Join(timed, ", "))

	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^TIMED := Timed\$\$$`),
		regexp.MustCompile(`(?m)^\t.*\$\(GO\) test -race -count=1 -p 2 .*-skip '\$\(TIMED\)' .*\./\.\.\.$`),
		regexp.MustCompile(`(?m)^\t.*\$\(GO\) test -race -count=1 -p 1 .*-run '\$\(TIMED\)' \$\(TIMED_PKGS\)$`),
	} {
		if !want.Match(mk) {
			t.Errorf("the Makefile has no line matching %s: make test's two lanes changed", want)
		}
	}
}

// receiverName names the receiver of a selector for a message: t in t.Parallel.
func receiverName(x ast.Expr) string {
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}
