package apps

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLastErrorCodesAreTheClosedList(t *testing.T) {
	t.Parallel()
	var got []string
	for _, c := range lastErrorCodes {
		got = append(got, string(c))
	}
	require.Equal(t, []string{
		"timeout", "connection_failed", "tls_failed", "address_blocked", "host_not_allowed",
		"http_status", "throttled", "gone", "not_authorized", "not_subscribed", "event_expired", "internal_error",
	}, got)
	for _, c := range lastErrorCodes {
		require.True(t, c.Valid(), c)
	}
	require.False(t, LastError("response body").Valid())
}
