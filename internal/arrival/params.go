package arrival

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The parameter readers the shapes' parsers share.

// keyValues splits "k=v,k=v" into pairs in order; errors: an item without
// "=", or an empty list.
func keyValues(form, params string) ([][2]string, error) {
	if strings.TrimSpace(params) == "" {
		return nil, fmt.Errorf("no parameters: want %s", form)
	}
	var out [][2]string
	for _, item := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not key=value: want %s", item, form)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

// named reads the pairs of a shape with fixed keys, each required once.
func named(form, params string, keys ...string) (map[string]string, error) {
	kvs, err := keyValues(form, params)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, kv := range kvs {
		known := false
		for _, k := range keys {
			known = known || k == kv[0]
		}
		if !known {
			return nil, fmt.Errorf("unknown key %q (keys: %s): want %s", kv[0], strings.Join(keys, ", "), form)
		}
		if _, dup := m[kv[0]]; dup {
			return nil, fmt.Errorf("%s is given twice: want %s", kv[0], form)
		}
		m[kv[0]] = kv[1]
	}
	var missing []string
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s missing: want %s", strings.Join(missing, " and "), form)
	}
	return m, nil
}

// parseRate reads a rate in ops/s, 0 to MaxRate.
func parseRate(key, v string) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(r) || math.IsInf(r, 0):
		return 0, fmt.Errorf("%s=%s is not a rate in ops/s", key, v)
	case r < 0:
		return 0, fmt.Errorf("%s=%s: a rate cannot be negative", key, v)
	case r > MaxRate:
		return 0, fmt.Errorf("%s=%s is above %d ops/s", key, v, MaxRate)
	}
	return r, nil
}

// parseSpan reads a duration above 0, in s.
func parseSpan(key, v string) (float64, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s=%s is not a duration (like 30s or 1m)", key, v)
	case d <= 0:
		return 0, fmt.Errorf("%s=%s: want a duration above 0", key, v)
	}
	return d.Seconds(), nil
}

var errNoArrivals = errors.New("the rate is 0 throughout: no arrival would ever be offered")
