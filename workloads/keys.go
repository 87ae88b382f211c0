package workloads

import (
	"context"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// SafetyMargin is added to a scenario's warm-up and duration to make the
// safety TTL of the data keys its workload writes (Env.KeyTTL): the keys
// outlive the scenario by at most this much when the run cannot delete
// them (SIGKILL, a stalled or unreachable server), and a verification or
// a slow stop after the measured window still finds them.
const SafetyMargin = 10 * time.Minute

// setKeys: KEYS[i] = ARGV[i+1], each with a TTL of ARGV[1] ms (none for 0).
var setKeys = drivers.NewScript(`local ttl = ARGV[1]
for i, k in ipairs(KEYS) do
	if ttl == '0' then
		redis.call('set', k, ARGV[i + 1])
	else
		redis.call('set', k, ARGV[i + 1], 'PX', ttl)
	end
end
return #KEYS`)

// SetData creates a workload's data keys in Setup, keys[i] = vals[i], each
// with the safety TTL env.KeyTTL (none when 0), in one script call: the
// keys must share a hash slot on a Cluster. Workloads write their data
// keys afterwards with SET ... KEEPTTL and INCR, which keep the TTL, and
// create no data key outside Setup. With env.Follower set it writes
// nothing: the leading execution segment wrote the keys.
func SetData(ctx context.Context, env *Env, keys, vals []string) error {
	if len(keys) == 0 || env.Follower {
		return nil
	}
	args := make([]string, 0, len(vals)+1)
	args = append(args, strconv.FormatInt(env.KeyTTL.Milliseconds(), 10))
	args = append(args, vals...)
	_, err := env.Data.Eval(ctx, setKeys, keys, args...)
	return err
}
