package workloads

// The workload registry: Register, New, Names, Entries and the look-ups.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/internal/registry"
)

// Factory returns a new Workload for one scenario, given the values of the
// parameters the workload declared (every one present, each checked
// against its Param).
type Factory func(v Values) Workload

var reg = registry.New[Factory]("workload")

// Register makes a workload available under name (lower-case words joined
// by dashes, as --workload takes it), with its one-line description and
// its own parameters (each becomes a run flag, a scenario-file field, a
// parameter after the name in --workload and a key of the result's
// params), to New, the command line (lockbench.Main) and `lockbench
// list`. Call it from an init function, before Main runs. It panics on an
// empty or duplicate name, a nil factory or a badly declared parameter
// (a badly formed or repeated name, a Default of an unsupported type, one
// its own Check refuses, or a name another plugin declares with another
// type or default, found when the command line starts).
func Register(name, desc string, params []Param, f Factory) {
	if f == nil {
		panic("workloads: Register with a nil factory")
	}
	reg.Register(name, desc, params, f)
}

// Names lists the registered workloads, sorted.
func Names() []string { return reg.Names() }

// Entry is one registered workload: its Name, Desc, Params and factory
// (Value).
type Entry = registry.Entry[Factory]

// Entries lists the registered workloads with their descriptions and
// parameters, sorted by name.
func Entries() []Entry { return reg.Entries() }

// Describe returns a workload's one-line description.
func Describe(name string) string {
	e, _ := reg.Get(name)
	return e.Desc
}

// ErrUnknown is wrapped by New for an unregistered workload name.
var ErrUnknown = errors.New("unknown workload")

// New returns a fresh instance of the workload registered as name. v holds
// parameter values by name: the workload takes the ones it declared
// (defaults for those missing) and ignores the rest. Errors: ErrUnknown
// (with the valid names), every value its Param refuses, or a parameter
// the factory reads but did not declare (registry.UndeclaredError).
func New(name string, v Values) (_ Workload, err error) {
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return nil, err
	}
	own := registry.Pick(e.Params, v)
	if errs := registry.Check(name+": ", e.Params, own); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	defer registry.Recover(&err, "workload "+name+": ")
	return e.Value(own), nil
}

// Lookup returns the parameters workload name declared, or an error
// wrapping ErrUnknown that suggests the nearest name and lists the valid
// ones.
func Lookup(name string) ([]Param, error) {
	e, err := reg.Lookup(name, ErrUnknown)
	return e.Params, err
}

// ParamsOf returns the parameters workload name declared (nil if unknown).
func ParamsOf(name string) []Param {
	e, _ := reg.Get(name)
	return e.Params
}

// SharedSafe is implemented by workloads whose data stays correct when
// several clients hold one lock at once, as a semaphore of N > 1 permits
// lets them (strategies.PermitsOf): lock-cycle (no data at all). A
// read-modify-write under the lock (flash-sale's stock, the counters of
// hot-key, long-task and nested) would lose updates by design, so those
// workloads are not: CheckPermits refuses them such a locker.
// SharedSafe is a marker: the method does nothing.
type SharedSafe interface {
	SharedSafe()
}

// CheckPermits returns an error when workload w (registered as name) needs
// mutual exclusion and strategy's locker admits permits > 1 holders of one
// lock at once (strategies.PermitsOf); nil for an exclusive lock or a
// SharedSafe workload. The engine calls it once the locker is built, so
// that it judges any semaphore (an external adapter learns its permits at
// run time), not one strategy.
func CheckPermits(name string, w Workload, strategy string, permits int) error {
	if permits <= 1 {
		return nil
	}
	if _, ok := w.(SharedSafe); ok {
		return nil
	}
	return fmt.Errorf("strategy %s is a semaphore of %d permits (%d clients may hold one lock at once), and workload %s's data needs mutual exclusion: it would lose updates by design; run it on %s, or with 1 permit",
		strategy, permits, permits, name, strings.Join(SharedSafeNames(), ", "))
}

// SharedSafeNames lists the registered workloads that are SharedSafe,
// sorted.
func SharedSafeNames() []string {
	var out []string
	for _, e := range reg.Entries() {
		if _, ok := e.Value(registry.Pick(e.Params, nil)).(SharedSafe); ok {
			out = append(out, e.Name)
		}
	}
	return out
}
