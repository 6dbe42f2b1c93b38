// Package localca issues a throwaway certificate authority and one server
// certificate signed by it, for HTTPS receivers that run on this machine:
// the receiver of `make demo` (trusted through egress.extra_ca_file) and
// the TLS test servers of egresstest. Nothing here is meant for a server
// that others reach.
package localca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// validity is how long an issued pair is valid after now; it starts an hour
// before now so a clock a little behind still accepts it. A demo or a test
// run lasts minutes.
const validity = 24 * time.Hour

// Issued is a server certificate with the authority that signed it.
type Issued struct {
	// Certificate is the server's: the leaf for the host names, then the
	// CA certificate, with the leaf's private key.
	Certificate tls.Certificate
	// CA is the authority, created for this one call.
	CA *x509.Certificate
	// CAPEM is CA in PEM form, for a file a client trusts.
	CAPEM []byte
}

// Roots returns a pool that trusts exactly the authority of i.
func (i Issued) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(i.CA)
	return pool
}

// Issue creates a certificate authority named caName and a server
// certificate for hostnames (the first one is also its common name) signed
// by it, both valid from an hour before now for a day. The certificate
// names no IP address, so a client must send one of the host names as TLS
// server name. It returns an error when hostnames is empty or when no key
// or certificate could be made.
func Issue(caName string, hostnames []string, now time.Time) (Issued, error) {
	if len(hostnames) == 0 {
		return Issued{}, errors.New("localca: a certificate needs at least one host name")
	}
	fail := func(step string, err error) (Issued, error) {
		return Issued{}, fmt.Errorf("localca: %s: %w", step, err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail("generating the CA key", err)
	}
	caSerial, err := serial()
	if err != nil {
		return fail("a serial number", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: caName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fail("creating the CA certificate", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fail("reading the CA certificate", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail("generating the server key", err)
	}
	leafSerial, err := serial()
	if err != nil {
		return fail("a serial number", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: leafSerial,
		Subject:      pkix.Name{CommonName: hostnames[0]},
		DNSNames:     hostnames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fail("creating the server certificate", err)
	}
	return Issued{
		Certificate: tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key},
		CA:          ca,
		CAPEM:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}, nil
}

// serial returns a random 128-bit certificate serial number.
func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}
