// The library against api/webhook-test-vectors.json, the contract of every
// verifier (docs/api/webhooks.md 2.2), read from the repository and never
// copied: each public key (v1a) and each HMAC secret (v1) verifies on its
// own; a body changed by one byte, a timestamp outside the tolerance, a
// missing webhook-id and the keys and secrets of the other cases fail with
// their codes.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'

import {
  createVerifier, DEFAULT_TOLERANCE_SECONDS, ErrorCode, staticKeys, WebhookVerificationError
} from '../index.js'
import { signer } from './signing.js'

const vectorsUrl = new URL('../../../../api/webhook-test-vectors.json', import.meta.url)
const { signatures: cases } = JSON.parse(await readFile(vectorsUrl, 'utf8'))

// A public key that signed no case (seed 0x5a repeated, as in the Go tests).
const unrelatedKey = (await signer(0x5a)).publicKey

function headersOf (c) {
  return {
    'webhook-id': c.webhook_id,
    'webhook-timestamp': String(c.timestamp),
    'webhook-signature': c.signature_header
  }
}

async function verifier (keys, secret, nowSeconds) {
  return createVerifier({ keys: await staticKeys(keys), secret, now: () => nowSeconds * 1000 })
}

async function rejects (promise, code, what) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof WebhookVerificationError, `${what}: ${err}`)
    assert.equal(err.code, code, what)
    return true
  })
}

const allKeys = [...new Set(cases.flatMap((c) => c.public_key))]
const allSecrets = [...new Set(cases.flatMap((c) => c.hmac_secrets))]

for (const c of cases) {
  test(`vectors: ${c.name}`, async () => {
    const body = new TextEncoder().encode(c.body)
    const changed = body.slice()
    changed[changed.length >> 1] ^= 0x01
    const now = c.timestamp

    const d = await (await verifier(c.public_key, undefined, now)).verify(headersOf(c), body)
    assert.deepEqual(d, { id: c.webhook_id, timestamp: c.timestamp, scheme: 'v1a', keyId: '' })
    for (const k of c.public_key) {
      await (await verifier([k], undefined, now)).verify(headersOf(c), body)
    }
    for (const s of c.hmac_secrets) {
      const d = await (await verifier([unrelatedKey], s, now)).verify(headersOf(c), body)
      assert.equal(d.scheme, 'v1', 'the secret alone')
    }
    // A string body is the same bytes, UTF-8 encoded.
    await (await verifier(c.public_key, undefined, now)).verify(headersOf(c), c.body)

    for (const s of [undefined, ...c.hmac_secrets]) {
      const v = await verifier(c.public_key, s, now)
      await rejects(v.verify(headersOf(c), changed), ErrorCode.NO_MATCHING_SIGNATURE, 'a changed body')
      await rejects((await verifier(c.public_key, s, now + DEFAULT_TOLERANCE_SECONDS + 1)).verify(headersOf(c), body),
        ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE, 'a timestamp older than the tolerance')
      await rejects((await verifier(c.public_key, s, now - DEFAULT_TOLERANCE_SECONDS - 1)).verify(headersOf(c), body),
        ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE, 'a timestamp newer than the tolerance')
      await rejects(v.verify({ ...headersOf(c), 'webhook-id': undefined }, body), ErrorCode.MISSING_HEADER, 'no webhook-id')
    }
    for (const k of allKeys.filter((k) => !c.public_key.includes(k))) {
      await rejects((await verifier([k], undefined, now)).verify(headersOf(c), body), ErrorCode.NO_MATCHING_SIGNATURE, 'a key of another case')
    }
    for (const s of allSecrets.filter((s) => !c.hmac_secrets.includes(s))) {
      await rejects((await verifier([unrelatedKey], s, now)).verify(headersOf(c), body), ErrorCode.NO_MATCHING_SIGNATURE, 'a secret of another case')
    }
  })
}

test('the tolerance is inclusive and an option replaces the default', async () => {
  const c = cases[0]
  const keys = await staticKeys(c.public_key)
  for (const [toleranceSeconds, offset, ok] of [
    [undefined, DEFAULT_TOLERANCE_SECONDS, true],
    [undefined, -DEFAULT_TOLERANCE_SECONDS, true],
    [undefined, DEFAULT_TOLERANCE_SECONDS + 1, false],
    [60, 60, true],
    [60, -61, false],
    [3600, 3540, true]
  ]) {
    const v = await createVerifier({ keys, toleranceSeconds, now: () => (c.timestamp + offset) * 1000 })
    const result = v.verify(headersOf(c), c.body)
    if (ok) await result
    else await rejects(result, ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE, `${offset} s with tolerance ${toleranceSeconds}`)
  }
})

test('headers are read from a Headers object, case-insensitively from a plain object', async () => {
  const c = cases[0]
  const v = await verifier(c.public_key, undefined, c.timestamp)
  await v.verify(new Headers(headersOf(c)), c.body)
  await v.verify({ 'Webhook-Id': c.webhook_id, 'WEBHOOK-TIMESTAMP': String(c.timestamp), 'webhook-signature': [c.signature_header] }, c.body)
})
