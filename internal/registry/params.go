package registry

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Param is one option a plugin declares. The flag is --Name, the scenario
// file's field Name, the result file's params key Name with dashes turned
// into underscores (ResultKey), and in a spec (--retry, --fault) the
// parameter Name=value.
type Param struct {
	// Name is lower-case words joined by dashes ("segments", "wait-timeout").
	Name string
	// Doc is one line: what the value means, with its unit and the meaning
	// of zero where zero is special. The default is printed from Default.
	Doc string
	// Default is the value in force when none is given. Its dynamic type is
	// the parameter's type: int, int64, float64, bool, string or
	// time.Duration.
	Default any
	// Check, when set, validates a value of the parameter's type; its error
	// says what is wrong without the parameter's name ("must be at least 1,
	// got 0"). nil: every value of the type is accepted (float64 values
	// must be finite in any case).
	Check func(v any) error
}

// Type names the parameter's type as flags do: int, int64, float64, bool,
// string or duration.
func (p Param) Type() string {
	switch p.Default.(type) {
	case int:
		return "int"
	case int64:
		return "int64"
	case float64:
		return "float64"
	case bool:
		return "bool"
	case string:
		return "string"
	case time.Duration:
		return "duration"
	}
	return fmt.Sprintf("unsupported %T", p.Default)
}

// ResultKey is the parameter's key in a result file's params
// ("wait-timeout" -> "wait_timeout").
func (p Param) ResultKey() string { return strings.ReplaceAll(p.Name, "-", "_") }

// Parse reads s as a value of the parameter's type and runs Check.
// Errors: `not a whole number`, `not a duration (like 100ms)`, `not a
// finite number`, `not true or false`, or Check's error.
func (p Param) Parse(s string) (any, error) {
	v, err := p.ParseType(s)
	if err != nil {
		return nil, err
	}
	return v, p.Validate(v)
}

// ParseType reads s as a value of the parameter's type, without Check (a
// command line parses every flag first and checks them all together).
func (p Param) ParseType(s string) (any, error) {
	s = strings.TrimSpace(s)
	switch p.Default.(type) {
	case int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return n, nil
	case int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return n, nil
	case float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q is not a finite number", s)
		}
		return f, nil
	case bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	case string:
		return s, nil
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration (like 100ms)", s)
		}
		return d, nil
	}
	return nil, fmt.Errorf("parameter %s has an unsupported type %T", p.Name, p.Default)
}

// Validate checks that v has the parameter's type, then runs Check on it
// (nil Check: any value of the type).
func (p Param) Validate(v any) error {
	if fmt.Sprintf("%T", v) != fmt.Sprintf("%T", p.Default) {
		return fmt.Errorf("%v is a %T, want a %s", v, v, p.Type())
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fmt.Errorf("%v is not a finite number", f)
	}
	if p.Check == nil {
		return nil
	}
	return p.Check(v)
}

// CheckParams reports a declaration problem: an empty, badly formed or
// repeated name, an unsupported type, or a default its own Check refuses.
func CheckParams(ps []Param) error {
	seen := map[string]bool{}
	for _, p := range ps {
		switch {
		case p.Name == "" || strings.ToLower(p.Name) != p.Name || strings.ContainsAny(p.Name, " _=,:"):
			return fmt.Errorf("parameter name %q: want lower-case words joined by dashes", p.Name)
		case seen[p.Name]:
			return fmt.Errorf("parameter %s declared twice", p.Name)
		case strings.HasPrefix(p.Type(), "unsupported"):
			return fmt.Errorf("parameter %s: %s default", p.Name, p.Type())
		}
		if err := p.Validate(p.Default); err != nil {
			return fmt.Errorf("parameter %s: its default %s: %v", p.Name, Format(p.Default), err)
		}
		seen[p.Name] = true
	}
	return nil
}

// Format writes a value as a flag takes it (durations as time.Duration's
// String, floats in the shortest form).
func Format(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Duration:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Values are a plugin's parameter values, by Param.Name, every declared
// parameter present (Defaults, Pick and ParseArgs make them so). The
// getters (Int, Int64, Float, Bool, String, Duration) read one: a name
// that is not present, or whose value has another type, is a programming
// error (a parameter the plugin reads but did not declare, a misspelt
// name, the wrong getter), and the getter panics with an *UndeclaredError
// instead of returning a zero value that would pass for a setting.
// strategies.New and workloads.New turn that panic into their error.
type Values map[string]any

// UndeclaredError is the value a Values getter panics with when name is
// not present or not of the getter's type: the plugin reads a parameter
// it did not declare (or declared with another type).
type UndeclaredError struct {
	// Name is the parameter read; Want the getter's type (int, int64,
	// float64, bool, string, duration); Got the type of the value present,
	// "" when none is.
	Name, Want, Got string
}

func (e *UndeclaredError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("parameter %q is read (as %s) but not declared: declare it in the plugin's Params", e.Name, e.Want)
	}
	return fmt.Sprintf("parameter %q is read as %s but declared as %s", e.Name, e.Want, e.Got)
}

// Recover turns a Values getter's panic (*UndeclaredError) into *err,
// prefixed by prefix; any other panic goes on. Use it deferred around a
// plugin's factory: defer registry.Recover(&err, "strategy x: ").
func Recover(err *error, prefix string) {
	r := recover()
	if r == nil {
		return
	}
	if u, ok := r.(*UndeclaredError); ok {
		*err = fmt.Errorf("%s%w", prefix, u)
		return
	}
	panic(r)
}

// get returns the value of name, which must be present and of type T
// (want names it), else panics with an *UndeclaredError.
func get[T any](v Values, name, want string) T {
	x, present := v[name]
	t, ok := x.(T)
	if !ok {
		got := ""
		if present {
			got = Param{Default: x}.Type()
		}
		panic(&UndeclaredError{Name: name, Want: want, Got: got})
	}
	return t
}

// Has reports whether v holds a value for name: whether the plugin v was
// made for declares it.
func (v Values) Has(name string) bool {
	_, ok := v[name]
	return ok
}

// Zero is the zero value of the parameter's type (0, "", false).
func (p Param) Zero() any {
	switch p.Default.(type) {
	case int:
		return 0
	case int64:
		return int64(0)
	case float64:
		return 0.0
	case bool:
		return false
	case string:
		return ""
	case time.Duration:
		return time.Duration(0)
	}
	return nil
}

// Defaults returns every parameter of ps at its default.
func Defaults(ps []Param) Values {
	v := make(Values, len(ps))
	for _, p := range ps {
		v[p.Name] = p.Default
	}
	return v
}

// Pick returns the values of the parameters ps declares: from bag where it
// has one, else the default. Names bag holds that ps does not declare are
// left out, so one bag can hold the values of several plugins.
func Pick(ps []Param, bag Values) Values {
	v := Defaults(ps)
	for _, p := range ps {
		if x, ok := bag[p.Name]; ok {
			v[p.Name] = coerce(p.Default, x)
		}
	}
	return v
}

// coerce converts a whole number given as int, int64 or float64 to the
// type of def when that loses nothing (a Go literal 300 for an int64
// parameter); any other value is returned as it is, for Validate to refuse.
func coerce(def, x any) any {
	var n int64
	switch y := x.(type) {
	case int:
		n = int64(y)
	case int64:
		n = y
	case float64:
		if _, isFloat := def.(float64); isFloat {
			return y
		}
		if y != math.Trunc(y) || math.Abs(y) > 1<<53 {
			return x
		}
		n = int64(y)
	default:
		return x
	}
	switch def.(type) {
	case int:
		if int64(int(n)) == n {
			return int(n)
		}
	case int64:
		return n
	case float64:
		return float64(n)
	}
	return x
}

// Int returns the int value of name; it panics (*UndeclaredError) when
// name holds no int.
func (v Values) Int(name string) int { return get[int](v, name, "int") }

// Int64 returns the int64 value of name; it panics (*UndeclaredError)
// when name holds no int64.
func (v Values) Int64(name string) int64 { return get[int64](v, name, "int64") }

// Float returns the float64 value of name; it panics (*UndeclaredError)
// when name holds no float64.
func (v Values) Float(name string) float64 { return get[float64](v, name, "float64") }

// Bool returns the bool value of name; it panics (*UndeclaredError) when
// name holds no bool.
func (v Values) Bool(name string) bool { return get[bool](v, name, "bool") }

// String returns the string value of name; it panics (*UndeclaredError)
// when name holds no string.
func (v Values) String(name string) string { return get[string](v, name, "string") }

// Duration returns the time.Duration value of name; it panics
// (*UndeclaredError) when name holds no time.Duration.
func (v Values) Duration(name string) time.Duration {
	return get[time.Duration](v, name, "duration")
}

// Strings formats every value with Format, keyed by name.
func (v Values) Strings() map[string]string {
	out := make(map[string]string, len(v))
	for k, x := range v {
		out[k] = Format(x)
	}
	return out
}

// Check validates every value of v against its declaration in ps and
// returns every problem, each as `NAME VALUE: PROBLEM` prefixed by prefix.
func Check(prefix string, ps []Param, v Values) []error {
	var errs []error
	for _, p := range ps {
		if err := p.Validate(v[p.Name]); err != nil {
			errs = append(errs, fmt.Errorf("%s%s %s: %w", prefix, p.Name, Format(v[p.Name]), err))
		}
	}
	return errs
}

// ParseArgs reads the parameters of a spec, "k=v,k=v" (the part after
// NAME: in --retry, --fault and --strategy), against ps; parameters not
// given take their defaults. Every problem is reported at once, each
// prefixed "KIND NAME: " (for example "retry backoff: "): a part that is
// not key=value, a parameter given twice, an unknown parameter (with the
// declared ones), a value of the wrong type or refused by its Check.
func ParseArgs(kind, name, args string, ps []Param) (Values, error) {
	v := Defaults(ps)
	given, err := ParseGiven(kind, name, args, ps)
	for k, x := range given {
		v[k] = x
	}
	return v, err
}

// ParseGiven is ParseArgs without the defaults: it returns only the
// parameters args gives (empty for ""), each checked, so that they can
// override values from elsewhere (the run flags). Errors as ParseArgs.
func ParseGiven(kind, name, args string, ps []Param) (Values, error) {
	v := Values{}
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s %s: %s", kind, name, fmt.Sprintf(format, a...)))
	}
	if strings.TrimSpace(args) == "" {
		return v, nil
	}
	given := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, s, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			bad("parameter %q is not key=value", kv)
			continue
		}
		if given[k] {
			bad("parameter %q given twice", k)
			continue
		}
		given[k] = true
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == k })
		if i < 0 {
			bad("unknown parameter %q (%s)", k, declared(ps))
			continue
		}
		x, err := ps[i].ParseType(s)
		if err == nil {
			err = ps[i].Validate(x)
		}
		if err != nil {
			bad("%s=%s: %v", k, s, err)
			continue
		}
		v[k] = x
	}
	return v, errors.Join(errs...)
}

func declared(ps []Param) string {
	if len(ps) == 0 {
		return "it takes none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	sort.Strings(names)
	return "it takes " + strings.Join(names, ", ")
}

// Spec writes name and the values that differ from their defaults as a
// spec, NAME[:k=v,...] with the parameters sorted.
func Spec(name string, ps []Param, v Values) string {
	var parts []string
	for _, p := range ps {
		if x, ok := v[p.Name]; ok && Format(x) != Format(p.Default) {
			parts = append(parts, p.Name+"="+Format(x))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return name
	}
	return name + ":" + strings.Join(parts, ",")
}

// number is the set of types the range checks take.
type number interface {
	~int | ~int64 | ~float64
}

// AtLeast accepts values >= lo: "must be at least LO, got V".
func AtLeast[T number](lo T) func(any) error {
	return func(v any) error {
		if x, ok := v.(T); ok && x < lo {
			return fmt.Errorf("must be at least %v, got %v", lo, x)
		}
		return nil
	}
}

// Between accepts values from lo to hi: "must be from LO to HI, got V".
func Between[T number](lo, hi T) func(any) error {
	return func(v any) error {
		if x, ok := v.(T); ok && (x < lo || x > hi) {
			return fmt.Errorf("must be from %v to %v, got %v", lo, hi, x)
		}
		return nil
	}
}

// DurationAtLeast accepts durations >= lo: "must be at least LO, got V".
func DurationAtLeast(lo time.Duration) func(any) error {
	return func(v any) error {
		if d, ok := v.(time.Duration); ok && d < lo {
			return fmt.Errorf("must be at least %v, got %v", lo, d)
		}
		return nil
	}
}

// DurationBetween accepts durations from lo to hi.
func DurationBetween(lo, hi time.Duration) func(any) error {
	return func(v any) error {
		if d, ok := v.(time.Duration); ok && (d < lo || d > hi) {
			return fmt.Errorf("must be from %v to %v, got %v", lo, hi, d)
		}
		return nil
	}
}

// Positive accepts durations above 0: "must be > 0".
func Positive(v any) error {
	if d, ok := v.(time.Duration); ok && d <= 0 {
		return fmt.Errorf("must be > 0, got %v", d)
	}
	return nil
}

// OneOf accepts the strings listed: "X is not one of a, b" (an empty
// string listed as "").
func OneOf(valid ...string) func(any) error {
	return func(v any) error {
		if s, ok := v.(string); ok && !slices.Contains(valid, s) {
			names := make([]string, len(valid))
			for i, n := range valid {
				names[i] = cmp.Or(n, `""`)
			}
			return fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
		}
		return nil
	}
}
