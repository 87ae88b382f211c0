package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/baselines"
	_ "github.com/lockbench/lockbench/strategies/ext"
	_ "github.com/lockbench/lockbench/strategies/libs"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

const module = "github.com/lockbench/lockbench"

// registers are the Register functions whose plugins declare parameters
// and read them with registry.Values' getters in their factory, by the
// function's full name, with the declarations the registry holds.
var registers = map[string]func(name string) ([]registry.Param, bool){
	module + "/strategies.Register": func(name string) ([]registry.Param, bool) {
		return strategies.ParamsOf(name), strategies.Known(name)
	},
	module + "/workloads.Register": func(name string) ([]registry.Param, bool) {
		ps, err := workloads.Lookup(name)
		return ps, err == nil
	},
	// ext.Register(name, Adapter{...}) forwards to strategies.Register:
	// its Adapter literal is the factory (its Command and the generic
	// ext's reads of cmd, args and lock).
	module + "/strategies/ext.Register": func(name string) ([]registry.Param, bool) {
		return strategies.ParamsOf(name), strategies.Known(name)
	},
	module + "/strategies/retry.Register": func(name string) ([]registry.Param, bool) {
		for _, e := range retry.Entries() {
			if e.Name == name {
				return e.Params, true
			}
		}
		return nil, false
	},
	module + "/internal/faults.Register": func(name string) ([]registry.Param, bool) {
		for _, e := range faults.Entries() {
			if e.Name == name {
				return e.Params, true // the trigger's included
			}
		}
		return nil, false
	},
}

// getters are registry.Values' getters, with the parameter type each reads.
var getters = map[string]string{"Int": "int", "Int64": "int64", "Float": "float64", "Bool": "bool", "String": "string", "Duration": "duration"}

// Every parameter a strategy, workload, retry policy or fault reads is one
// it declared, with the type it reads it as. The source of every package
// of the module that registers them (the strategies and their subpackages,
// the workloads, the retry policies, the faults, the examples) is
// type-checked; each
// Register call's factory is followed through the calls it makes to
// functions and methods of its package, and every Values getter call met
// on the way must name, by a constant, a parameter that the plugin so
// registered declares (as the registry holds it) with the getter's type.
// A getter call that no factory reaches cannot be checked, and fails the
// test too. (A read the test misses still fails at run time: the getters
// panic with registry.UndeclaredError, which New returns.)
func TestEveryReadDeclared(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the plugin packages")
	}
	pkgs := listPackages(t, module+"/strategies/...", module+"/workloads", module+"/internal/faults", module+"/examples/...")
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	checked, reads := 0, 0
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, module+"/strategies") && !strings.HasPrefix(p.ImportPath, module+"/workloads") &&
			!strings.HasPrefix(p.ImportPath, module+"/examples") && p.ImportPath != module+"/internal/faults" {
			continue
		}
		pc := checkPackage(t, p, exports)
		for _, problem := range pc.problems {
			t.Error(problem)
		}
		checked += pc.plugins
		reads += pc.reads
	}
	// The test must have seen the plugins: a change that hides them (a
	// renamed Register) must not make it pass by checking nothing.
	if want := len(strategies.Names()) + len(workloads.Names()) + len(retry.Names()) + len(faults.Names()); checked < want {
		t.Errorf("checked %d Register calls, want at least %d (every built-in strategy, workload, retry policy and fault)", checked, want)
	}
	if reads < 30 {
		t.Errorf("found %d parameter reads, want the built-in plugins' (30 or more)", reads)
	}
	t.Logf("%d Register calls, %d parameter reads checked", checked, reads)
}

// The check finds a typo, a read of the wrong type, an undeclared read in
// a function the factory calls, a read outside every factory and a name
// that is not a constant (testdata/undeclared).
func TestEveryReadDeclaredFindsProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks a package")
	}
	pkgs := listPackages(t, "./testdata/undeclared")
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	pc := checkPackage(t, pkgs[len(pkgs)-1], exports)
	got := strings.Join(pc.problems, "\n")
	for _, want := range []string{
		`probe.go:15:8: undeclared-probe reads parameter "szie", which it does not declare (it declares size)`,
		`probe.go:16:8: undeclared-probe reads parameter "size" as string; it declares it as int`,
		`probe.go:22:47: undeclared-probe reads parameter "count", which it does not declare (it declares size)`,
		`probe.go:25:69: parameter "on" is read outside every Register call's factory`,
		`probe.go:25:83: Values.Float with a name that is not a constant`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one to contain %q", got, want)
		}
	}
	if len(pc.problems) != 5 || pc.plugins != 1 {
		t.Errorf("%d problems, %d plugins; want 5 and 1", len(pc.problems), pc.plugins)
	}
}

type listedPkg struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	DepOnly                 bool
}

// listPackages runs go list -export -deps on patterns: every package with
// its compiled export data, for the type checker's imports.
func listPackages(t *testing.T, patterns ...string) []listedPkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,DepOnly"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

type pkgCheck struct {
	plugins, reads int
	problems       []string
}

// checkPackage type-checks p from its source (imports from their export
// data) and checks its Register calls' factories.
func checkPackage(t *testing.T, p listedPkg, exports map[string]string) pkgCheck {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", p.ImportPath, err)
	}
	// The package's functions and methods by their object, to follow calls.
	decls := map[*types.Func]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[fn] = fd
				}
			}
		}
	}
	type read struct {
		name, typ string
		pos       token.Pos
	}
	var pc pkgCheck
	bad := func(pos token.Pos, format string, a ...any) {
		pc.problems = append(pc.problems, fmt.Sprintf("%s: %s", fset.Position(pos), fmt.Sprintf(format, a...)))
	}
	// readsIn returns the getter calls in n, and the package functions n
	// refers to.
	readsIn := func(n ast.Node) (rs []read, calls []*types.Func) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Ident:
				if fn, ok := info.Uses[x].(*types.Func); ok {
					if fn = fn.Origin(); decls[fn] != nil {
						calls = append(calls, fn)
					}
				}
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || getters[sel.Sel.Name] == "" || len(x.Args) != 1 {
					return true
				}
				s := info.Selections[sel]
				if s == nil || s.Kind() != types.MethodVal || !isValues(s.Recv()) {
					return true
				}
				tv := info.Types[x.Args[0]]
				if tv.Value == nil || tv.Value.Kind() != constant.String {
					bad(x.Pos(), "Values.%s with a name that is not a constant: the test cannot check it", sel.Sel.Name)
					return true
				}
				rs = append(rs, read{constant.StringVal(tv.Value), getters[sel.Sel.Name], x.Pos()})
			}
			return true
		})
		return rs, calls
	}
	reached := map[token.Pos]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var id *ast.Ident
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				id = fun
			case *ast.SelectorExpr:
				id = fun.Sel
			case *ast.IndexExpr: // an explicit instantiation, Register[T]
				if sel, ok := fun.X.(*ast.SelectorExpr); ok {
					id = sel.Sel
				} else if i, ok := fun.X.(*ast.Ident); ok {
					id = i
				}
			}
			fn, ok := info.Uses[id].(*types.Func)
			if id == nil || !ok {
				return true
			}
			declared := registers[fn.Origin().FullName()]
			if declared == nil || len(call.Args) < 2 || len(call.Args) < 3 && fn.Pkg().Path() != module+"/strategies/ext" {
				return true
			}
			tv := info.Types[call.Args[0]]
			if tv.Value == nil && forwards(f, call) {
				return true // inside ext.Register: its callers' names are checked
			}
			if tv.Value == nil || tv.Value.Kind() != constant.String {
				bad(call.Pos(), "%s with a name that is not a constant: the test cannot check its factory", fn.Name())
				return true
			}
			name := constant.StringVal(tv.Value)
			ps, known := declared(name)
			if !known {
				// Not registered in this test binary (a main package's
				// plugin): its declarations as the source writes them.
				if ps, known = staticParams(info, call, fn.Pkg().Path() == module+"/strategies" || fn.Pkg().Path() == module+"/strategies/ext"); !known {
					bad(call.Pos(), "%s(%q): not registered in this test binary, and its Params are not a literal the test can read", fn.Name(), name)
					return true
				}
			}
			pc.plugins++
			// Follow the factory through the package's functions.
			var rs []read
			seen := map[*types.Func]bool{}
			queue := []ast.Node{call.Args[len(call.Args)-1]}
			for len(queue) > 0 {
				n := queue[0]
				queue = queue[1:]
				r, calls := readsIn(n)
				rs = append(rs, r...)
				for _, c := range calls {
					if !seen[c] {
						seen[c] = true
						queue = append(queue, decls[c])
					}
				}
			}
			for _, r := range rs {
				reached[r.pos] = true
				i := slices.IndexFunc(ps, func(p registry.Param) bool { return p.Name == r.name })
				switch {
				case i < 0:
					bad(r.pos, "%s reads parameter %q, which it does not declare (it declares %s)", name, r.name, paramNames(ps))
				case ps[i].Type() != r.typ:
					bad(r.pos, "%s reads parameter %q as %s; it declares it as %s", name, r.name, r.typ, ps[i].Type())
				}
			}
			return true
		})
	}
	// Every getter call of the package is in some plugin's factory.
	for _, f := range files {
		rs, _ := readsIn(f)
		for _, r := range rs {
			pc.reads++
			if !reached[r.pos] {
				bad(r.pos, "parameter %q is read outside every Register call's factory: no declaration checks it", r.name)
			}
		}
	}
	return pc
}

// staticParams reads the parameters a Register call declares from its
// source: a literal []Param{{Name: "n", Default: 1, ...}, ...} (for a
// strategy, the Params field of its Info literal; none when the Info
// literal has no Params). ok is false for anything else.
func staticParams(info *types.Info, call *ast.CallExpr, strategy bool) (ps []registry.Param, ok bool) {
	var list ast.Expr
	if strategy {
		lit, isLit := call.Args[1].(*ast.CompositeLit)
		if !isLit {
			return nil, false
		}
		for _, e := range lit.Elts {
			if kv, isKV := e.(*ast.KeyValueExpr); isKV {
				if k, isID := kv.Key.(*ast.Ident); isID && k.Name == "Params" {
					list = kv.Value
				}
			}
		}
		if list == nil {
			return nil, true
		}
	} else {
		list = call.Args[2]
		if id, isID := list.(*ast.Ident); isID && id.Name == "nil" {
			return nil, true
		}
	}
	lit, isLit := list.(*ast.CompositeLit)
	if !isLit {
		return nil, false
	}
	for _, e := range lit.Elts {
		pl, isLit := e.(*ast.CompositeLit)
		if !isLit {
			return nil, false
		}
		var p registry.Param
		for _, f := range pl.Elts {
			kv, isKV := f.(*ast.KeyValueExpr)
			if !isKV {
				return nil, false
			}
			switch kv.Key.(*ast.Ident).Name {
			case "Name":
				tv := info.Types[kv.Value]
				if tv.Value == nil || tv.Value.Kind() != constant.String {
					return nil, false
				}
				p.Name = constant.StringVal(tv.Value)
			case "Default":
				switch t := info.Types[kv.Value].Type; types.TypeString(t, nil) {
				case "int", "untyped int":
					p.Default = 0
				case "int64":
					p.Default = int64(0)
				case "float64", "untyped float":
					p.Default = 0.0
				case "bool", "untyped bool":
					p.Default = false
				case "string", "untyped string":
					p.Default = ""
				case "time.Duration":
					p.Default = time.Duration(0)
				default:
					return nil, false
				}
			}
		}
		ps = append(ps, p)
	}
	return ps, true
}

// isValues reports whether t is registry.Values (or a pointer to it).
func isValues(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == "Values" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == module+"/internal/registry"
}

func paramNames(ps []registry.Param) string {
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// forwards reports whether call is in the body of package ext's
// Register, which registers the names its own callers give (checked at
// those calls).
func forwards(f *ast.File, call *ast.CallExpr) bool {
	if f.Name.Name != "ext" {
		return false
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "Register" && fd.Body != nil &&
			fd.Body.Pos() <= call.Pos() && call.End() <= fd.Body.End() {
			return true
		}
	}
	return false
}
