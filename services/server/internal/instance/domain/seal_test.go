package domain_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
)

func master(b byte) []byte { return bytes.Repeat([]byte{b}, domain.MasterKeySize) }

func TestSealedKeyOpensWithTheSameMasterKidAndPurpose(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sealed, err := domain.SealPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, key, rand.Reader)
	require.NoError(t, err)
	require.NotContains(t, string(sealed), string(key.Seed()), "the seed is not stored in clear")

	opened, err := domain.OpenPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, sealed)
	require.NoError(t, err)
	require.True(t, key.Equal(opened))
}

func TestSealedKeyDoesNotOpenWithAnythingElse(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sealed, err := domain.SealPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, key, rand.Reader)
	require.NoError(t, err)
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1

	for _, tc := range []struct {
		name    string
		master  []byte
		kid     string
		purpose instance.Purpose
		sealed  []byte
		want    error
	}{
		{"another master key fails", master(2), "kid-a", instance.PurposeWebhookOut, sealed, domain.ErrSealed},
		{"another kid fails", master(1), "kid-b", instance.PurposeWebhookOut, sealed, domain.ErrSealed},
		{"another purpose fails", master(1), "kid-a", instance.PurposeAgentToken, sealed, domain.ErrSealed},
		{"a changed byte fails", master(1), "kid-a", instance.PurposeWebhookOut, flipped, domain.ErrSealed},
		{"a cut value fails", master(1), "kid-a", instance.PurposeWebhookOut, sealed[:len(sealed)-1], domain.ErrSealed},
		{"an unknown version fails", master(1), "kid-a", instance.PurposeWebhookOut, append([]byte{9}, sealed[1:]...), domain.ErrSealed},
		{"a short master key fails", master(1)[:16], "kid-a", instance.PurposeWebhookOut, sealed, domain.ErrMasterKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.OpenPrivateKey(tc.master, tc.kid, tc.purpose, tc.sealed)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestEverySealTakesAFreshNonceFromRandom(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	chosen := []byte("twelve-bytes")
	sealed, err := domain.SealPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, key, bytes.NewReader(chosen))
	require.NoError(t, err)
	require.Equal(t, chosen, sealed[1:1+len(chosen)], "the nonce is what random gave, stored after the version byte")

	again, err := domain.SealPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, key, rand.Reader)
	require.NoError(t, err)
	require.NotEqual(t, sealed[1:1+len(chosen)], again[1:1+len(chosen)], "two seals of one key use two nonces")
	require.NotEqual(t, sealed[1+len(chosen):], again[1+len(chosen):], "so the ciphertexts differ too")
	opened, err := domain.OpenPrivateKey(master(1), "kid-a", instance.PurposeWebhookOut, again)
	require.NoError(t, err)
	require.True(t, key.Equal(opened))
}

func TestSealNeedsAGoodMasterKeyAndRandomness(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, err = domain.SealPrivateKey(master(1)[:31], "k", instance.PurposeWebhookOut, key, rand.Reader)
	require.ErrorIs(t, err, domain.ErrMasterKey)
	_, err = domain.SealPrivateKey(master(1), "k", instance.PurposeWebhookOut, key, iotest.ErrReader(bytes.ErrTooLarge))
	require.ErrorIs(t, err, domain.ErrRandom)
}
