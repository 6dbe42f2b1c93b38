#!/usr/bin/env bash
# Self-test of `make gitleaks`: a real-looking Standard Webhooks secret is
# reported by the rule standard-webhooks-secret, in the work tree and in the
# history; a chosen secret with the marker EXAMPLE is not.
. "$(dirname "$0")/lib.sh"

r=$scratch/repo
new_repo "$r"
cp "$repo/.gitleaks.toml" "$r/"
echo "# receiver" > "$r/README.md"
git -C "$r" add -A && git -C "$r" commit -qm init
expect_pass "a clean repository" "$repo/quality/gitleaks.sh" "$r"

# A secret made now from random bytes, never stored in this repository.
secret="whsec_$(head -c 32 /dev/urandom | base64 -w0)"
printf 'receiver secret:\n%s\n' "$secret" > "$r/receiver.txt"
expect_fail "a whsec_ secret in an uncommitted file" "$repo/quality/gitleaks.sh" "$r"
expect_output "RuleID: +standard-webhooks-secret" "the finding names the rule standard-webhooks-secret"
if grep -qF -- "$secret" "$log"; then
  echo "FAIL $name: the report shows the secret; it must be redacted"
  failures=$((failures + 1))
fi

git -C "$r" add -A && git -C "$r" commit -qm "add receiver" && git -C "$r" rm -q receiver.txt && git -C "$r" commit -qm "remove receiver"
expect_fail "a whsec_ secret removed from the tree but in the history" "$repo/quality/gitleaks.sh" "$r"
expect_output "RuleID: +standard-webhooks-secret" "the history finding names the rule standard-webhooks-secret"

r2=$scratch/repo2
new_repo "$r2"
cp "$repo/.gitleaks.toml" "$r2/"
printf 'vector secret:\n%s\n' "whsec_EXAMPLE$(head -c 32 /dev/urandom | base64 -w0)" > "$r2/vectors.txt"
git -C "$r2" add -A && git -C "$r2" commit -qm vectors
expect_pass "a whsec_ secret with the marker EXAMPLE" "$repo/quality/gitleaks.sh" "$r2"
finish
