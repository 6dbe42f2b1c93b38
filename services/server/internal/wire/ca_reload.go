package wire

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"os/signal"
	"syscall"

	"bothy/server/internal/platform/otel"
)

// watchExtraCA keeps the roots of the webhook egress client in step with
// egress.extra_ca_file (issue 13 item 4): every
// egress.extra_ca_check_interval, and at once on SIGHUP, it reads the file
// and, when its content changed, trusts the system roots plus the file's
// certificates from the next connection on (egress.Client.SetRootCAs). A
// file that cannot be read or holds no certificate keeps the roots in use
// and logs one warning per change, so a half-written file never stops
// deliveries. The content read when the watch starts counts as the one in
// use (NewProcess read it just before). It returns when ctx ends; with no
// file configured it returns at once.
func (p *Process) watchExtraCA(ctx context.Context) {
	path := p.cfg.Egress.ExtraCAFile
	if path == "" || p.modules.WebhookEgress == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	initial, _ := os.ReadFile(path)
	last := sha256.Sum256(initial)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-p.after(p.cfg.Egress.ExtraCACheckInterval):
		}
		pem, err := os.ReadFile(path)
		sum := sha256.Sum256(pem)
		if err == nil && bytes.Equal(sum[:], last[:]) {
			continue
		}
		if err != nil {
			// An unreadable file counts as a change of its own, so it is
			// reported once, and the same content coming back reloads.
			sum = [sha256.Size]byte{}
			if sum == last {
				continue
			}
			last = sum
			p.log.WarnContext(ctx, "egress.extra_ca_file cannot be read, keeping the current roots",
				otel.ErrorAttr(err))
			continue
		}
		last = sum
		roots, err := rootCAsWith(pem)
		if err != nil {
			p.log.WarnContext(ctx, "egress.extra_ca_file holds no PEM certificate, keeping the current roots")
			continue
		}
		p.modules.WebhookEgress.SetRootCAs(roots)
		p.log.InfoContext(ctx, "egress.extra_ca_file reloaded")
	}
}
