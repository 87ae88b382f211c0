package workloads

import "github.com/lockbench/lockbench/internal/registry"

// Param is one option a workload declares when it registers (Register's
// params). Name is lower-case words joined by dashes ("read-ratio"): the
// run flag is --NAME, the scenario file's field NAME, the parameter NAME
// after the workload's name in --workload (flash-sale:stock=100) and the
// result's params key NAME with underscores. Doc is one line with the
// unit. Default's dynamic type is the parameter's type (int, int64,
// float64, bool, string or time.Duration) and its value the default in
// force when none is given. Check, when set, validates a value of that
// type and returns an error that says what is wrong without the name
// ("must be at least 1, got 0"); nil accepts every value. It is an alias,
// so that code outside this module can declare parameters.
type Param = registry.Param

// Values are parameter values by name, each of its Param's type: what a
// Factory gets, every parameter the workload declared present. Read them
// with Values.Int, Int64, Float, Bool, String and Duration; reading a name
// the workload did not declare, or with the getter of another type,
// panics with a registry.UndeclaredError, which New returns as its error.
// It is an alias, so that code outside this module can read them.
type Values = registry.Values

// Parameters that more than one workload declares: one declaration each,
// so that they are one flag.
var (
	keysParam = registry.Param{Name: "keys", Doc: "number of lock keys", Default: 1000, Check: registry.Between(1, 1_000_000)}
	zipfParam = registry.Param{Name: "zipf", Doc: "Zipf exponent of the key choice (> 1; 0 = uniform)", Default: 1.1,
		Check: func(v any) error {
			if z, _ := v.(float64); z != 0 && !(z > 1 && z <= 100) {
				return errZipf
			}
			return nil
		}}
)
