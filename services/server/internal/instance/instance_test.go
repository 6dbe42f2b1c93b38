package instance_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/instancetest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func TestFormatWebhookPublicKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seed byte
	}{
		{"a key of zero seed bytes", 0},
		{"a key of another seed", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seed := make([]byte, ed25519.SeedSize)
			seed[0] = tc.seed
			pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)

			s := instance.FormatWebhookPublicKey(pub)
			rest, ok := strings.CutPrefix(s, "whpk_")
			require.True(t, ok, "prefix whpk_")
			der, err := base64.StdEncoding.Strict().DecodeString(rest)
			require.NoError(t, err, "standard base64 with padding")
			parsed, err := x509.ParsePKIXPublicKey(der)
			require.NoError(t, err)
			require.Equal(t, pub, parsed, "the round trip gives the same key")
		})
	}
}

// TestSignersOrder: the active key first, then the retiring keys whose
// not_after lies ahead; keys past not_after, next and retired keys never
// sign, and another purpose's keys never show.
func TestSignersOrder(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	env := instancetest.New(t, pgtest.New(t), clk, instancetest.DefaultConfig())
	env.Ensure(t) // the instance row and an agent_token key
	ctx := context.Background()

	// The webhook_out key Ensure made becomes the one past not_after.
	before, err := env.Keys.Signer(ctx, instance.PurposeWebhookOut)
	require.NoError(t, err)
	require.NoError(t, env.Store.StartRetiring(ctx, before.KeyID(), t0.Add(-time.Second)))

	w := instance.PurposeWebhookOut
	retired := env.AddKey(t, w, instance.KeyRetired, t0.Add(-48*time.Hour), t0.Add(-24*time.Hour))
	soon := env.AddKey(t, w, instance.KeyRetiring, t0.Add(-2*time.Hour), t0.Add(time.Minute))
	later := env.AddKey(t, w, instance.KeyRetiring, t0.Add(-time.Hour), t0.Add(5*time.Minute))
	active := env.AddKey(t, w, instance.KeyActive, t0, time.Time{})
	next := env.AddKey(t, w, instance.KeyNext, t0, time.Time{})

	kids := func() []string {
		t.Helper()
		signers, err := env.Keys.Signers(ctx, w)
		require.NoError(t, err)
		var out []string
		for _, s := range signers {
			out = append(out, s.KeyID())
		}
		return out
	}
	got := kids()
	require.Equal(t, []string{active, later, soon}, got)
	require.NotContains(t, got, before.KeyID(), "past not_after")
	require.NotContains(t, got, next)
	require.NotContains(t, got, retired)

	clk.Set(t0.Add(time.Minute))
	require.Equal(t, []string{active, later}, kids(), "a key stops signing at its not_after, even from the cache")

	s, err := env.Keys.Signer(ctx, w)
	require.NoError(t, err)
	require.Equal(t, active, s.KeyID())
	pub, err := env.Keys.VerificationKey(ctx, active)
	require.NoError(t, err)
	require.True(t, ed25519.Verify(pub.Key, []byte("msg"), s.Sign([]byte("msg"))), "the signer signs with the published key")
}

// TestPublicKeysWebhookOut: next, active and retiring webhook_out keys,
// ordered active, next, retiring, then kid; not_after only on retiring keys;
// never retired keys or keys of another purpose. The JWKS never lists a
// webhook_out key.
func TestPublicKeysWebhookOut(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	env := instancetest.New(t, pgtest.New(t), clk, instancetest.DefaultConfig())
	env.Ensure(t)
	ctx := context.Background()
	w := instance.PurposeWebhookOut

	first, err := env.Keys.Signer(ctx, w)
	require.NoError(t, err)
	require.NoError(t, env.Store.StartRetiring(ctx, first.KeyID(), t0))
	r2 := env.AddKey(t, w, instance.KeyRetiring, t0.Add(-time.Hour), t0.Add(time.Hour))
	retired := env.AddKey(t, w, instance.KeyRetired, t0.Add(-48*time.Hour), t0.Add(-24*time.Hour))
	active := env.AddKey(t, w, instance.KeyActive, t0, time.Time{})
	next := env.AddKey(t, w, instance.KeyNext, t0, time.Time{})

	keys, err := env.Keys.PublicKeys(ctx, w)
	require.NoError(t, err)
	retiringKids := []string{first.KeyID(), r2}
	if retiringKids[0] > retiringKids[1] {
		retiringKids[0], retiringKids[1] = retiringKids[1], retiringKids[0]
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.KeyID)
		require.Equal(t, w, k.Purpose)
		require.Len(t, k.Key, ed25519.PublicKeySize)
		require.Equal(t, k.State == instance.KeyRetiring, !k.NotAfter.IsZero(), "not_after only when retiring")
	}
	require.Equal(t, append([]string{active, next}, retiringKids...), got)
	require.NotContains(t, got, retired)
	require.Equal(t, instance.KeyActive, keys[0].State)
	require.Equal(t, instance.KeyNext, keys[1].State)

	jwks, err := env.Keys.JWKS(ctx)
	require.NoError(t, err)
	require.Len(t, jwks, 1, "only the agent_token key")
	for _, k := range jwks {
		require.NotContains(t, got, k.Kid, "the JWKS never lists a webhook_out key")
		require.Equal(t, "OKP", k.Kty)
		require.Equal(t, "Ed25519", k.Crv)
		require.Equal(t, "EdDSA", k.Alg)
		require.Equal(t, "sig", k.Use)
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		require.NoError(t, err)
		vk, err := env.Keys.VerificationKey(ctx, k.Kid)
		require.NoError(t, err)
		require.Equal(t, instance.PurposeAgentToken, vk.Purpose)
		require.Equal(t, []byte(vk.Key), x)
	}
	_, err = env.Keys.VerificationKey(ctx, retired)
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a retired key is not published")
}
