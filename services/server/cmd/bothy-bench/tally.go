package main

import (
	"slices"
	"time"
)

// arrival is one request that reached the receiver: which subscription
// (the app index in the path), the event (webhook-id, seq from the body)
// and the message it carries, with the time it arrived.
type arrival struct {
	// Sub is the index of the app whose subscription sent it.
	Sub int
	// WebhookID is the webhook-id header: the event ID, the same for every
	// subscription of a fan-out and on every retry.
	WebhookID string
	// Seq is the event's seq from the body: the order of the event log.
	Seq int64
	// MessageID is resource.id of the body: the message posted.
	MessageID string
	// At is when the receiver read the request.
	At time.Time
}

// tally counts arrivals per subscription: a second arrival of one
// webhook-id at one subscription is a duplicate (at least once allows
// it); a new event whose seq is not above every seq the subscription got
// before is an order violation (strict order per subscription). A
// webhook-id seen at another subscription is neither: in a fan-out every
// subscription gets the same event.
type tally struct {
	unique, duplicates, violations int

	subs map[int]*subTally
}

// subTally is the state of one subscription.
type subTally struct {
	seen   map[string]struct{}
	maxSeq int64
}

// add counts a and reports whether it was new (not a duplicate).
func (t *tally) add(a arrival) bool {
	if t.subs == nil {
		t.subs = map[int]*subTally{}
	}
	s := t.subs[a.Sub]
	if s == nil {
		s = &subTally{seen: map[string]struct{}{}}
		t.subs[a.Sub] = s
	}
	if _, dup := s.seen[a.WebhookID]; dup {
		t.duplicates++
		return false
	}
	s.seen[a.WebhookID] = struct{}{}
	t.unique++
	if len(s.seen) > 1 && a.Seq <= s.maxSeq {
		t.violations++
	}
	s.maxSeq = max(s.maxSeq, a.Seq)
	return true
}

// durations is a sorted sample of latencies.
type durations []time.Duration

// summarize returns a sorted copy of in.
func summarize(in []time.Duration) durations {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

// count is the size of the sample.
func (d durations) count() int { return len(d) }

// max is the largest value, 0 for an empty sample.
func (d durations) max() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)-1]
}

// percentile returns the p-th percentile (0 to 100) by the nearest-rank
// method: the smallest value with at least p percent of the sample at or
// below it. An empty sample gives 0.
func (d durations) percentile(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	// rank = ceil(p/100 * n), at least 1.
	n := float64(len(d))
	rank := int(p / 100 * n)
	if float64(rank) < p/100*n {
		rank++
	}
	rank = min(max(rank, 1), len(d))
	return d[rank-1]
}

// secondP99s groups the latencies lat by the second after from in which
// their messages were posted (posted, element for element) and returns
// the p99 of each second that has any, sorted: a steady tail shows as a
// narrow spread, bursts of late deliveries as a few high seconds.
func secondP99s(from time.Time, posted []time.Time, lat []time.Duration) durations {
	bySecond := map[int64][]time.Duration{}
	for i, p := range posted {
		s := int64(p.Sub(from) / time.Second)
		bySecond[s] = append(bySecond[s], lat[i])
	}
	out := make([]time.Duration, 0, len(bySecond))
	for _, l := range bySecond {
		out = append(out, summarize(l).percentile(99))
	}
	return summarize(out)
}

// eventTimes is what the scenario's database tells of an event: when the
// api read its clock for it, before its insert (occurred_at), and when
// the first consumer round that routed it made its delivery rows
// (created_at, the round's clock after it read the event's reach).
type eventTimes struct {
	Occurred, Routed time.Time
}

// stages splits the latency of each delivery at its event and its row
// (D-BE-18): ToEvent from the post's send to its event (the api),
// ToRow from the event to its delivery row (the post's commit, the
// wake-up, the round's first reads), ToReceipt from the row to the
// receiver reading the request (the rest of the round and its commit,
// the run's lock, claim and commit, the signing and the request).
type stages struct {
	ToEvent, ToRow, ToReceipt durations
}

// splitStages returns the stages of every arrival whose post and event
// times are known (started by message ID, events by event ID, the
// webhook-id), each sorted.
func splitStages(arrivals []arrival, started map[string]time.Time, events map[string]eventTimes) stages {
	var toEvent, toRow, toReceipt []time.Duration
	for _, a := range arrivals {
		sent, posted := started[a.MessageID]
		ev, routed := events[a.WebhookID]
		if !posted || !routed {
			continue
		}
		toEvent = append(toEvent, ev.Occurred.Sub(sent))
		toRow = append(toRow, ev.Routed.Sub(ev.Occurred))
		toReceipt = append(toReceipt, a.At.Sub(ev.Routed))
	}
	return stages{ToEvent: summarize(toEvent), ToRow: summarize(toRow), ToReceipt: summarize(toReceipt)}
}
