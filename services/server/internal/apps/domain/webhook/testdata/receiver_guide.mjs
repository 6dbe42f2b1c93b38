// receiver_guide.mjs runs the JavaScript example of docs/api/webhooks.md
// section 3 against the committed test vectors:
//
//   node receiver_guide.mjs VECTORS
//
// TestReceiverGuideJavaScriptExampleVerifiesTheVectors copies the example
// out of the guide into verify-webhook.mjs beside this file and runs it.
// Every case must verify with each of its HMAC secrets (v1) and with its
// public keys (v1a), together and one by one; a body changed by one byte, a
// timestamp outside the tolerance, a missing header and a key or secret of
// another case must fail. The last line is "ok <n> checks"; any failure
// exits with status 1.
import fs from 'node:fs'
import { parseWebhookKey, verifyV1, verifyV1a } from './verify-webhook.mjs'

const vectors = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
// The receiver's own tolerance (webhook.receiver_tolerance in the guide).
const tolerance = 60
let checks = 0
const failures = []

function expect (ok, what) {
  checks++
  if (!ok) failures.push(what)
}

const allKeys = [...new Set(vectors.signatures.flatMap((c) => c.public_key))]
const allSecrets = [...new Set(vectors.signatures.flatMap((c) => c.hmac_secrets))]

for (const c of vectors.signatures) {
  const headers = {
    'webhook-id': c.webhook_id,
    'webhook-timestamp': String(c.timestamp),
    'webhook-signature': c.signature_header
  }
  const body = Buffer.from(c.body, 'utf8')
  const changed = Buffer.from(body)
  changed[changed.length >> 1] ^= 0x01
  const now = c.timestamp
  const keys = c.public_key.map(parseWebhookKey)

  expect(verifyV1a(keys, headers, body, now, tolerance), `${c.name}: v1a with every key`)
  keys.forEach((k, i) => expect(verifyV1a([k], headers, body, now, tolerance), `${c.name}: v1a with key ${i}`))
  expect(!verifyV1a(keys, headers, changed, now, tolerance), `${c.name}: v1a over a changed body fails`)
  expect(!verifyV1a(keys, headers, body, now + tolerance + 1, tolerance), `${c.name}: v1a outside the tolerance fails`)
  expect(!verifyV1a(keys, { ...headers, 'webhook-id': undefined }, body, now, tolerance), `${c.name}: v1a without webhook-id fails`)
  for (const other of allKeys.filter((k) => !c.public_key.includes(k))) {
    expect(!verifyV1a([parseWebhookKey(other)], headers, body, now, tolerance), `${c.name}: v1a with a key of another case fails`)
  }

  c.hmac_secrets.forEach((s, i) => {
    expect(verifyV1(s, headers, body, now, tolerance), `${c.name}: v1 with secret ${i}`)
    expect(!verifyV1(s, headers, changed, now, tolerance), `${c.name}: v1 with secret ${i} over a changed body fails`)
    expect(!verifyV1(s, headers, body, now - tolerance - 1, tolerance), `${c.name}: v1 with secret ${i} outside the tolerance fails`)
  })
  for (const other of allSecrets.filter((s) => !c.hmac_secrets.includes(s))) {
    expect(!verifyV1(other, headers, body, now, tolerance), `${c.name}: v1 with a secret of another case fails`)
  }
}

if (failures.length > 0) {
  console.error(failures.join('\n'))
  process.exit(1)
}
console.log(`ok ${checks} checks`)
