package strategies

func init() {
	Register("segmented", Info{Desc: "atomic locks over N stock segments per item (--segments, default 8): an order locks one segment, picked by a hash of its order id, moving on when it is sold out"},
		func(c Config) (Locker, error) {
			n := c.Segments
			if n <= 0 {
				n = 8
			}
			return &segmented{atomicLocker{d: c.Nodes[0], ttl: c.TTL}, n}, nil
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
