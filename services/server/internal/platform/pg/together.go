package pg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/gopool"
	"bothy/server/internal/kernel/txn"
)

// errNotSent is the error of a statement that travelled in a round trip
// of txn.Together after a statement that failed: the server skipped it.
// It wraps nothing, so an error mapping of the fn that sent it never
// mistakes another fn's failure for its own; Together leaves it out when
// the failure itself is there.
var errNotSent = errs.New(errs.CodeInternal, "pg: not run: a statement sent in the same round trip failed before it")

// gather is the txn.Gatherer of a unit of work over tx (ADR 0085). Each fn
// runs in a goroutine of its own with a gatheredTx as its transaction;
// the calling goroutine waits until every fn that has not returned has
// sent a statement, sends them all as one batch through tx (so the first
// round trip of a unit of work also carries its BEGIN), hands each fn its
// results and repeats until every fn returned. A Together inside a fn
// joins the same gathering: its fns send their statements with everyone
// else's while the fn that called it waits for them. Statements go in the
// order of the fns (a nested fn at the place of the fn that called it), so
// two runs of the same use case take their locks in the same order. A
// panic in a fn is raised again where its Together was called, once every
// fn of that call has ended.
func gather(tx pgx.Tx) txn.Gatherer { return gatherer(tx, nil) }

// closeWith is the gatherer of txn.Last in the outermost unit of work over
// tx (ADR 0090): it gathers the fns' statements as gather does, after
// those of the functions txn.AtCommit kept (taken with take, ADR 0093),
// and sends the COMMIT at the end of their first round trip. A statement
// a fn sends after that round trip fails, since the transaction has
// ended. It returns the fns' errors, else the commit's. When the fns send
// nothing, the unit of work commits at its end as usual; with no fns at
// all (the empty Last at the end of Do, ADR 0093) nothing is gathered.
func closeWith(tx *lazyTx, take func() []func(ctx context.Context) error) txn.Gatherer {
	g := gatherer(tx, tx)
	return func(ctx context.Context, fns []func(ctx context.Context) error) error {
		if fns = append(take(), fns...); len(fns) == 0 {
			return nil
		}
		return g(ctx, fns)
	}
}

// gatherer is gather over tx, and the gatherer of closeWith when closing
// is tx.
func gatherer(tx pgx.Tx, closing *lazyTx) txn.Gatherer {
	return func(ctx context.Context, fns []func(ctx context.Context) error) error {
		g := &gathering{tx: tx, msgs: make(chan gatherMsg), closing: closing}
		top := &participant{}
		g.start(ctx, top, fns)
		g.run(ctx)
		if err := top.ended(); err != nil || closing == nil || !closing.committed {
			// Without a statement to travel with, the COMMIT of a Last
			// waits for the unit of work's end.
			return err
		}
		return closing.commitErr()
	}
}

// gathering is one top-level Together: its participants, each a fn of it
// or of a Together nested in one, and the channel they report on.
type gathering struct {
	tx   pgx.Tx
	msgs chan gatherMsg
	// closing is the transaction whose COMMIT the next round trip carries
	// (closeWith); nil once it went, and for Together.
	closing *lazyTx
	// decoding serialises the decoding of rows by the fns, which run
	// concurrently: the connection's pgtype.Map caches its scan plans and
	// is not safe for concurrent use.
	decoding sync.Mutex
	// parts are the participants, indexed by the id they report with.
	parts []*participant
	// running counts the participants whose goroutine runs Go code, so
	// that no statement can be expected from any other.
	running int
	// failed is set once a participant returned an error or panicked:
	// the COMMIT of closing no longer goes with the statements of the
	// others, so a function that failed before it sent anything still
	// rolls the unit of work back.
	failed bool
}

// participant is one fn of a Together, or stands for the caller of the
// top one (no parent, never running).
type participant struct {
	parent *participant
	// order is its place among the fns: the indexes from the top
	// Together down to it.
	order []int
	// pending holds its statements while it waits for their results.
	pending *gatherMsg
	// open counts the fns of its nested Together that have not ended;
	// kids holds their errors, resume wakes it when they all ended.
	open     int
	kids     []error
	panicked bool
	panicVal any
	resume   chan struct{}
}

// ended returns the outcome of the fns of p's Together: their errors
// joined, or their first panic raised again.
func (p *participant) ended() error {
	if p.panicked {
		panic(p.panicVal)
	}
	return joinGathered(p.kids)
}

// start runs fns as the participants of parent's Together.
func (g *gathering) start(ctx context.Context, parent *participant, fns []func(ctx context.Context) error) {
	parent.open, parent.kids = len(fns), make([]error, len(fns))
	parent.panicked, parent.panicVal = false, nil
	for i, fn := range fns {
		id := len(g.parts)
		p := &participant{parent: parent, order: append(slices.Clone(parent.order), i)}
		g.parts = append(g.parts, p)
		g.running++
		ptx := &gatheredTx{parent: g.tx, part: id, msgs: g.msgs, decoding: &g.decoding}
		if g.closing != nil {
			// A fn of a Last whose COMMIT has not gone yet (FollowCommit).
			ptx.follow = &g.closing.follow
		}
		// A Last inside a fn is a Together: the other fns go on.
		pctx := txn.WithCloser(txn.WithGatherer(context.WithValue(ctx, txKey{}, pgx.Tx(ptx)), g.nested(p, id)), nil)
		// On a goroutine that outlives fn (ADR 0109): a fn goes deep, into
		// its use case and pgx, and would grow a new goroutine's stack.
		gopool.Go(func() {
			m := gatherMsg{part: id, done: true}
			defer func() {
				if r := recover(); r != nil {
					m.panicked, m.panic = true, r
				}
				g.msgs <- m
			}()
			m.err = fn(pctx)
		})
	}
}

// nested is the txn.Gatherer inside the fn of participant p (reporting
// as id): its fns join the gathering, and the fn waits until they all
// ended.
func (g *gathering) nested(p *participant, id int) txn.Gatherer {
	return func(ctx context.Context, fns []func(ctx context.Context) error) error {
		resume := make(chan struct{})
		g.msgs <- gatherMsg{part: id, ctx: ctx, fns: fns, resume: resume}
		<-resume
		// The gatherer wrote the outcome before it closed resume.
		return p.ended()
	}
}

// run serves the participants until every one ended: it takes their
// messages while any of them runs, then sends the statements of all that
// wait as one batch, in the order of the fns, and hands out the results.
func (g *gathering) run(ctx context.Context) {
	for {
		for g.running > 0 {
			g.take(<-g.msgs)
		}
		var waiting []*participant
		for _, p := range g.parts {
			if p.pending != nil {
				waiting = append(waiting, p)
			}
		}
		if len(waiting) == 0 {
			// Nobody runs or waits, so nobody waits for nested fns: all
			// ended.
			return
		}
		slices.SortFunc(waiting, func(a, b *participant) int { return slices.Compare(a.order, b.order) })
		round := make([]gatherMsg, len(waiting))
		for i, p := range waiting {
			round[i], p.pending = *p.pending, nil
		}
		var results [][]gatheredResult
		if g.closing != nil && !g.failed {
			results = sendClosing(ctx, g.closing, round)
			g.closing = nil
		} else {
			results = sendGathered(ctx, g.tx, round, nil, nil)
		}
		for i := range waiting {
			g.running++
			round[i].reply <- results[i]
		}
	}
}

// take applies the message of a running participant: it returned, it
// waits for the fns of a Together it called, or it waits for the results
// of its statements.
func (g *gathering) take(m gatherMsg) {
	p := g.parts[m.part]
	g.running--
	switch {
	case m.done:
		g.failed = g.failed || m.err != nil || m.panicked
		parent := p.parent
		parent.kids[p.order[len(p.order)-1]] = m.err
		if m.panicked && !parent.panicked {
			parent.panicked, parent.panicVal = true, m.panic
		}
		parent.open--
		if parent.open == 0 && parent.resume != nil {
			g.running++
			close(parent.resume)
			parent.resume = nil
		}
	case m.fns != nil:
		p.resume = m.resume
		g.start(m.ctx, p, m.fns)
	default:
		p.pending = &m
	}
}

// joinGathered joins the errors of Together's fns, without the errNotSent
// of fns whose statements the server skipped when another error is there.
func joinGathered(fnErrs []error) error {
	var real, skipped []error
	for _, err := range fnErrs {
		switch {
		case err == nil:
		case errors.Is(err, errNotSent):
			skipped = append(skipped, err)
		default:
			real = append(real, err)
		}
	}
	switch {
	case len(real) == 1:
		// Alone, the error stays what its fn returned.
		return real[0]
	case len(real) > 1:
		return errors.Join(real...)
	}
	return errors.Join(skipped...)
}

// gatherMsg is what a fn of Together tells the gatherer: the statements
// it sent and where their results go, the fns of a Together it called
// (with their context and what wakes it), or that it returned.
type gatherMsg struct {
	part     int
	queries  []*pgx.QueuedQuery
	reply    chan []gatheredResult
	ctx      context.Context
	fns      []func(ctx context.Context) error
	resume   chan struct{}
	done     bool
	err      error
	panicked bool
	panic    any
}

// gatheredResult is the whole result of one statement, read from the
// batch: the columns, a copy of every row, the command tag or the error.
type gatheredResult struct {
	fields []pgconn.FieldDescription
	rows   [][][]byte
	tag    pgconn.CommandTag
	err    error
}

// sendGathered sends the statements of round as one batch through tx and
// reads every result. After a failed statement the server skips the rest
// of the batch, so those get errNotSent; a failure of the batch itself
// (the connection, the end of the pipeline) goes to every statement that
// has no error yet.
//
// With last set, a statement travels after those of round and its result
// goes to *last: the COMMIT of closeWith. After a failed statement of
// round the server skips it too, and *last gets errNotSent. The
// statements of follow (FollowCommit) travel after the COMMIT and tell
// their groups' done how they went, never round or *last.
func sendGathered(ctx context.Context, tx pgx.Tx, round []gatherMsg, last *gatheredResult, follow []followGroup) [][]gatheredResult {
	b := &pgx.Batch{}
	for _, m := range round {
		for _, q := range m.queries {
			// A copy without the callback: pgx must not run a fn's callback
			// in this goroutine; the fn's own batch runs it (gatheredBatch).
			b.QueuedQueries = append(b.QueuedQueries, &pgx.QueuedQuery{SQL: q.SQL, Arguments: q.Arguments})
		}
	}
	if last != nil {
		b.Queue("commit")
		queueFollows(b, follow)
	}
	out := make([][]gatheredResult, len(round))
	br := tx.SendBatch(ctx, b)
	failed := false
	for i, m := range round {
		out[i] = make([]gatheredResult, len(m.queries))
		for j := range m.queries {
			if failed {
				out[i][j].err = errNotSent
				continue
			}
			out[i][j] = readGathered(br)
			failed = out[i][j].err != nil
		}
	}
	if last != nil {
		*last = gatheredResult{err: errNotSent}
		if !failed {
			*last = readGathered(br)
			failed = last.err != nil
		}
		if !failed {
			readFollows(br, follow)
			// An error of Close now belongs to the statements that
			// followed the COMMIT, whose done got it.
			_ = br.Close()
			return out
		}
		notFollowed(follow)
	}
	if err := br.Close(); err != nil && !failed {
		for i := range out {
			for j := range out[i] {
				out[i][j].err = err
			}
		}
		if last != nil {
			last.err = err
		}
	}
	return out
}

// sendClosing sends round with the COMMIT of tx (closeWith) and keeps the
// commit's outcome on tx, whose unit of work then ends without a round
// trip of its own.
func sendClosing(ctx context.Context, tx *lazyTx, round []gatherMsg) [][]gatheredResult {
	var commit gatheredResult
	out := sendGathered(ctx, tx, round, &commit, tx.follow.take())
	if !errors.Is(commit.err, errNotSent) {
		tx.committedWith(commit.tag, commit.err)
	}
	return out
}

// readGathered reads the next result of br whole.
func readGathered(br pgx.BatchResults) gatheredResult {
	rows, err := br.Query()
	if err != nil {
		return gatheredResult{err: err}
	}
	defer rows.Close()
	r := gatheredResult{fields: slices.Clone(rows.FieldDescriptions())}
	for rows.Next() {
		raw := rows.RawValues()
		row := make([][]byte, len(raw))
		for k, v := range raw {
			if v != nil {
				row[k] = slices.Clone(v)
			}
		}
		r.rows = append(r.rows, row)
	}
	rows.Close()
	r.tag, r.err = rows.CommandTag(), rows.Err()
	return r
}

// gatheredTx is the transaction a fn of Together sees: its statements go
// to the gatherer and it blocks until their results are read. It supports
// what queries and batches need (Exec, Query, QueryRow, SendBatch); a
// savepoint, COPY, Prepare, commit and rollback belong to the unit of
// work and are refused inside Together.
type gatheredTx struct {
	parent pgx.Tx
	part   int
	msgs   chan gatherMsg
	// follow takes the statements of FollowCommit in a fn of a Last whose
	// COMMIT has not gone yet; nil elsewhere.
	follow *follows
	// decoding is the gathering's (gathering.decoding).
	decoding *sync.Mutex
}

var _ pgx.Tx = (*gatheredTx)(nil)

// errNotTogether is returned for what a fn of Together may not do.
func errNotTogether(what string) error {
	return errs.New(errs.CodeInternal, fmt.Sprintf("pg: %s is not supported inside txn.Together", what))
}

// send hands queries to the gatherer and waits for their results.
func (t *gatheredTx) send(queries []*pgx.QueuedQuery) []gatheredResult {
	reply := make(chan []gatheredResult, 1)
	t.msgs <- gatherMsg{part: t.part, queries: queries, reply: reply}
	return <-reply
}

func (t *gatheredTx) one(sql string, args []any) gatheredResult {
	return t.send([]*pgx.QueuedQuery{{SQL: sql, Arguments: args}})[0]
}

func (t *gatheredTx) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r := t.one(sql, args)
	return r.tag, r.err
}

func (t *gatheredTx) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r := t.one(sql, args)
	if r.err != nil {
		return nil, r.err
	}
	return t.rows(r), nil
}

func (t *gatheredTx) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r := t.one(sql, args)
	return &lazyRow{rows: t.rows(r), err: r.err}
}

func (t *gatheredTx) SendBatch(_ context.Context, b *pgx.Batch) pgx.BatchResults {
	if len(b.QueuedQueries) == 0 {
		return &gatheredBatch{tx: t}
	}
	return &gatheredBatch{tx: t, queries: b.QueuedQueries, results: t.send(b.QueuedQueries)}
}

func (t *gatheredTx) rows(r gatheredResult) *gatheredRows {
	return &gatheredRows{res: r, typeMap: t.parent.Conn().TypeMap(), decoding: t.decoding, conn: t.parent.Conn(), at: -1}
}

func (t *gatheredTx) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errNotTogether("COPY")
}

func (t *gatheredTx) Prepare(context.Context, string, string) (*pgconn.StatementDescription, error) {
	return nil, errNotTogether("Prepare")
}

func (t *gatheredTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *gatheredTx) Conn() *pgx.Conn { return t.parent.Conn() }

func (t *gatheredTx) Begin(context.Context) (pgx.Tx, error) {
	return nil, errNotTogether("a savepoint")
}

func (t *gatheredTx) Commit(context.Context) error { return errNotTogether("commit") }

func (t *gatheredTx) Rollback(context.Context) error { return errNotTogether("rollback") }

// gatheredBatch replays the results of a fn's batch, read by the
// gatherer, with pgx's rules: results in order, callbacks of the queued
// queries run by Close, the first error sticks.
type gatheredBatch struct {
	tx      *gatheredTx
	queries []*pgx.QueuedQuery
	results []gatheredResult
	next    int
	err     error
	closed  bool
}

func (b *gatheredBatch) take() (gatheredResult, error) {
	if b.err != nil {
		return gatheredResult{}, b.err
	}
	if b.closed || b.next >= len(b.results) {
		return gatheredResult{}, errors.New("pg: no result left in the batch")
	}
	r := b.results[b.next]
	b.next++
	if r.err != nil {
		b.err = r.err
	}
	return r, r.err
}

func (b *gatheredBatch) Exec() (pgconn.CommandTag, error) {
	r, err := b.take()
	return r.tag, err
}

func (b *gatheredBatch) Query() (pgx.Rows, error) {
	r, err := b.take()
	if err != nil {
		return &gatheredRows{res: gatheredResult{err: err}, at: -1}, err
	}
	return b.tx.rows(r), nil
}

func (b *gatheredBatch) QueryRow() pgx.Row {
	r, err := b.take()
	if err != nil {
		return &lazyRow{err: err}
	}
	return &lazyRow{rows: b.tx.rows(r)}
}

// Tx is nil: the batch of a fn begins no transaction of its own.
func (b *gatheredBatch) Tx() pgx.Tx { return nil }

func (b *gatheredBatch) Close() error {
	if b.closed {
		return b.err
	}
	for b.err == nil && b.next < len(b.results) {
		if fn := b.queries[b.next].Fn; fn != nil {
			if err := fn(b); err != nil && b.err == nil {
				b.err = err
			}
			continue
		}
		_, _ = b.Exec()
	}
	b.closed = true
	return b.err
}

// gatheredRows are the rows of a statement read whole by the gatherer.
type gatheredRows struct {
	res     gatheredResult
	typeMap *pgtype.Map
	// decoding guards typeMap (gathering.decoding).
	decoding *sync.Mutex
	conn     *pgx.Conn
	at       int
	closed   bool
	err      error
}

var _ pgx.Rows = (*gatheredRows)(nil)

func (r *gatheredRows) Close() { r.closed = true }

func (r *gatheredRows) Err() error {
	if r.res.err != nil {
		return r.res.err
	}
	return r.err
}

func (r *gatheredRows) CommandTag() pgconn.CommandTag { return r.res.tag }

func (r *gatheredRows) FieldDescriptions() []pgconn.FieldDescription { return r.res.fields }

func (r *gatheredRows) Next() bool {
	if r.closed || r.res.err != nil || r.err != nil || r.at+1 >= len(r.res.rows) {
		r.closed = true
		return false
	}
	r.at++
	return true
}

func (r *gatheredRows) Scan(dest ...any) error {
	if r.at < 0 || r.at >= len(r.res.rows) {
		return errors.New("pg: Scan without a current row")
	}
	r.decoding.Lock()
	err := pgx.ScanRow(r.typeMap, r.res.fields, r.res.rows[r.at], dest...)
	r.decoding.Unlock()
	if err != nil {
		r.err = err
		r.closed = true
		return err
	}
	return nil
}

func (r *gatheredRows) Values() ([]any, error) {
	if r.at < 0 || r.at >= len(r.res.rows) {
		return nil, errors.New("pg: Values without a current row")
	}
	r.decoding.Lock()
	defer r.decoding.Unlock()
	raw := r.res.rows[r.at]
	out := make([]any, len(raw))
	for i, fd := range r.res.fields {
		if raw[i] == nil {
			continue
		}
		if dt, ok := r.typeMap.TypeForOID(fd.DataTypeOID); ok {
			v, err := dt.Codec.DecodeValue(r.typeMap, fd.DataTypeOID, fd.Format, raw[i])
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		if fd.Format == pgtype.TextFormatCode {
			out[i] = string(raw[i])
		} else {
			out[i] = slices.Clone(raw[i])
		}
	}
	return out, nil
}

func (r *gatheredRows) RawValues() [][]byte {
	if r.at < 0 || r.at >= len(r.res.rows) {
		return nil
	}
	return r.res.rows[r.at]
}

func (r *gatheredRows) Conn() *pgx.Conn { return r.conn }

func (r *gatheredRows) TypeMap() *pgtype.Map { return r.typeMap }
