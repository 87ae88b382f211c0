package strategies

import "github.com/lockbench/lockbench/internal/registry"

// Param is one option a strategy declares in Info.Params. Name is
// lower-case words joined by dashes ("wait-timeout"): the run flag is
// --NAME, the scenario file's field NAME and the result's params key NAME
// with underscores. Doc is one line with the unit. Default's dynamic type
// is the parameter's type (int, int64, float64, bool, string or
// time.Duration) and its value the default in force when none is given.
// Check, when set, validates a value of that type and returns an error
// that says what is wrong without the name ("must be at least 1, got
// 0"); nil accepts every value. It is an alias, so that code outside this
// module can declare parameters.
type Param = registry.Param

// Values are parameter values by name, each of its Param's type:
// Config.Params, read with Values.Int, Int64, Float, Bool, String and
// Duration (the zero value for a name not present). It is an alias, so
// that code outside this module can pass and read them.
type Values = registry.Values
