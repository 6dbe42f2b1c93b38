package domain

import "bothy/server/internal/kernel/errs"

// ErrPlanInput is returned by PlanRound for input no caller can produce
// from a consistent database: a wiring or data bug, never a user mistake.
var ErrPlanInput = errs.New(errs.CodeInternal, "sync: impossible consumer round input")

// Plan is what one consumer round does (docs/spec/04-sync-protocol.md 7.6).
type Plan struct {
	// LostFrom and LostTo bound the range of seqs the consumer lost because
	// its cursor fell behind sync.event_retention (both inclusive). Both are
	// zero when nothing was lost.
	LostFrom, LostTo int64
	// After is the seq after which the round reads: events with
	// seq > After, in seq order.
	After int64
	// Limit is the most events the round reads (consumer.batch_size).
	Limit int
}

// Lost reports whether the plan has a lost range to report before the first
// event (sync.ConsumerLossHandler).
func (p Plan) Lost() bool { return p.LostTo > 0 }

// NextCursor returns the cursor after a round that read n events, the last
// of which had seq lastSeq: lastSeq when it read any, else After, which moves
// the cursor past a lost range even when nothing is left to read.
func (p Plan) NextCursor(lastSeq int64, n int) int64 {
	if n > 0 && lastSeq > p.After {
		return lastSeq
	}
	return p.After
}

// PlanRound plans a round of a consumer whose cursor (the seq of the last
// event it handled) is cursor, over a log whose lowest retained seq is
// minRetained (sync.LogReader.MinRetainedSeq), reading at most batchSize
// events. When cursor+1 < minRetained, the events cursor+1 to minRetained-1
// are gone: the plan reports them as the lost range and reads after it.
//
// It returns ErrPlanInput for a negative cursor, a minRetained below one or
// a batchSize below one.
func PlanRound(cursor, minRetained int64, batchSize int) (Plan, error) {
	if cursor < 0 || minRetained < 1 || batchSize < 1 {
		return Plan{}, ErrPlanInput
	}
	p := Plan{After: cursor, Limit: batchSize}
	if cursor+1 < minRetained {
		p.LostFrom, p.LostTo, p.After = cursor+1, minRetained-1, minRetained-1
	}
	return p, nil
}
