package workloads

import "github.com/lockbench/lockbench/internal/registry"

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
