package faults

import "sync"

// ReplLink is the replication link of a Sentinel layout's replica, run
// through an in-process proxy so that the failover fault can cut it
// (Env.ReplLink): hand Linker to topology.StartSentinel, which starts the
// proxy in front of the master; Close stops it after the layout. The zero
// ReplLink is ready to use; a nil *ReplLink is no link (the replica
// replicates directly). The methods are safe for concurrent use.
type ReplLink struct {
	mu sync.Mutex
	px *Proxies // nil until the link is started
}

// NewReplLink returns a link for a Sentinel layout that specs may damage:
// one when a fault needs a server (Spec.Needs), nil when none does.
func NewReplLink(specs []Spec) *ReplLink {
	for _, s := range specs {
		if s.Needs() != NeedsNothing {
			return &ReplLink{}
		}
	}
	return nil
}

// Linker is the function topology.StartSentinel calls with the master's
// address to learn the one the replica replicates from: it starts the
// link's proxy in front of the master and returns the proxy's address.
// It returns nil for a nil link (the replica replicates directly).
func (l *ReplLink) Linker() func(master string) (string, error) {
	if l == nil {
		return nil
	}
	return func(master string) (string, error) {
		px, err := StartProxies([]string{master})
		if err != nil {
			return "", err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.px != nil {
			l.px.Close() // a second start (a retried layout): one link at a time
		}
		l.px = px
		return px.Addr(0), nil
	}
}

// Started reports whether the link's proxy was started (false for a nil
// link).
func (l *ReplLink) Started() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.px != nil
}

// Cut stops the link's proxy: the replica hears nothing more from the
// master. Close is the same; Cut says what the failover does with it.
func (l *ReplLink) Cut() { l.Close() }

// Close stops the link's proxy, if started. Safe on a nil link and twice.
func (l *ReplLink) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.px != nil {
		l.px.Close()
	}
}
