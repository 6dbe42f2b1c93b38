package app

import (
	"sync"
	"time"

	"bothy/server/internal/kernel/ids"
)

// sendPaces remembers, per subscription, the most heads a claim of its
// last run in this worker could send in a batch's time (chain.sendLimit,
// learnSendLimit), so that the first claim of its next run takes that
// many instead of webhook.batch_max_deliveries (D-M2-26-89). A busy
// subscription goes on in a new job after every
// webhook.chain_max_deliveries; without the pace, each of those runs
// claimed, signed and leased heads its first batch had no time to send,
// and gave them back.
//
// A pace is used for two webhook.chain_max_duration (span) after it was
// learned, then forgotten: a run that starts later claims the most again
// and learns anew. What is kept is bounded by time, not by a count: the
// entries live in two generations of two spans each, and the older one is
// dropped when a new one begins, so only the subscriptions whose runs
// learned a pace within about the last four spans have an entry. A pace
// of the most a claim may take is not kept. A run of the subscription in
// another worker starts at the most. It is safe for concurrent use.
type sendPaces struct {
	span time.Duration

	mu sync.Mutex
	// since is when the current generation began.
	since             time.Time
	current, previous map[ids.ID]learnedPace
}

// learnedPace is a send limit and when a run learned it.
type learnedPace struct {
	limit int
	at    time.Time
}

// newSendPaces returns the paces of a worker whose runs last span
// (webhook.chain_max_duration).
func newSendPaces(span time.Duration) *sendPaces {
	return &sendPaces{span: span}
}

// get returns the send limit the last run of sub learned within two spans
// before now, or 0 when there is none.
func (p *sendPaces) get(sub ids.ID, now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotate(now)
	e, ok := p.current[sub]
	if !ok {
		e, ok = p.previous[sub]
	}
	if !ok || now.Sub(e.at) >= 2*p.span {
		return 0
	}
	return e.limit
}

// set keeps limit as the pace of sub learned at now; limit 0, the most a
// claim may take, forgets the pace sub had.
func (p *sendPaces) set(sub ids.ID, limit int, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotate(now)
	delete(p.previous, sub)
	if limit == 0 {
		delete(p.current, sub)
		return
	}
	if p.current == nil {
		p.current = map[ids.ID]learnedPace{}
	}
	p.current[sub] = learnedPace{limit: limit, at: now}
}

// rotate begins a new generation when the current one is two spans old,
// so an entry stays at least as long as get uses it; the older
// generation is dropped, and both when the current one is older still.
// The caller holds mu.
func (p *sendPaces) rotate(now time.Time) {
	age := now.Sub(p.since)
	if age < 2*p.span {
		return
	}
	p.previous = p.current
	if age >= 4*p.span {
		p.previous = nil
	}
	p.current = nil
	p.since = now
}
