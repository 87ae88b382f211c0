package faults

import (
	"fmt"
	"net"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/lockbench/lockbench/drivers"
)

// latencyToxic is the name of the one latency toxic a proxy may carry.
const latencyToxic = "lockbench_latency"

// Proxies puts one in-process toxiproxy proxy (listening on 127.0.0.1:0, a
// free port) in front of each upstream Redis address, so that a latency
// fault can add delay and jitter between clients and one node. Clients must
// dial Addr(i) instead of upstream i. The methods are safe for concurrent
// use.
type Proxies struct {
	mu      sync.Mutex // serialises toxic changes and Close
	closed  bool
	proxies []*toxiproxy.Proxy
	addrs   []string // listen address of proxies[i], 127.0.0.1:port
}

// StartProxies starts one proxy per upstream (host:port), each listening on
// a free loopback port, and returns once every proxy accepts connections.
// The proxy dials its upstream only when a client connects, so an upstream
// that is down shows up as a connection that the proxy closes at once.
// toxiproxy's logging is discarded. Errors: an upstream that is not
// host:port, a proxy that cannot listen or start; proxies started before
// the error are stopped.
func StartProxies(upstreams []string) (*Proxies, error) {
	// A no-op logger keeps toxiproxy silent; a private metrics container
	// (with no metric enabled) is required by the links, which read it.
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := &Proxies{}
	for i, up := range upstreams {
		if _, _, err := net.SplitHostPort(up); err != nil {
			p.Close()
			return nil, fmt.Errorf("faults: proxy %d: upstream %q: %w", i, up, err)
		}
		px := toxiproxy.NewProxy(server, fmt.Sprintf("lockbench-node-%d", i), "127.0.0.1:0", up)
		if err := px.Start(); err != nil {
			p.Close()
			return nil, fmt.Errorf("faults: proxy %d for %s: %w", i, up, err)
		}
		p.proxies = append(p.proxies, px)
		p.addrs = append(p.addrs, px.Listen) // the real port, set by Start
	}
	return p, nil
}

// ProxyNodes puts a proxy in front of every node when one of specs acts
// through proxies (Spec.Proxied), and returns the nodes the clients dial
// instead (each node's settings kept, its Addr the proxy's; a TLS node's
// certificate still checked against its own host name) with the proxies,
// which the caller closes after the scenario (Env.Proxies). Without such
// a fault it returns nodes and nil. Errors: a proxy that cannot start.
func ProxyNodes(specs []Spec, nodes []drivers.Endpoint) ([]drivers.Endpoint, *Proxies, error) {
	proxied := false
	for _, s := range specs {
		proxied = proxied || s.Proxied()
	}
	if !proxied {
		return nodes, nil, nil
	}
	var ups []string
	for _, n := range nodes {
		ups = append(ups, n.Addr)
	}
	proxies, err := StartProxies(ups)
	if err != nil {
		return nodes, nil, fmt.Errorf("fault proxies: %w", err)
	}
	out := make([]drivers.Endpoint, len(nodes))
	for i, n := range nodes {
		out[i] = n
		out[i].Addr = proxies.Addr(i)
		if n.TLS != nil && n.TLS.ServerName == "" {
			// TLS runs through the proxy: check the certificate
			// against the server's name, not the proxy's.
			out[i].TLS = n.TLS.Clone()
			out[i].TLS.ServerName, _, _ = net.SplitHostPort(n.Addr)
		}
	}
	return out, proxies, nil
}

// Addr returns the proxy address (127.0.0.1:port) clients use instead of
// upstream i. It panics when i is out of range, like a slice index.
func (p *Proxies) Addr(i int) string {
	return p.addrs[i]
}

// AddLatency adds delay (and jitter, uniformly +-jitter) to every reply
// from upstream i (the downstream direction), until RemoveLatency; requests
// to the upstream are not delayed. Each chunk of reply bytes is held until
// delay+-jitter after the proxy read it, so replies keep their order. It
// acts on open connections and on those opened later. delay and jitter are
// durations rounded to whole milliseconds (toxiproxy's resolution), so
// values under 0.5 ms count as 0; a delay already in place on i is
// replaced. Errors: bad index, negative delay or jitter, Proxies closed,
// toxiproxy errors.
func (p *Proxies) AddLatency(i int, delay, jitter time.Duration) error {
	if delay < 0 || jitter < 0 {
		return fmt.Errorf("faults: latency: negative delay %v or jitter %v", delay, jitter)
	}
	return p.addToxic(i, latencyToxic, "latency", toxicDownstream, map[string]int64{
		"latency": delay.Round(time.Millisecond).Milliseconds(),
		"jitter":  jitter.Round(time.Millisecond).Milliseconds(),
	})
}

// RemoveLatency removes the latency toxic from upstream i (no error if
// none); replies already held are passed on without further delay.
// Errors: bad index, toxiproxy errors.
func (p *Proxies) RemoveLatency(i int) error { return p.removeToxics(i, latencyToxic) }

// Close stops every proxy: it stops listening and closes every client
// connection and its upstream connection. Safe to call twice.
func (p *Proxies) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, px := range p.proxies {
		px.Stop()
	}
}

func (p *Proxies) proxy(i int) (*toxiproxy.Proxy, error) {
	if i < 0 || i >= len(p.proxies) {
		return nil, fmt.Errorf("faults: no proxy %d (have %d)", i, len(p.proxies))
	}
	return p.proxies[i], nil
}
