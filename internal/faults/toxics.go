package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The toxics lockbench registers with toxiproxy (in this process only), and
// the names its faults give them on a proxy.
const (
	replyLossType = "lockbench_reply_loss"
	holdType      = "lockbench_hold"

	replyLossToxic  = "lockbench_reply_loss"
	blackholeUp     = "lockbench_blackhole_up"
	blackholeDown   = "lockbench_blackhole_down"
	toxicDownstream = "downstream"
)

func init() {
	toxics.Register(replyLossType, new(lossToxic))
	toxics.Register(holdType, new(holdToxic))
}

// lossToxic holds a share P of the chunks that pass (the server's replies,
// on the downstream side) for DelayMS before passing them on, keeping
// their order; with DelayMS = 0 the connection goes silent from the first
// chunk it picks: that chunk and every later one are swallowed, and the
// connection is closed when the toxic is removed. A chunk is what the
// proxy read from the server at once: one reply, or several pipelined
// ones. Dropping only one chunk and passing later ones would shift every
// later reply onto the wrong command of a pipelining client (rueidis),
// which no network does: TCP loses no bytes in the middle of a stream.
type lossToxic struct {
	P       float64 `json:"p"`
	DelayMS int64   `json:"delay_ms"`
}

// lossState is one connection's: whether it went silent.
type lossState struct{ silent bool }

func (t *lossToxic) NewState() any { return new(lossState) }

func (t *lossToxic) Pipe(stub *toxics.ToxicStub) {
	st, _ := stub.State.(*lossState)
	if st == nil {
		st = new(lossState)
	}
	delay := time.Duration(t.DelayMS) * time.Millisecond
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if st.silent {
				continue // swallowed
			}
			if t.P <= 0 || rand.Float64() >= t.P {
				stub.Output <- c
				continue
			}
			if delay <= 0 {
				st.silent = true
				continue
			}
			select {
			case <-time.After(delay - time.Since(c.Timestamp)):
				stub.Output <- c
			case <-stub.Interrupt:
				stub.Output <- c // removed: pass it on at once
				return
			}
		}
	}
}

// Cleanup closes a connection that went silent when the toxic is removed:
// the replies it swallowed are gone, so the later ones must not follow.
func (t *lossToxic) Cleanup(stub *toxics.ToxicStub) {
	if st, _ := stub.State.(*lossState); st != nil && st.silent {
		stub.Close()
	}
}

// holdToxic lets nothing through while it is in place and passes everything it
// held, in order, when it is removed: a network partition that heals, TCP
// retransmitting what it could not deliver. (toxiproxy's timeout toxic with
// timeout 0 would instead drop the bytes, and a pipelining client would
// then match the later replies to the wrong commands.)
type holdToxic struct{}

func (t *holdToxic) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			<-stub.Interrupt // held until the toxic is removed (or replaced)
			stub.Output <- c
			return
		}
	}
}

// AddReplyLoss makes proxy i hold a share p (0..1) of the reply chunks of
// upstream i for delay (rounded to whole ms) before passing them on, or,
// with delay 0, makes a connection silent from the first chunk it picks
// (closed when the reply loss is removed). Requests still reach the
// upstream, which runs them. It acts on open connections and on those
// opened later, until RemoveReplyLoss; one already in place is replaced.
// Errors: bad index, p outside 0..1, a negative delay, Proxies closed.
func (p *Proxies) AddReplyLoss(i int, share float64, delay time.Duration) error {
	if share < 0 || share > 1 || share != share {
		return fmt.Errorf("faults: reply-loss: p=%v is not from 0 to 1", share)
	}
	if delay < 0 {
		return fmt.Errorf("faults: reply-loss: negative delay %v", delay)
	}
	return p.addToxic(i, replyLossToxic, replyLossType, toxicDownstream,
		map[string]any{"p": share, "delay_ms": delay.Round(time.Millisecond).Milliseconds()})
}

// RemoveReplyLoss removes the reply loss of proxy i (no error if none):
// held replies go on at once, silent connections are closed.
func (p *Proxies) RemoveReplyLoss(i int) error { return p.removeToxics(i, replyLossToxic) }

// Blackhole stops all traffic through proxy i, both ways, until
// RemoveBlackhole: open connections hang, and new ones are accepted (the
// proxy completes the TCP handshake and dials the upstream) and then hang
// too; nothing is refused. What clients sent meanwhile is held, not
// dropped, and reaches the server, in order, when the blackhole is
// removed, as TCP's retransmission would deliver it. Errors: bad index,
// Proxies closed, toxiproxy errors.
func (p *Proxies) Blackhole(i int) error {
	if err := p.addToxic(i, blackholeUp, holdType, "upstream", struct{}{}); err != nil {
		return err
	}
	if err := p.addToxic(i, blackholeDown, holdType, toxicDownstream, struct{}{}); err != nil {
		_ = p.removeToxics(i, blackholeUp)
		return err
	}
	return nil
}

// RemoveBlackhole lets traffic through proxy i flow again (no error if
// there is no blackhole).
func (p *Proxies) RemoveBlackhole(i int) error { return p.removeToxics(i, blackholeUp, blackholeDown) }

// addToxic adds (or replaces) the toxic called name on proxy i.
func (p *Proxies) addToxic(i int, name, typ, stream string, attrs any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	px, err := p.proxy(i)
	if err != nil {
		return err
	}
	if p.closed {
		return errors.New("faults: proxies closed")
	}
	body, err := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs})
	if err != nil {
		return fmt.Errorf("faults: %s: %w", name, err)
	}
	if err := removeToxic(px, name); err != nil {
		return fmt.Errorf("faults: %s on proxy %d: %w", name, i, err)
	}
	if _, err := px.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("faults: %s on proxy %d: %w", name, i, err)
	}
	return nil
}

func (p *Proxies) removeToxics(i int, names ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	px, err := p.proxy(i)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if err := removeToxic(px, n); err != nil {
			errs = append(errs, fmt.Errorf("faults: remove %s on proxy %d: %w", n, i, err))
		}
	}
	return errors.Join(errs...)
}

// removeToxic removes the toxic called name from px, if it has one.
func removeToxic(px *toxiproxy.Proxy, name string) error {
	err := px.Toxics.RemoveToxic(context.Background(), name)
	if errors.Is(err, toxiproxy.ErrToxicNotFound) {
		return nil
	}
	return err
}
