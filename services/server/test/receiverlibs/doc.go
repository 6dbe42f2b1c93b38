// Package receiverlibs holds the test of issue 16 that verifies real
// deliveries of a running server with the receiver libraries of the
// repository (libraries/go/webhookverify and libraries/js/webhookverify,
// ADR 0071): tests only. See README.md.
package receiverlibs
