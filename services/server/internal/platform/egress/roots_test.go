package egress_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSetRootCAsTrustsTheNewRootsOnTheNextRequest: a client that does not
// trust the receiver's CA fails; after SetRootCAs with that CA the next
// request succeeds; after SetRootCAs with an empty pool it fails again, so
// no connection verified against the old roots is reused.
func TestSetRootCAsTrustsTheNewRootsOnTheNextRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	opts := b.options(t, true)
	opts.RootCAs = x509.NewCertPool()
	c := b.client(t, opts)
	var verr *tls.CertificateVerificationError

	_, err := c.Do(post(t, b.url(hooksHost)))
	require.ErrorAs(t, err, &verr)

	c.SetRootCAs(b.srv.RootCAs)
	resp, err := c.Do(post(t, b.url(hooksHost)))
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)

	c.SetRootCAs(x509.NewCertPool())
	_, err = c.Do(post(t, b.url(hooksHost)))
	require.ErrorAs(t, err, &verr, "the pooled connection of the old roots is not reused")
	require.Equal(t, int64(1), b.hits.Load())
}
