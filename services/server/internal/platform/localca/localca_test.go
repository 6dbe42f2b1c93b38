package localca_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/localca"
)

func TestIssueNamesOnlyTheGivenHosts(t *testing.T) {
	t.Parallel()
	now := time.Now()
	got, err := localca.Issue("bothy test CA", []string{"hooks.example.com", "other.example.com"}, now)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(got.Certificate.Certificate[0])
	require.NoError(t, err)
	require.Equal(t, []string{"hooks.example.com", "other.example.com"}, leaf.DNSNames)
	require.Empty(t, leaf.IPAddresses, "a client must send a host name, never reach it by address")
	require.Equal(t, "hooks.example.com", leaf.Subject.CommonName)
	require.Len(t, got.Certificate.Certificate, 2, "the leaf with its CA, so a client sees the chain")

	fromPEM := x509.NewCertPool()
	require.True(t, fromPEM.AppendCertsFromPEM(got.CAPEM))
	for _, roots := range []*x509.CertPool{got.Roots(), fromPEM} {
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: "hooks.example.com", Roots: roots, CurrentTime: now})
		require.NoError(t, err)
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: "robin.example.com", Roots: roots, CurrentTime: now})
		require.Error(t, err, "a name the certificate does not list")
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: "hooks.example.com", Roots: roots, CurrentTime: now.Add(25 * time.Hour)})
		require.Error(t, err, "valid for a day only")
	}

	again, err := localca.Issue("bothy test CA", []string{"hooks.example.com"}, now)
	require.NoError(t, err)
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: "hooks.example.com", Roots: again.Roots(), CurrentTime: now})
	require.Error(t, err, "every call makes its own authority")
}

func TestIssueNeedsAHost(t *testing.T) {
	t.Parallel()
	_, err := localca.Issue("bothy test CA", nil, time.Now())
	require.Error(t, err)
}
