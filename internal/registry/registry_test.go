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
