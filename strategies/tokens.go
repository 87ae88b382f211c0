package strategies

import "context"

// TokenTracker is told of every token a strategy may store in Redis, so
// that lockbench's liveness oracle (internal/liveness) can tell a live
// holder's lock from an orphan: a lock key holding a token that no live
// holder owns. The engine sets Config.Tokens; strategies call it through
// Config.Sent and Config.Renewing, which do nothing when it is nil.
//
// The token passed is what the strategy stores under the lock key: the
// string value of a plain lock, the hash field of a reentrant one (the
// client's Owner), the sorted-set member of a semaphore's permit; it is
// the Token of the lease the attempt returns. The oracle reads only
// string, hash and sorted-set lock keys. A token stored but never
// reported is ignored, so a strategy that does not report its tokens gets
// its liveness figures marked as not measured, never wrong.
// Implementations are safe for concurrent use and cheap (they are called
// on every attempt).
type TokenTracker interface {
	// Sent is called right before a command that may store token under
	// key is sent (SET NX, an acquire script), once per attempt and per
	// node. ctx is the attempt's context (it carries the Client).
	Sent(ctx context.Context, key, token string)
	// Renewing is called right before a renewal (or extend) of token under
	// key is sent.
	Renewing(key, token string)
}

// Sent tells c.Tokens that token may be stored under key (see
// TokenTracker.Sent).
func (c Config) Sent(ctx context.Context, key, token string) { sent(c.Tokens, ctx, key, token) }

// Renewing tells c.Tokens that a renewal of token under key is sent.
func (c Config) Renewing(key, token string) { renewing(c.Tokens, key, token) }

// sent is Config.Sent on the tracker a locker keeps (nil: nothing).
func sent(t TokenTracker, ctx context.Context, key, token string) {
	if t != nil {
		t.Sent(ctx, key, token)
	}
}

// renewing is Config.Renewing on the tracker a locker keeps (nil: nothing).
func renewing(t TokenTracker, key, token string) {
	if t != nil {
		t.Renewing(key, token)
	}
}

// ClientID returns the ID of the Client in ctx (see WithClient), and false
// when ctx carries none. Unlike ClientFrom it makes no token.
func ClientID(ctx context.Context) (int, bool) {
	c, ok := ctx.Value(clientKey{}).(Client)
	return c.ID, ok
}
