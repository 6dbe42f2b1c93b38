package idempotencypg_test

import (
	"context"
	"crypto/sha256"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/idempotencypg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const ttl = 24 * time.Hour

var (
	alex = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a11")
	sam  = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a12")
)

type bundle struct {
	db    *pgtest.DB
	store *idempotencypg.Store
	clk   *clock.Fake
}

func setup(t *testing.T) bundle {
	t.Helper()
	db := pgtest.New(t)
	_, err := db.Owner.Exec(context.Background(), `CREATE TABLE effects (n text); GRANT SELECT, INSERT ON effects TO bothy_app`)
	require.NoError(t, err)
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	store, err := idempotencypg.New(db.App, pg.NewUnitOfWork(db.App, 3, time.Second), clk, idempotencypg.Options{KeyTTL: ttl, PurgeBatchSize: 2})
	require.NoError(t, err)
	return bundle{db: db, store: store, clk: clk}
}

func request(principal ids.ID, key, body string) idempotency.Request {
	return idempotency.Request{Principal: principal, Operation: "createWebhookSubscription", Key: key, Hash: sha256.Sum256([]byte(body))}
}

// handler writes one row of effects (in the unit of work of ctx) and answers
// status with body; runs counts its calls.
func handler(b bundle, runs *atomic.Int32, status int, body string) func(context.Context) (idempotency.Response, error) {
	return func(ctx context.Context) (idempotency.Response, error) {
		runs.Add(1)
		if _, err := pg.Conn(ctx, b.db.App).Exec(ctx, `INSERT INTO effects VALUES ($1)`, body); err != nil {
			return idempotency.Response{Status: 500}, err
		}
		return idempotency.Response{
			Status: status,
			Header: map[string][]string{"Content-Type": {"application/json"}, "Location": {"/api/v1/x"}},
			Body:   []byte(body),
		}, nil
	}
}

func effects(t *testing.T, b bundle) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT count(*) FROM effects`).Scan(&n))
	return n
}

func TestReplayReturnsTheStoredResponseWithoutRunningAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	req := request(alex, "k-1", `{"url":"https://hooks.example.com/a"}`)

	first, err := b.store.Do(ctx, req, handler(b, &runs, 201, `{"id":"1"}`))
	require.NoError(t, err)
	require.False(t, first.Replayed)
	require.Equal(t, 201, first.Response.Status)

	again, err := b.store.Do(ctx, req, handler(b, &runs, 201, `{"id":"2"}`))
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.False(t, again.OneTimeSecret)
	require.Equal(t, idempotency.Response{
		Status: 201,
		Header: map[string][]string{"Content-Type": {"application/json"}, "Location": {"/api/v1/x"}},
		Body:   []byte(`{"id":"1"}`),
	}, again.Response)
	require.Equal(t, int32(1), runs.Load())
	require.Equal(t, 1, effects(t, b), "the handler's write committed once")
}

func TestTheSameKeyWithAnotherBodyIsAReuse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	_, err := b.store.Do(ctx, request(alex, "k-1", "one"), handler(b, &runs, 201, "a"))
	require.NoError(t, err)
	_, err = b.store.Do(ctx, request(alex, "k-1", "two"), handler(b, &runs, 201, "b"))
	require.Equal(t, errs.CodeIdempotencyKeyReuse, errs.CodeOf(err))
	require.Equal(t, int32(1), runs.Load())
}

func TestDifferentPrincipalsDoNotShareKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	a, err := b.store.Do(ctx, request(alex, "shared", "alex body"), handler(b, &runs, 201, "for alex"))
	require.NoError(t, err)
	s, err := b.store.Do(ctx, request(sam, "shared", "sam body"), handler(b, &runs, 201, "for sam"))
	require.NoError(t, err)
	require.False(t, a.Replayed)
	require.False(t, s.Replayed)
	require.Equal(t, int32(2), runs.Load())

	s, err = b.store.Do(ctx, request(sam, "shared", "sam body"), handler(b, &runs, 201, "never"))
	require.NoError(t, err)
	require.True(t, s.Replayed)
	require.Equal(t, "for sam", string(s.Response.Body))
}

func TestAConcurrentDuplicateGetsInProgressAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	req := request(alex, "k-1", "body")
	started, release := make(chan struct{}), make(chan struct{})
	type outcome struct {
		res idempotency.Result
		err error
	}
	done := make(chan outcome)
	go func() {
		res, err := b.store.Do(ctx, req, func(ctx context.Context) (idempotency.Response, error) {
			close(started)
			<-release
			return idempotency.Response{Status: 202, Body: []byte("first")}, nil
		})
		done <- outcome{res, err}
	}()
	<-started

	var runs atomic.Int32
	_, err := b.store.Do(ctx, req, handler(b, &runs, 202, "second"))
	require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
	require.Equal(t, idempotency.ReasonInProgress, errs.ReasonOf(err))
	require.Zero(t, runs.Load())

	close(release)
	first := <-done
	require.NoError(t, first.err)
	require.Equal(t, "first", string(first.res.Response.Body))
	res, err := b.store.Do(ctx, req, handler(b, &runs, 202, "third"))
	require.NoError(t, err)
	require.True(t, res.Replayed)
	require.Equal(t, "first", string(res.Response.Body))
}

func TestAFailureResponseRollsBackAndIsNotStored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	req := request(alex, "k-1", "body")

	res, err := b.store.Do(ctx, req, handler(b, &runs, 409, "conflict"))
	require.NoError(t, err)
	require.False(t, res.Replayed)
	require.Equal(t, 409, res.Response.Status)
	require.Zero(t, effects(t, b), "the handler's write rolled back")

	res, err = b.store.Do(ctx, req, handler(b, &runs, 201, "created"))
	require.NoError(t, err)
	require.False(t, res.Replayed, "the same request runs again after a failure")
	require.Equal(t, 1, effects(t, b))

	_, err = b.store.Do(ctx, request(alex, "k-2", "body"), handler(b, &runs, 400, "invalid"))
	require.NoError(t, err)
	_, err = b.store.Do(ctx, request(alex, "k-2", "fixed body"), handler(b, &runs, 201, "created"))
	require.Equal(t, errs.CodeIdempotencyKeyReuse, errs.CodeOf(err), "the key stays bound to its first request")
}

func TestARetryableCauseRunsTheHandlerAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var runs atomic.Int32
	res, err := b.store.Do(context.Background(), request(alex, "k-1", "body"), func(ctx context.Context) (idempotency.Response, error) {
		if runs.Add(1) == 1 {
			return idempotency.Response{Status: 500}, &pgconn.PgError{Code: "40P01"}
		}
		return handler(b, &atomic.Int32{}, 201, "ok")(ctx)
	})
	require.NoError(t, err)
	require.Equal(t, 201, res.Response.Status)
	require.Equal(t, int32(2), runs.Load())
	require.Equal(t, 1, effects(t, b))
}

func TestAOneTimeSecretIsNeverStored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	secret := "whsec_EXAMPLEcQWxleCBhbmQgU2FtIG5ldmVyIHNlZSB0aGlzIHNlY3JldCBhZ2Fpbg=="
	req := request(robinID, "k-1", `{"enable_hmac":true}`)
	var runs atomic.Int32
	fn := func(ctx context.Context) (idempotency.Response, error) {
		runs.Add(1)
		idempotency.MarkOneTimeSecret(ctx)
		return idempotency.Response{
			Status: 201,
			Header: map[string][]string{"Content-Type": {"application/json"}, "X-Secret-Echo": {secret}},
			Body:   []byte(`{"hmac_secret":"` + secret + `"}`),
		}, nil
	}
	first, err := b.store.Do(ctx, req, fn)
	require.NoError(t, err)
	require.Contains(t, string(first.Response.Body), secret, "the first response carries the secret")

	again, err := b.store.Do(ctx, req, fn)
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.True(t, again.OneTimeSecret)
	require.Equal(t, idempotency.Response{Status: 201}, again.Response)
	require.Equal(t, int32(1), runs.Load())

	var status int
	var oneTime, bodyNull, headersNull bool
	require.NoError(t, b.db.App.QueryRow(ctx, `
		SELECT status, one_time_secret, body IS NULL, headers IS NULL FROM idempotency_keys`).
		Scan(&status, &oneTime, &bodyNull, &headersNull))
	require.Equal(t, 201, status)
	require.True(t, oneTime && bodyNull && headersNull)
	httpservertest.RequireSecretAbsent(t, b.db.App, secret, "idempotency_keys")
}

var robinID = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a13")

func TestAnExpiredKeyStartsAfresh(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	_, err := b.store.Do(ctx, request(alex, "k-1", "one"), handler(b, &runs, 201, "a"))
	require.NoError(t, err)
	b.clk.Advance(ttl)
	res, err := b.store.Do(ctx, request(alex, "k-1", "two"), handler(b, &runs, 201, "b"))
	require.NoError(t, err)
	require.False(t, res.Replayed)
	require.Equal(t, int32(2), runs.Load())
}

func TestPurgeDeletesOnlyExpiredRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	_, err := b.store.Do(ctx, request(alex, "old", "x"), handler(b, &runs, 201, "a"))
	require.NoError(t, err)
	b.clk.Advance(ttl / 2)
	_, err = b.store.Do(ctx, request(alex, "new", "x"), handler(b, &runs, 201, "b"))
	require.NoError(t, err)
	b.clk.Advance(ttl / 2)

	n, err := b.store.Purge(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	var key string
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT key FROM idempotency_keys`).Scan(&key))
	require.Equal(t, "new", key)
}

// TestPurgeDeletesInBatches: five expired keys with a batch size of two go
// in three statements, all counted.
func TestPurgeDeletesInBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var runs atomic.Int32
	for _, k := range []string{"k-1", "k-2", "k-3", "k-4", "k-5"} {
		_, err := b.store.Do(ctx, request(alex, k, "x"), handler(b, &runs, 201, k))
		require.NoError(t, err)
	}
	b.clk.Advance(ttl)
	n, err := b.store.Purge(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	var left int
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys`).Scan(&left))
	require.Zero(t, left)
}

func TestAPanickingHandlerRollsBackAndReleasesTheKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	req := request(alex, "k-1", "body")
	require.PanicsWithValue(t, "boom", func() {
		_, _ = b.store.Do(ctx, req, func(ctx context.Context) (idempotency.Response, error) {
			_, err := pg.Conn(ctx, b.db.App).Exec(ctx, `INSERT INTO effects VALUES ('x')`)
			require.NoError(t, err)
			panic("boom")
		})
	})
	require.Zero(t, effects(t, b))
	var runs atomic.Int32
	res, err := b.store.Do(ctx, req, handler(b, &runs, 201, "ok"))
	require.NoError(t, err, "the key is neither locked nor completed")
	require.False(t, res.Replayed)
}

func TestDoRefusesMalformedRequestsAndAmbientTransactions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	never := func(context.Context) (idempotency.Response, error) { panic("must not run") }
	for _, req := range []idempotency.Request{
		request(ids.Zero, "k", "x"),
		{Principal: alex, Key: "k"},
		request(alex, "with space", "x"),
	} {
		_, err := b.store.Do(ctx, req, never)
		require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	}
	uow := pg.NewUnitOfWork(b.db.App, 0, 0)
	err := uow.Do(ctx, func(ctx context.Context) error {
		_, err := b.store.Do(ctx, request(alex, "k", "x"), never)
		return err
	})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

func TestNewRefusesANonPositiveTTL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	_, err := idempotencypg.New(db.App, pg.NewUnitOfWork(db.App, 0, 0), clock.Real{}, idempotencypg.Options{PurgeBatchSize: 1})
	require.Error(t, err)
	_, err = idempotencypg.New(db.App, pg.NewUnitOfWork(db.App, 0, 0), clock.Real{}, idempotencypg.Options{KeyTTL: time.Hour})
	require.Error(t, err, "a purge batch size below one")
}
