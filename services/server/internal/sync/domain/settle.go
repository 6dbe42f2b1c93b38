package domain

// Appends take no lock (ADR 0070): a seq is handed out when an append runs,
// but its transaction may commit later than one that took a higher seq, or
// roll back and leave the seq unused. So a round that reads the events after
// its cursor may see a gap below an event it read: either a writer still in
// flight (the event will appear) or a seq that will never hold an event. The
// round handles events only as far as every lower seq is settled, and
// remembers a Horizon to learn later that the writers of the gaps it saw
// have all ended.
//
// Why the rule holds, with three facts: every append assigns its
// transaction an xid before it takes its seq (the appender does so
// explicitly); event_log_seq hands out numbers in call order across
// sessions (CACHE 1); transaction ids are handed out in increasing order.
// Take a round whose read saw seq t committed. Every seq s < t was taken
// before t was, so before that read, by a transaction whose xid was
// assigned before the read. The round then takes its own xid X, after the
// read, so every such writer has an xid below X. When, later, no
// transaction of the database with an xid below X runs any more, all of
// those writers have ended, and a read that starts after that moment sees
// each seq s <= t if and only if it was committed: a seq missing from it is
// missing for good.

// Horizon is what a consumer remembers of a round that stopped at a gap.
// The zero value means none.
type Horizon struct {
	// XID is the xid8 of the round that saw the gap, taken after its read.
	XID uint64
	// Through is the highest seq that round read.
	Through int64
}

// Settlement is what a round may do with the events it read.
type Settlement struct {
	// Handle is how many of the events read, from the first, the round may
	// handle: each has every lower seq above the round's start settled.
	Handle int
	// Held reports whether events read were held back behind a gap.
	Held bool
	// Horizon is the horizon the consumer keeps after the round.
	Horizon Horizon
}

// Settle decides how far a round may go. after is the seq the round reads
// after (Plan.After); seqs are the seqs it read, ascending, all above after;
// stored is the consumer's horizon; storedSettled reports that, before the
// read began, no transaction older than stored.XID ran any more (only
// meaningful for a non-zero stored horizon); roundXID is the round's own
// xid, taken after the read, or 0 when the round cannot vouch for that
// order (it then keeps no new horizon).
//
// A seq is handled when the seqs between it and the one before it are
// settled: none at all, or all at or below a settled stored horizon. When events are held back behind a gap and no unsettled horizon
// is kept, the round's own (roundXID, last seq read) becomes the horizon. A
// horizon that is settled, or whose gaps were all filled, is dropped.
func Settle(after int64, seqs []int64, stored Horizon, storedSettled bool, roundXID uint64) Settlement {
	settled := stored.XID != 0 && storedSettled
	settledThrough := after
	if settled {
		settledThrough = max(after, stored.Through)
	}
	prev, n := after, 0
	for _, s := range seqs {
		if s-1 > max(prev, settledThrough) {
			break
		}
		prev, n = s, n+1
	}
	out := Settlement{Handle: n, Held: n < len(seqs), Horizon: stored}
	switch {
	case out.Held && (stored.XID == 0 || settled):
		out.Horizon = Horizon{}
		if roundXID != 0 {
			out.Horizon = Horizon{XID: roundXID, Through: seqs[len(seqs)-1]}
		}
	case !out.Held && stored.XID != 0 && (settled || prev >= stored.Through):
		out.Horizon = Horizon{}
	}
	return out
}
