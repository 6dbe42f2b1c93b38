package app_test

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/app"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/instance/instancetest"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type testBundle struct {
	db    *pgtest.DB
	clock *clock.Fake
	env   *instancetest.Env
	cfg   instancetest.Config
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{db: pgtest.New(t), clock: clock.NewFake(t0), cfg: instancetest.DefaultConfig()}
	b.env = instancetest.New(t, b.db, b.clock, b.cfg)
	return b
}

// process returns a second Env over the same database and master key: another
// process of the same installation, with a key cache of its own.
func (b *testBundle) process(t *testing.T) *instancetest.Env {
	t.Helper()
	return instancetest.NewWithMaster(t, b.db, b.clock, b.cfg, b.env.MasterRef)
}

func (b *testBundle) signerKids(t *testing.T, env *instancetest.Env, p instance.Purpose) []string {
	t.Helper()
	signers, err := env.Keys.Signers(context.Background(), p)
	require.NoError(t, err)
	var out []string
	for _, s := range signers {
		out = append(out, s.KeyID())
	}
	return out
}

// keyRows returns kid -> state of every row, retired ones included.
func (b *testBundle) keyRows(t *testing.T, p instance.Purpose) map[string]string {
	t.Helper()
	rows, err := b.db.Owner.Query(context.Background(), `SELECT kid, state FROM server_signing_keys WHERE purpose = $1`, string(p))
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var kid, state string
		require.NoError(t, rows.Scan(&kid, &state))
		out[kid] = state
	}
	require.NoError(t, rows.Err())
	return out
}

func TestLoadBeforeEnsureFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.env.Service.Load(context.Background())
	require.ErrorIs(t, err, app.ErrNoInstance)
	_, err = b.env.Keys.Signers(context.Background(), instance.PurposeWebhookOut)
	require.ErrorIs(t, err, app.ErrNoActiveKey)
}

func TestEnsureCreatesTheInstanceAndOneActiveKeyPerPurposeOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.env.Ensure(t)

	rec, err := b.env.Service.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, "bothy test", rec.Name)
	require.False(t, rec.ID.IsZero())
	require.False(t, rec.SyncEpoch.IsZero())
	require.NotEqual(t, rec.ID, rec.SyncEpoch)

	kids := map[instance.Purpose]string{}
	for _, p := range instance.Purposes() {
		rows := b.keyRows(t, p)
		require.Len(t, rows, 1, p)
		for kid, state := range rows {
			require.Equal(t, "active", state)
			kids[p] = kid
		}
		require.Equal(t, []string{kids[p]}, b.signerKids(t, b.env, p))
	}
	audit := audittest.List(t, b.db.App, audittest.Filter{Action: string(app.ActionRotate)})
	require.Len(t, audit, 2)
	for _, a := range audit {
		require.Equal(t, "system", a.ActorKind)
		require.Equal(t, rec.ID, a.ResourceID)
		require.Equal(t, "created_active", a.Details["step"])
		require.Equal(t, kids[instance.Purpose(a.Details["purpose"].(string))], a.Details["kid"])
	}

	b.clock.Advance(365 * 24 * time.Hour)
	b.env.Ensure(t)
	again, err := b.env.Service.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, rec, again, "a second Ensure keeps the row and its sync epoch")
	for _, p := range instance.Purposes() {
		require.Equal(t, map[string]string{kids[p]: "active"}, b.keyRows(t, p), "and every key, however old")
	}
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: string(app.ActionRotate)}), 2)
}

// TestEnsureIsSafeWhenProcessesStartAtOnce starts several processes that
// call Ensure together: one row, one active key per purpose, no error.
func TestEnsureIsSafeWhenProcessesStartAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const processes = 4
	envs := []*instancetest.Env{b.env}
	for len(envs) < processes {
		envs = append(envs, b.process(t))
	}
	var wg sync.WaitGroup
	errs := make([]error, processes)
	start := make(chan struct{})
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = env.Service.Ensure(context.Background())
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var rows int
	require.NoError(t, b.db.Owner.QueryRow(context.Background(), `SELECT count(*) FROM instance`).Scan(&rows))
	require.Equal(t, 1, rows)
	for _, p := range instance.Purposes() {
		require.Len(t, b.keyRows(t, p), 1, p)
	}
	first, err := envs[0].Service.Load(context.Background())
	require.NoError(t, err)
	for _, env := range envs[1:] {
		rec, err := env.Service.Load(context.Background())
		require.NoError(t, err)
		require.Equal(t, first, rec)
		require.Equal(t, b.signerKids(t, envs[0], instance.PurposeWebhookOut), b.signerKids(t, env, instance.PurposeWebhookOut))
	}
}

func TestPrivateKeysOpenOnlyWithTheirMasterKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.env.Ensure(t)
	signer, err := b.env.Keys.Signer(ctx, instance.PurposeWebhookOut)
	require.NoError(t, err)

	var sealed []byte
	require.NoError(t, b.db.Owner.QueryRow(ctx, `SELECT private_key_enc FROM server_signing_keys WHERE kid = $1`, signer.KeyID()).Scan(&sealed))
	master, err := os.ReadFile(b.env.MasterPath)
	require.NoError(t, err)
	raw := make([]byte, domain.MasterKeySize)
	_, err = hexDecode(raw, master)
	require.NoError(t, err)
	priv, err := domain.OpenPrivateKey(raw, signer.KeyID(), instance.PurposeWebhookOut, sealed)
	require.NoError(t, err, "the stored key opens with the master key, kid and purpose")
	pub, err := b.env.Keys.VerificationKey(ctx, signer.KeyID())
	require.NoError(t, err)
	require.Equal(t, pub.Key, priv.Public().(ed25519.PublicKey))

	// Another process configured with another master key cannot sign.
	wrongRef := "file:" + filepath.Join(t.TempDir(), "wrong_master_key")
	instancetest.WriteMasterKey(t, wrongRef[len("file:"):], nil)
	other := instancetest.NewWithMaster(t, b.db, b.clock, b.cfg, wrongRef)
	_, err = other.Keys.Signers(ctx, instance.PurposeWebhookOut)
	require.Error(t, err)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	require.ErrorIs(t, err, domain.ErrSealed)

	// A master key of the wrong size is refused before anything is written.
	shortRef := "file:" + filepath.Join(t.TempDir(), "short_master_key")
	instancetest.WriteMasterKey(t, shortRef[len("file:"):], make([]byte, 16))
	short := instancetest.NewWithMaster(t, b.db, b.clock, b.cfg, shortRef)
	require.Error(t, short.Service.Ensure(ctx))
	require.Error(t, func() error { _, err := short.Keys.Signers(ctx, instance.PurposeWebhookOut); return err }())
}

// TestRotationStates walks one purpose through a manual rotation: next key
// published at once, promoted after agent.jwks_max_age with the old key
// retiring at the promotion time, retired agent.jwks_max_age later.
func TestRotationStates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	w := instance.PurposeWebhookOut
	b.env.Ensure(t)
	old := b.signerKids(t, b.env, w)[0]
	ahead := b.cfg.Rotation.PublishAhead
	start := b.clock.Advance(time.Second) // audit entries sort by time

	rot, err := b.env.Service.RotateSigningKey(ctx, w)
	require.NoError(t, err)
	require.Len(t, rot.Steps, 1)
	require.Equal(t, domain.StepCreateNext, rot.Steps[0].Kind)
	fresh := rot.Steps[0].KID
	require.Equal(t, map[string]string{old: "active", fresh: "next"}, b.keyRows(t, w))
	require.Equal(t, []string{old}, b.signerKids(t, b.env, w), "a next key does not sign")
	require.Equal(t, start.Add(ahead), rot.NextDue)
	pub, err := b.env.Keys.PublicKeys(ctx, w)
	require.NoError(t, err)
	require.Len(t, pub, 2, "the next key is published at once")
	require.Equal(t, []instance.KeyState{instance.KeyActive, instance.KeyNext}, []instance.KeyState{pub[0].State, pub[1].State})

	b.clock.Advance(ahead - time.Second)
	rot, err = b.env.Service.RotateSigningKey(ctx, w)
	require.NoError(t, err)
	require.Empty(t, rot.Steps, "neither a second next key nor an early promotion")

	promotedAt := b.clock.Advance(time.Second)
	rot, err = b.env.Service.RotateSigningKey(ctx, w)
	require.NoError(t, err)
	require.Equal(t, []app.AppliedStep{{Kind: domain.StepPromote, KID: fresh, Previous: old}}, rot.Steps)
	require.Equal(t, map[string]string{old: "retiring", fresh: "active"}, b.keyRows(t, w))
	require.Equal(t, []string{fresh}, b.signerKids(t, b.env, w), "the promotion rule: not_after = promotion time, so the old key stops signing")
	pub, err = b.env.Keys.PublicKeys(ctx, w)
	require.NoError(t, err)
	require.Len(t, pub, 2)
	require.Equal(t, old, pub[1].KeyID)
	require.Equal(t, promotedAt, pub[1].NotAfter)
	require.Equal(t, promotedAt.Add(ahead), rot.NextDue)

	var activatedAt time.Time
	require.NoError(t, b.db.Owner.QueryRow(ctx, `SELECT activated_at FROM server_signing_keys WHERE kid = $1`, fresh).Scan(&activatedAt))
	require.Equal(t, promotedAt, activatedAt.UTC())

	retiredAt := b.clock.Advance(ahead)
	rots, err := b.env.Service.RotateDue(ctx, retiredAt)
	require.NoError(t, err)
	require.Len(t, rots, 2)
	require.Equal(t, []app.AppliedStep{{Kind: domain.StepRetire, KID: old}}, rots[0].Steps)
	require.Empty(t, rots[1].Steps, "the agent_token keys are young")
	require.Equal(t, map[string]string{old: "retired", fresh: "active"}, b.keyRows(t, w))
	var sealed []byte
	var gotRetired time.Time
	require.NoError(t, b.db.Owner.QueryRow(ctx, `SELECT private_key_enc, retired_at FROM server_signing_keys WHERE kid = $1`, old).Scan(&sealed, &gotRetired))
	require.Empty(t, sealed, "a retired key's private key is erased")
	require.Equal(t, retiredAt, gotRetired.UTC())
	pub, err = b.env.Keys.PublicKeys(ctx, w)
	require.NoError(t, err)
	require.Len(t, pub, 1)

	var steps []string
	for _, a := range audittest.List(t, b.db.App, audittest.Filter{Action: string(app.ActionRotate)}) {
		if a.Details["purpose"] == string(w) {
			steps = append(steps, a.Details["step"].(string))
		}
	}
	require.Equal(t, []string{"created_active", "created_next", "promoted", "retired"}, steps)
}

func TestRotateDueRunsTheScheduledRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.env.Ensure(t)
	pol := b.cfg.Rotation

	created := t0.Add(pol.MaxAge - pol.PublishAhead)
	rots, err := b.env.Service.RotateDue(ctx, created.Add(-time.Nanosecond))
	require.NoError(t, err)
	for _, r := range rots {
		require.Empty(t, r.Steps, r.Purpose)
		require.Equal(t, created, r.NextDue)
	}
	rots, err = b.env.Service.RotateDue(ctx, created)
	require.NoError(t, err)
	for _, r := range rots {
		require.Len(t, r.Steps, 1)
		require.Equal(t, domain.StepCreateNext, r.Steps[0].Kind, r.Purpose)
	}
	rots, err = b.env.Service.RotateDue(ctx, t0.Add(pol.MaxAge))
	require.NoError(t, err)
	for _, r := range rots {
		require.Len(t, r.Steps, 1)
		require.Equal(t, domain.StepPromote, r.Steps[0].Kind, "promoted when the old key reaches signing_key_max_age")
	}
}

func TestRotateSigningKeyRejectsAnUnknownPurpose(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.Ensure(t)
	_, err := b.env.Service.RotateSigningKey(context.Background(), instance.Purpose("email"))
	require.Equal(t, errs.CodeValidationFailed, errs.CodeOf(err))
}

// TestSignersCacheSeesAnotherProcessRotationWithinTheTTL: the signers of a
// process are reused for instance.key_cache_ttl; a promotion written by
// another process is used at most one TTL late, while the rotating process
// uses it at once.
func TestSignersCacheSeesAnotherProcessRotationWithinTheTTL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	w := instance.PurposeWebhookOut
	b.env.Ensure(t)
	other := b.process(t)
	old := b.signerKids(t, b.env, w)[0]

	rot, err := other.Service.RotateSigningKey(ctx, w)
	require.NoError(t, err)
	fresh := rot.Steps[0].KID
	b.clock.Advance(b.cfg.Rotation.PublishAhead)
	require.Equal(t, []string{old}, b.signerKids(t, b.env, w), "reloaded after the TTL: still the old key")
	_, err = other.Service.RotateSigningKey(ctx, w)
	require.NoError(t, err)

	require.Equal(t, []string{fresh}, b.signerKids(t, other, w), "the rotating process signs with the new key at once")
	b.clock.Advance(b.cfg.CacheTTL - time.Nanosecond)
	require.Equal(t, []string{old}, b.signerKids(t, b.env, w), "the other process keeps its cached key within the TTL")
	b.clock.Advance(time.Nanosecond)
	require.Equal(t, []string{fresh}, b.signerKids(t, b.env, w), "and uses the new one after it")
}

// TestSignersCacheEndsAtTheNotAfterOfARetiringKey: a cached set with a
// retiring key is read again at that key's not_after, before the TTL ends.
// A master key file made unreadable after the first read shows whether the
// keys were read again.
func TestSignersCacheEndsAtTheNotAfterOfARetiringKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	w := instance.PurposeWebhookOut
	b.env.Ensure(t)
	first := b.signerKids(t, b.env, w)[0]
	require.NoError(t, b.env.Store.StartRetiring(ctx, first, t0.Add(2*time.Minute)))
	active := b.env.AddKey(t, w, instance.KeyActive, t0, time.Time{})

	require.Less(t, 2*time.Minute, b.cfg.CacheTTL, "the not_after lies within the TTL")
	require.Equal(t, []string{active, first}, b.signerKids(t, b.env, w))
	require.NoError(t, os.Remove(b.env.MasterPath))

	b.clock.Advance(2*time.Minute - time.Nanosecond)
	require.Equal(t, []string{active, first}, b.signerKids(t, b.env, w), "served from the cache")
	b.clock.Advance(time.Nanosecond)
	_, err := b.env.Keys.Signers(ctx, w)
	require.Error(t, err, "read again at not_after, which needs the master key")
}

// TestSignersReadTheKeysWithoutHoldingTheCache: two functions of one
// txn.Together that miss the cache at once both read the keys in the
// unit of work's round trip. A read under the cache's lock kept the second
// function waiting for the lock and the first waiting for the second's
// statement: the delivery runs that claim together (ADR 0089) stopped for
// good. A deadlock fails the test instead of hanging it.
func TestSignersReadTheKeysWithoutHoldingTheCache(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.Ensure(t)
	other := b.process(t) // a cold cache
	// A pool of its own: a stuck unit of work keeps its connection, which
	// the clean-up of the world's pools would wait for for ever.
	pool, err := pgxpool.New(context.Background(), b.db.AppURL)
	require.NoError(t, err)
	uow := pg.NewUnitOfWork(pool, 0, time.Second)
	done := make(chan error, 1)
	kids := make([]string, 2)
	go func() {
		done <- uow.Do(context.Background(), func(ctx context.Context) error {
			fn := func(i int) func(ctx context.Context) error {
				return func(ctx context.Context) error {
					s, err := other.Keys.Signer(ctx, instance.PurposeWebhookOut)
					if err == nil {
						kids[i] = s.KeyID()
					}
					return err
				}
			}
			return txn.Together(ctx, fn(0), fn(1))
		})
	}()
	select {
	case err := <-done:
		pool.Close()
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the functions of Together waited for one another for 30 s")
	}
	want := b.signerKids(t, b.env, instance.PurposeWebhookOut)[0]
	require.Equal(t, []string{want, want}, kids)
}
