package strategies

import "github.com/lockbench/lockbench/internal/registry"

func init() {
	Register("segmented", Info{Desc: "atomic locks over N stock segments per item: an order locks one segment, picked by a hash of its order id, moving on when it is sold out",
		Params: []registry.Param{{Name: "segments", Doc: "stock segments per item, each with its own lock", Default: 8, Check: registry.Between(1, 100_000)}}},
		func(c Config) (Locker, error) {
			return &segmented{atomicLocker{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, c.Params.Int("segments")}, nil
		})
}

// segmented is the articles' fix for a hot item: the stock is split into n
// segments, each with its own lock and share, so n orders can hold locks at
// once. The locking itself is atomic's; the workload does the splitting
// when the locker reports Segments.
type segmented struct {
	atomicLocker
	n int
}

var (
	_ Locker    = (*segmented)(nil)
	_ Segmented = (*segmented)(nil)
)

// Segments is the number of segments per item.
func (s *segmented) Segments() int { return s.n }
