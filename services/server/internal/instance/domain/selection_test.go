package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
)

func kids(keys []domain.Key) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.KID)
	}
	return out
}

func TestSigningOrder(t *testing.T) {
	t.Parallel()
	keys := []domain.Key{
		retiring("r-past", t0.Add(-time.Second)),
		next("n", t0),
		retiring("r-b", t0.Add(time.Minute)),
		{KID: "x", State: instance.KeyRetired, NotAfter: t0.Add(time.Hour)},
		retiring("r-late", t0.Add(time.Hour)),
		active("a", t0),
		retiring("r-a", t0.Add(time.Minute)),
		retiring("r-now", t0),
	}
	require.Equal(t, []string{"a", "r-late", "r-a", "r-b"}, kids(domain.Signing(keys, t0)),
		"active first, then retiring keys with not_after after now, latest first, then kid; never next, retired or past not_after")
	require.Equal(t, []string{"a"}, kids(domain.Signing(keys, t0.Add(time.Hour))))
}

func TestPublishedOrder(t *testing.T) {
	t.Parallel()
	keys := []domain.Key{
		retiring("r2", t0), {KID: "x", State: instance.KeyRetired}, retiring("r1", t0.Add(-time.Hour)), next("n", t0), active("a", t0),
	}
	require.Equal(t, []string{"a", "n", "r1", "r2"}, kids(domain.Published(keys)))
	require.Empty(t, domain.Published([]domain.Key{{KID: "x", State: instance.KeyRetired}}))
}

func TestSigningValidUntil(t *testing.T) {
	t.Parallel()
	ttl := 5 * time.Minute
	require.Equal(t, t0.Add(ttl), domain.SigningValidUntil([]domain.Key{active("a", t0)}, t0, ttl))
	require.Equal(t, t0.Add(time.Minute), domain.SigningValidUntil([]domain.Key{active("a", t0), retiring("r", t0.Add(time.Minute))}, t0, ttl),
		"a retiring key that stops signing within the TTL ends the cached set")
	require.Equal(t, t0.Add(ttl), domain.SigningValidUntil([]domain.Key{active("a", t0), retiring("r", t0)}, t0, ttl),
		"a retiring key already past not_after does not shorten it")
}
