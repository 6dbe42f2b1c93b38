-- +goose Up
-- The server's Ed25519 signing keys per purpose (M1-32,
-- docs/adr/0066-server-signing-keys-per-purpose.md). A key moves
-- next -> active -> retiring -> retired and never back:
--
--   next      published (getJwks, getWebhookKeys) but not signing yet;
--   active    signs; exactly one per purpose once the instance exists;
--   retiring  published; signs beside the active key while not_after lies
--             ahead (webhooks);
--   retired   neither published nor used; its private key is erased.
--
-- kid is the lower-case hex of the first 16 bytes of SHA-256 over the DER
-- SubjectPublicKeyInfo of the public key. private_key_enc is
-- version || nonce || AES-256-GCM(seed) under the master key of
-- instance.signing_keys_master_key_ref, with kid and purpose as additional
-- data, so a sealed key copied to another row or purpose does not open.
CREATE TABLE server_signing_keys (
    kid             text PRIMARY KEY CHECK (kid ~ '^[0-9a-f]{32}$'),
    purpose         text NOT NULL CHECK (purpose IN ('webhook_out', 'agent_token')),
    alg             text NOT NULL DEFAULT 'EdDSA' CHECK (alg = 'EdDSA'),
    state           text NOT NULL CHECK (state IN ('next', 'active', 'retiring', 'retired')),
    public_key      bytea NOT NULL CHECK (octet_length(public_key) = 32),
    private_key_enc bytea NOT NULL,
    created_at      timestamptz NOT NULL,
    activated_at    timestamptz NULL,
    not_after       timestamptz NULL,
    retired_at      timestamptz NULL,
    CONSTRAINT server_signing_keys_activated_unless_next
        CHECK ((state = 'next') = (activated_at IS NULL)),
    CONSTRAINT server_signing_keys_not_after_once_retiring
        CHECK ((state IN ('retiring', 'retired')) = (not_after IS NOT NULL)),
    CONSTRAINT server_signing_keys_retired_at_iff_retired
        CHECK ((state = 'retired') = (retired_at IS NOT NULL)),
    CONSTRAINT server_signing_keys_private_key_until_retired
        CHECK ((state = 'retired') = (octet_length(private_key_enc) = 0))
);

-- One active and at most one next key per purpose.
CREATE UNIQUE INDEX server_signing_keys_one_active ON server_signing_keys (purpose) WHERE state = 'active';
CREATE UNIQUE INDEX server_signing_keys_one_next ON server_signing_keys (purpose) WHERE state = 'next';

GRANT SELECT, INSERT, UPDATE, DELETE ON server_signing_keys TO bothy_app;

COMMENT ON TABLE server_signing_keys IS 'Ed25519 server signing keys per purpose, private keys encrypted at rest (instance module). retention: config';

-- +goose Down
DROP TABLE server_signing_keys;
