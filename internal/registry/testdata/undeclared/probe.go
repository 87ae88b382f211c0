// Package undeclared is TestEveryReadDeclared's counter-example: a
// workload whose factory reads parameters it does not declare.
package undeclared

import (
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

func init() {
	workloads.Register("undeclared-probe", "reads what it does not declare",
		[]registry.Param{{Name: "size", Doc: "items", Default: 1}},
		func(v registry.Values) workloads.Workload {
			_ = v.Int("size")    // declared: fine
			_ = v.Int("szie")    // a typo
			_ = v.String("size") // the wrong type
			_ = helper(v)        // followed into the package's functions
			return nil
		})
}

func helper(v registry.Values) int64 { return v.Int64("count") }

// stray reads a parameter outside every factory.
func stray(v registry.Values, name string) (bool, float64) { return v.Bool("on"), v.Float(name) }

var _ = stray
