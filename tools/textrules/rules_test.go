package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// defang turns "[.]" into "." and "[:]" into ":": the hosts and addresses
// these tests must find are written defanged, so that this file itself keeps
// the white label.
func defang(s string) string {
	return strings.NewReplacer("[.]", ".", "[:]", ":").Replace(s)
}

const testAllow = `
# comment
github.com        import paths of Go modules
www.rfc-editor.org  normative RFC links
1[.]3[.]101[.]112       the Ed25519 object identifier of RFC 8410
`

func mustAllow(t *testing.T) *Allowed {
	t.Helper()
	a, err := ParseAllowList([]byte(defang(testAllow)))
	require.NoError(t, err)
	return a
}

// designNote is the phrase of the citation rule, assembled so that this
// file does not cite a design note itself.
const designNote = "Design" + " note"

func TestCheckFile(t *testing.T) {
	t.Parallel()
	en, em := string(rune(0x2013)), string(rune(0x2014))
	tests := []struct {
		name  string
		path  string
		text  string
		rules []string // the rule of each finding, in order
	}{
		{"clean prose passes", "docs/a.md", "Alex posts in Support - Eskalation.\n", nil},
		{"an en dash is a finding", "docs/a.md", "from 1" + en + "2\n", []string{"dash"}},
		{"an em dash is a finding in any file", "Makefile", "x" + em + "y\n", []string{"dash"}},
		{"two dashes on one line are two findings", "a.go", en + em + "\n", []string{"dash", "dash"}},
		{"binary files are skipped", "logo.png", "\x00" + em, nil},
		{"example.com and its subdomains pass", "docs/a.md", "https://hooks.example.com:8443/in and alex@example.com and api.example.com\n", nil},
		{"localhost passes", "a_test.go", `url := "http://localhost:8080/x"` + "\n", nil},
		{"a company host in a URL is a finding", "docs/a.md", "see https://hooks[.]example[.]net/services/x\n", []string{"white-label"}},
		{"a bare company host is a finding", "a_test.go", `host := "api[.]example[.]org"` + "\n", []string{"white-label"}},
		{"an e-mail domain is a finding", "docs/a.md", "write to robin@corp[.]example[.]org\n", []string{"white-label"}},
		{"example.com look-alikes are findings", "docs/a.md", "https://example.com[.]example[.]net/\n", []string{"white-label"}},
		{"an allow-listed host passes with its subdomains", "a_test.go", `import "github.com/stretchr/testify/require"` + "\nhttps://www.rfc-editor.org/rfc/rfc9110\n", nil},
		{"a public IPv4 literal is a finding", "docs/a.md", "dial 11[.]22[.]33[.]44:53\n", []string{"white-label"}},
		{"documentation and loopback addresses pass", "a_test.go", "127.0.0.1 192.0.2.10 198.51.100.7 203.0.113.9 [::1]:8080 2001:db8::5\n", nil},
		{"private and special addresses for egress tests pass", "a_test.go", "10.0.0.1 172.16.5.4 192.168.1.1 169.254.169.254 100.64.0.1 0.0.0.0 fe80::1 fc00::1 ::ffff:10.0.0.1 64:ff9b::7f00:1 2002:c0a8:101::1\n", nil},
		{"a public IPv6 literal is a finding", "docs/a.md", "2a00[:]1450[:][:]1\n", []string{"white-label"}},
		{"a mapped public IPv4 address is a finding", "docs/a.md", "[:][:]ffff[:]11[.]22[.]33[.]44\n", []string{"white-label"}},
		{"an IPv4-compatible public address is a finding", "docs/a.md", "[:][:]b16[:]212c\n", []string{"white-label"}},
		{"reserved IPv6 outside 2000::/3 passes", "a_test.go", "4000::1 8000::1 e000::1 1::1 fec0::1 5f00::1 ::2 ::7f00:1 3ffe::1\n", nil},
		{"a section number is not an address", "docs/a.md", "RFC 9106 section 5[.]1[.]1[.]2 and § 4[.]1[.]2[.]3\n", nil},
		{"versions and times are not addresses", "docs/a.md", "v1.2.3.4 go1.26.0 12:30:45 aa:bb:cc:dd:ee:ff\n", nil},
		{"an allow-listed object identifier passes", "docs/a.md", "OID 1[.]3[.]101[.]112\n", nil},
		{"templates and single labels are not hosts", "docs/a.md", "https://{host}/x http://%s/ postgres://db/x\n", nil},
		{"file names are not hosts", "docs/a.md", "README.md main.go build.sh config.yaml\n", nil},
		{"go.sum is exempt from the white label", "services/server/go.sum", "golang.org/x/text v0.1.0 h1:x\nhost[.]example[.]net\n", nil},
		{"generated code is exempt from the white label", "internal/api/api.gen.go", "// https://api[.]example[.]net\n", nil},
		{"generated code still has no dashes", "internal/api/api.gen.go", em + "\n", []string{"dash"}},
		{"a Go comment citing a ticket's design note is a finding", "internal/a.go", "// the lease (" + designNote + " 4 b)\n", []string{"citation"}},
		{"a Go test citing design notes is a finding", "internal/a_test.go", "// " + designNote + "s 2 and 5\n", []string{"citation"}},
		{"a Go comment citing a decision row passes", "internal/a.go", "// the lease (D-M2-26-3, docs/adr/0069)\n", nil},
		{"prose outside Go may name design notes", "docs/a.md", "the ticket's " + designNote + " 4\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CheckFile(tc.path, []byte(defang(tc.text)), mustAllow(t))
			var rules []string
			for _, f := range got {
				rules = append(rules, f.Rule)
			}
			require.Equal(t, tc.rules, rules, "%v", got)
		})
	}
}

func TestFindingNamesPathAndLine(t *testing.T) {
	t.Parallel()
	got := CheckFile("docs/b.md", []byte(defang("ok\nsee https://evil[.]example[.]net/\n")), mustAllow(t))
	require.Len(t, got, 1)
	require.Equal(t, "docs/b.md", got[0].Path)
	require.Equal(t, 2, got[0].Line)
	require.Contains(t, got[0].String(), defang(`docs/b.md:2: white-label: host "evil[.]example[.]net"`))
}

func TestParseAllowListNeedsAReason(t *testing.T) {
	t.Parallel()
	_, err := ParseAllowList([]byte("github.com\n"))
	require.ErrorContains(t, err, "line 1")
	_, err = ParseAllowList([]byte("github.com imports\n"))
	require.Error(t, err)
}

func TestRunOverAGitRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	write("quality/whitelabel-allow.txt", defang(testAllow))
	write(".gitignore", "ignored/\n")
	write("docs/ok.md", "See https://hooks.example.com/.\n")
	write("ignored/bad.md", defang("https://evil[.]example[.]net/\n"))

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-C", dir}, &stdout, &stderr), stderr.String())
	require.Empty(t, stdout.String())

	write("docs/bad.md", defang("Sam"+string(rune(0x2014))+"Robin at https://evil[.]example[.]net/\n"))
	stdout.Reset()
	require.Equal(t, 1, run([]string{"-C", dir}, &stdout, &stderr))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 2, stdout.String())
	require.Contains(t, lines[0], "docs/bad.md:1: dash")
	require.Contains(t, lines[1], "docs/bad.md:1: white-label")
}
