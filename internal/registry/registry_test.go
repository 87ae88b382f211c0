package registry

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	r := New[int]("thing")
	r.Register("b", "the b", []Param{{Name: "size", Doc: "bytes", Default: 4}}, 2)
	r.Register("a", "the a", nil, 1)
	if got := strings.Join(r.Names(), ","); got != "a,b" {
		t.Fatalf("Names = %s", got)
	}
	e, err := r.Lookup("b", errors.New("x"))
	if err != nil || e.Value != 2 || e.Desc != "the b" || len(e.Params) != 1 {
		t.Fatalf("Lookup b = %+v, %v", e, err)
	}
	if p, ok := e.Param("size"); !ok || p.Default != 4 {
		t.Fatalf("Param(size) = %+v %v", p, ok)
	}
	if es := r.Entries(); len(es) != 2 || es[0].Name != "a" || es[1].Name != "b" {
		t.Fatalf("Entries = %+v", es)
	}
	sentinel := errors.New("unknown thing")
	if _, err := r.Lookup("c", sentinel); !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("Lookup c = %v", err)
	}
	for _, c := range []struct {
		name   string
		params []Param
	}{
		{"", nil}, {"a", nil},
		{"c", []Param{{Name: "Size", Default: 1}}},
		{"d", []Param{{Name: "n", Default: 1}, {Name: "n", Default: 2}}},
		{"e", []Param{{Name: "n", Default: uint(1)}}},
		{"f", []Param{{Name: "n", Default: 0, Check: AtLeast(1)}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, %+v) did not panic", c.name, c.params)
				}
			}()
			r.Register(c.name, "", c.params, 9)
		}()
	}
}

var testParams = []Param{
	{Name: "count", Doc: "items", Default: 3, Check: AtLeast(1)},
	{Name: "big", Doc: "a big one", Default: int64(1000)},
	{Name: "ratio", Doc: "share", Default: 0.5, Check: Between(0.0, 1.0)},
	{Name: "on", Doc: "switch", Default: false},
	{Name: "mode", Doc: "which", Default: "a", Check: OneOf("a", "b")},
	{Name: "wait-time", Doc: "how long", Default: 10 * time.Millisecond, Check: Positive},
}

func TestParseArgs(t *testing.T) {
	v, err := ParseArgs("thing", "x", "count=7,ratio=0.25,on=true,mode=b,wait-time=2s,big=9000000000", testParams)
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("count") != 7 || v.Float("ratio") != 0.25 || !v.Bool("on") || v.String("mode") != "b" ||
		v.Duration("wait-time") != 2*time.Second || v.Int64("big") != 9_000_000_000 {
		t.Fatalf("values %v", v)
	}
	d, err := ParseArgs("thing", "x", "", testParams)
	if err != nil || d.Int("count") != 3 || d.Duration("wait-time") != 10*time.Millisecond || len(d) != len(testParams) {
		t.Fatalf("defaults %v %v", d, err)
	}
	if got := Spec("x", testParams, v); got != "x:big=9000000000,count=7,mode=b,on=true,ratio=0.25,wait-time=2s" {
		t.Fatalf("Spec = %s", got)
	}
	if got := Spec("x", testParams, d); got != "x" {
		t.Fatalf("Spec of defaults = %s", got)
	}
	// Every problem at once, each named.
	_, err = ParseArgs("thing", "x", "count=0,ratio=NaN,on=maybe,mode=c,wait-time=soon,size=1,count=2,oops", testParams)
	for _, want := range []string{
		"thing x: count=0: must be at least 1, got 0",
		`ratio=NaN: "NaN" is not a finite number`,
		`on=maybe: "maybe" is not true or false`,
		`mode=c: "c" is not one of a, b`,
		`wait-time=soon: "soon" is not a duration`,
		`unknown parameter "size" (it takes big, count, mode, on, ratio, wait-time)`,
		`parameter "count" given twice`,
		`parameter "oops" is not key=value`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to contain %q", err, want)
		}
	}
}

func TestParamParseAndCheck(t *testing.T) {
	p := testParams[0]
	if _, err := p.Parse("x"); err == nil || !strings.Contains(err.Error(), "not a whole number") {
		t.Fatalf("Parse(x) = %v", err)
	}
	if v, err := p.Parse(" 5 "); err != nil || v != 5 {
		t.Fatalf("Parse(5) = %v %v", v, err)
	}
	v := Defaults(testParams)
	v["count"], v["ratio"] = 0, 2.0
	errs := Check("--", testParams, v)
	if len(errs) != 2 || errs[0].Error() != "--count 0: must be at least 1, got 0" || !strings.Contains(errs[1].Error(), "--ratio 2: must be from 0 to 1") {
		t.Fatalf("Check = %v", errs)
	}
	if (Param{Name: "wait-time"}).ResultKey() != "wait_time" {
		t.Fatal("ResultKey")
	}
	if Format(1500*time.Millisecond) != "1.5s" || Format(0.1) != "0.1" || Format(int64(3)) != "3" {
		t.Fatal("Format")
	}
}

// A getter of a name that is not present, or of the wrong type, panics
// with an *UndeclaredError (no zero value passes for a setting), and
// Recover turns that panic, and only that one, into an error.
func TestUndeclaredRead(t *testing.T) {
	v := Defaults(testParams)
	for _, c := range []struct {
		read func()
		want string
	}{
		{func() { v.Int("cuont") }, `parameter "cuont" is read (as int) but not declared`},
		{func() { v.Int64("count") }, `parameter "count" is read as int64 but declared as int`},
		{func() { v.String("on") }, `parameter "on" is read as string but declared as bool`},
		{func() { v.Duration("ratio") }, `parameter "ratio" is read as duration but declared as float64`},
		{func() { Values(nil).Bool("on") }, `parameter "on" is read (as bool) but not declared`},
	} {
		err := func() (err error) {
			defer Recover(&err, "thing x: ")
			c.read()
			return nil
		}()
		var u *UndeclaredError
		if !errors.As(err, &u) || err.Error() != "thing x: "+c.want+map[bool]string{true: ": declare it in the plugin's Params", false: ""}[u.Got == ""] {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if !v.Has("count") || v.Has("cuont") || v.Int("count") != 3 {
		t.Fatal("Has or Int of a declared name")
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Fatalf("recovered %v, want the other panic to go on", r)
		}
	}()
	func() {
		var err error
		defer Recover(&err, "")
		panic("other")
	}()
}

// ParseGiven returns only what the spec gives, checked; ParseArgs adds the
// defaults; Zero is each type's zero.
func TestParseGiven(t *testing.T) {
	v, err := ParseGiven("strategy", "x", "mode=b, count=4", testParams)
	if err != nil || len(v) != 2 || v.String("mode") != "b" || v.Int("count") != 4 {
		t.Fatalf("ParseGiven = %v, %v", v, err)
	}
	if v, err := ParseGiven("strategy", "x", " ", testParams); err != nil || len(v) != 0 {
		t.Fatalf("ParseGiven of nothing = %v, %v", v, err)
	}
	if _, err := ParseGiven("strategy", "x", "mode=c,size=1", testParams); err == nil ||
		!strings.Contains(err.Error(), `strategy x: mode=c: "c" is not one of a, b`) ||
		!strings.Contains(err.Error(), `strategy x: unknown parameter "size" (it takes big, count, mode, on, ratio, wait-time)`) {
		t.Fatalf("ParseGiven errors = %v", err)
	}
	for _, p := range testParams {
		z := p.Zero()
		want, ok := map[string]string{"bool": "false", "string": "", "duration": "0s"}[p.Type()]
		if !ok {
			want = "0"
		}
		if (Param{Default: z}).Type() != p.Type() || Format(z) != want {
			t.Errorf("Zero of %s = %#v", p.Name, z)
		}
	}
}
