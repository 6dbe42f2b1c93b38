package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/platform/otel/attr"
)

// MetricErrors counts requests the policy allowed that failed on the way,
// by bothy.egress.purpose and error.type (one of the ErrorClass constants);
// a request the caller cancelled is not counted (docs/observability/signals.md
// 6.2).
const MetricErrors = "bothy.egress.errors"

// The classes of a TransportError: the values of error.type on
// bothy.egress.errors. They are stable codes.
const (
	// ErrorClassTimeout: the request ran out of time (TransportError.Timeout).
	ErrorClassTimeout = "timeout"
	// ErrorClassDNS: the host name did not resolve.
	ErrorClassDNS = "dns"
	// ErrorClassTLS: the TLS handshake failed (a certificate that does not
	// verify, an alert, a peer that does not speak TLS).
	ErrorClassTLS = "tls"
	// ErrorClassConnection: the TCP connection could not be opened or broke.
	ErrorClassConnection = "connection"
	// ErrorClassOther: anything else, such as a malformed response.
	ErrorClassOther = "other"
)

func newErrorCounter(mp metric.MeterProvider) (metric.Int64Counter, error) {
	return mp.Meter(meterName).Int64Counter(MetricErrors,
		metric.WithDescription("Outgoing requests that failed after the egress policy allowed them, by class."),
		metric.WithUnit("{request}"))
}

// errorClass returns the class of a TransportError's cause. The checks go
// from the most to the least specific: a handshake that ran out of time is
// a timeout, a refused dial after a lookup is a connection error.
func errorClass(e *TransportError) string {
	var (
		dnsErr    *net.DNSError
		verifyErr *tls.CertificateVerificationError
		recordErr tls.RecordHeaderError
		alertErr  tls.AlertError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		opErr     *net.OpError
	)
	switch {
	case e.Timeout():
		return ErrorClassTimeout
	case errors.As(e.Err, &dnsErr):
		return ErrorClassDNS
	case errors.As(e.Err, &verifyErr), errors.As(e.Err, &recordErr), errors.As(e.Err, &alertErr),
		errors.As(e.Err, &unknownCA), errors.As(e.Err, &hostErr), errors.As(e.Err, &invalid):
		return ErrorClassTLS
	case errors.As(e.Err, &opErr):
		return ErrorClassConnection
	}
	return ErrorClassOther
}

// countError records e in bothy.egress.errors unless the caller cancelled
// the request (not a failure of the target).
func (c *Client) countError(ctx context.Context, e *TransportError) {
	if errors.Is(e.Err, context.Canceled) {
		return
	}
	c.errors.Add(ctx, 1, metric.WithAttributes(
		attr.EgressPurpose.String(c.purpose),
		attr.ErrorType.String(errorClass(e))))
}
