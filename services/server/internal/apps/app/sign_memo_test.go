package app

import (
	"crypto/ed25519"
	"crypto/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

// countingSigner is an Ed25519 signer that counts its signatures.
type countingSigner struct {
	kid   string
	key   ed25519.PrivateKey
	mu    sync.Mutex
	signs int
}

func newCountingSigner(t *testing.T, kid string) *countingSigner {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return &countingSigner{kid: kid, key: key}
}

func (s *countingSigner) KeyID() string { return s.kid }

func (s *countingSigner) Sign(msg []byte) []byte {
	s.mu.Lock()
	s.signs++
	s.mu.Unlock()
	return ed25519.Sign(s.key, msg)
}

// TestSignatureMemoSignsTheSameContentOnce (ADR 0101): the deliveries
// of one event to many subscriptions in one second sign the same content;
// the memo signs it once per key and gives every delivery the signature,
// which verifies. Other content, another key or another second is signed
// anew; nothing older than the second before the newest is kept.
func TestSignatureMemoSignsTheSameContentOnce(t *testing.T) {
	t.Parallel()
	m := &signatureMemo{}
	active, retiring := newCountingSigner(t, "k2"), newCountingSigner(t, "k1")
	event := ids.New()
	content := []byte(event.String() + ".1764928800.{\"type\":\"message.created\"}")

	var sigs [][]byte
	for range 100 {
		sigs = append(sigs, m.sign(active, event, 1764928800, content))
		m.sign(retiring, event, 1764928800, content)
	}
	require.Equal(t, 1, active.signs, "one signature per key for the hundred deliveries")
	require.Equal(t, 1, retiring.signs)
	for _, sig := range sigs {
		require.Equal(t, sigs[0], sig)
	}
	require.True(t, ed25519.Verify(active.key.Public().(ed25519.PublicKey), content, sigs[0]))

	other := append([]byte(nil), content...)
	other[len(other)-2] = 'X'
	require.True(t, ed25519.Verify(active.key.Public().(ed25519.PublicKey), other, m.sign(active, event, 1764928800, other)),
		"other content under the same key, event and second is signed anew")
	require.Equal(t, 2, active.signs)

	m.sign(active, event, 1764928801, content)
	require.Equal(t, 3, active.signs, "a new second signs anew")
	m.sign(active, event, 1764928801, content)
	m.sign(active, event, 1764928800, other)
	require.Equal(t, 3, active.signs, "the second before the newest is kept")
	m.sign(active, event, 1764928802, content)
	m.sign(active, event, 1764928800, other)
	require.Equal(t, 5, active.signs, "two seconds back is gone")
	m.sign(active, event, 1764928800, other)
	require.Equal(t, 6, active.signs, "and not kept again")
}

// TestSignatureMemoIsSafeForConcurrentRuns: runs sign at once.
func TestSignatureMemoIsSafeForConcurrentRuns(t *testing.T) {
	t.Parallel()
	m := &signatureMemo{}
	s := newCountingSigner(t, "k1")
	event := ids.New()
	content := []byte("msg_1.1764928800.{}")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				ts := int64(1764928800 + (i+j)%3)
				sig := m.sign(s, event, ts, content)
				require.True(t, ed25519.Verify(s.key.Public().(ed25519.PublicKey), content, sig))
			}
		}()
	}
	wg.Wait()
}
