#!/usr/bin/env bash
# Self-test of `make licenses`: a small module whose tests use the Standard
# Webhooks library (MIT) passes; the same module with a dependency under the
# GPL, or with a dependency without any license file, fails; a module of
# this repository (bothy/...) without a license file passes. The dependencies
# are local modules (replace directives), so nothing is fetched.
. "$(dirname "$0")/lib.sh"

swh=github.com/standard-webhooks/standard-webhooks/libraries
(cd "$repo/services/server" && go mod download "$swh")

m=$scratch/receiver
mkdir -p "$m"
cat >"$m/go.mod" <<EOM
module example.com/receiver

go 1.26.0

require $swh v0.0.1
EOM
cat >"$m/receiver.go" <<'EOM'
// Package receiver verifies webhooks.
package receiver

// Name is the receiver's name.
const Name = "receiver"
EOM
cat >"$m/receiver_test.go" <<'EOM'
package receiver

import (
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestVerify(t *testing.T) { _, _ = standardwebhooks.NewWebhookRaw([]byte("k")) }
EOM
offline() { (cd "$m" && GOWORK=off GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod "$@"); }
offline go mod tidy
gate() { (export GOWORK=off GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod; "$repo/quality/licenses.sh" "$m" "$@"); }

expect_pass "test-only use of the Standard Webhooks library (MIT)" gate
expect_output "1 dependency package\(s\)" "the test-only dependency is in the report"

# A dependency under the GPL 3.0.
mkdir -p "$m/gpllib"
printf 'module example.com/gpllib\n\ngo 1.26.0\n' >"$m/gpllib/go.mod"
printf '// Package gpllib is copyleft.\npackage gpllib\n\n// V is a value.\nconst V = 1\n' >"$m/gpllib/gpllib.go"
cp /usr/share/common-licenses/GPL-3 "$m/gpllib/LICENSE"
printf 'package receiver\n\nimport "example.com/gpllib"\n\n// V uses the dependency.\nconst V = gpllib.V\n' >"$m/uses_gpl.go"
offline go mod edit -require=example.com/gpllib@v0.0.0 -replace=example.com/gpllib=./gpllib
expect_fail "a dependency under GPL-3.0" gate
expect_output "example.com/gpllib is under GPL-3.0" "the failure names the package and its license"

# A dependency without a license file.
rm "$m/gpllib/LICENSE"
expect_fail "a dependency without a license" gate
expect_output "example.com/gpllib is under Unknown" "the failure names the unlicensed package"

# A module of this repository (a path under bothy/, like the receiver
# library the server's tests import) is our code, not a dependency: it
# passes without a license file, while the same code under another path
# failed above.
rm "$m/uses_gpl.go"
mkdir -p "$m/ownlib"
printf 'module bothy/ownlib\n\ngo 1.26.0\n' >"$m/ownlib/go.mod"
printf '// Package ownlib is ours.\npackage ownlib\n\n// V is a value.\nconst V = 1\n' >"$m/ownlib/ownlib.go"
printf 'package receiver\n\nimport "bothy/ownlib"\n\n// W uses the module of this repository.\nconst W = ownlib.V\n' >"$m/uses_own.go"
offline go mod edit -droprequire=example.com/gpllib -dropreplace=example.com/gpllib -require=bothy/ownlib@v0.0.0 -replace=bothy/ownlib=./ownlib
expect_pass "a module of this repository (bothy/...) without a license file" gate
expect_output "1 dependency package\(s\)" "the repository's module is not counted as a dependency"

# The allow list itself matters: without MIT the clean module fails.
grep -vx MIT "$repo/quality/licenses/allowed.txt" >"$scratch/no-mit.txt"
expect_fail "an allow list without MIT" gate "$scratch/no-mit.txt"
finish
