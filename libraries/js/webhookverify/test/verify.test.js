// Errors, limits and options of createVerifier, with keys made for the test.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  createVerifier, ErrorCode, MAX_SIGNATURES, parsePublicKey, parseSecret, statusFor, staticKeys, WebhookVerificationError
} from '../index.js'
import { signDelivery, signer } from './signing.js'

const now = 1796032800

async function rejects (promise, code, what) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof WebhookVerificationError, `${what}: ${err}`)
    assert.equal(err.code, code, `${what}: ${err.message}`)
    return true
  })
}

test('every error has its code and its answer', async () => {
  const alex = await signer(1)
  const v = await createVerifier({ keys: await staticKeys([alex.publicKey]), now: () => now * 1000 })
  const good = await signDelivery(now, '{}', [alex])
  for (const [what, headers, body, code, status] of [
    ['no webhook-id', { ...good, 'webhook-id': '' }, '{}', ErrorCode.MISSING_HEADER, 400],
    ['no webhook-timestamp', { ...good, 'webhook-timestamp': undefined }, '{}', ErrorCode.MISSING_HEADER, 400],
    ['no webhook-signature', { ...good, 'webhook-signature': ' ' }, '{}', ErrorCode.MISSING_HEADER, 400],
    ['a signed timestamp', { ...good, 'webhook-timestamp': '+' + now }, '{}', ErrorCode.INVALID_TIMESTAMP, 400],
    ['a timestamp in milliseconds', { ...good, 'webhook-timestamp': String(now * 1000) }, '{}', ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE, 401],
    ['a fraction', { ...good, 'webhook-timestamp': now + '.5' }, '{}', ErrorCode.INVALID_TIMESTAMP, 400],
    ['too many entries', { ...good, 'webhook-signature': 'v1a,AAAA '.repeat(MAX_SIGNATURES + 1) }, '{}', ErrorCode.TOO_MANY_SIGNATURES, 400],
    ['entries of other schemes only', { ...good, 'webhook-signature': 'v2,AAAA v1,!!!! v1a' }, '{}', ErrorCode.NO_MATCHING_SIGNATURE, 401],
    ['a changed body', good, '{} ', ErrorCode.NO_MATCHING_SIGNATURE, 401]
  ]) {
    await assert.rejects(v.verify(headers, body), (err) => {
      assert.equal(err.code, code, `${what}: ${err.message}`)
      assert.equal(statusFor(err), status, what)
      return true
    })
  }
  assert.equal(statusFor(new Error('other')), 500)
  assert.equal(statusFor(new WebhookVerificationError(ErrorCode.KEYS_UNAVAILABLE, 'down')), 503)
})

test('every entry is tried: a valid one after invalid ones verifies', async () => {
  const alex = await signer(1)
  const sam = await signer(2)
  const v = await createVerifier({ keys: await staticKeys([sam.publicKey]), now: () => now * 1000 })
  const both = await signDelivery(now, '{}', [alex, sam])
  const d = await v.verify({ ...both, 'webhook-signature': 'v2,AAAA v1a,!!!! ' + both['webhook-signature'] }, '{}')
  assert.equal(d.scheme, 'v1a')
})

test('keys and secrets in the wrong form are refused with their codes', async () => {
  await rejects(parsePublicKey('MCowBQYDK2VwAyEAJUO5L/EJVRFHatyDadtt3JM2ZaEZeN2hQE7hBmypVZ0='), ErrorCode.INVALID_KEY, 'no whpk_')
  await rejects(parsePublicKey('whpk_AAAA'), ErrorCode.INVALID_KEY, 'not a key')
  await rejects(parsePublicKey('whpk_not base64'), ErrorCode.INVALID_KEY, 'not base64')
  assert.throws(() => parseSecret('EXAMPLE0BothyWebhookVectorSecretOlderKey000='), (err) => err.code === ErrorCode.INVALID_SECRET)
  assert.throws(() => parseSecret('whsec_'), (err) => err.code === ErrorCode.INVALID_SECRET)
  assert.throws(() => parseSecret('whsec_***'), (err) => err.code === ErrorCode.INVALID_SECRET)
  assert.equal(parseSecret('whsec_EXAMPLE0BothyWebhookVectorSecretOlderKey000=').length, 32)
  await rejects(createVerifier({ keys: await staticKeys([]), secret: 'whsec_***' }), ErrorCode.INVALID_SECRET, 'createVerifier')
  await assert.rejects(createVerifier({}), TypeError)
  await assert.rejects(createVerifier({ keys: await staticKeys([]), toleranceSeconds: -1 }), RangeError)
})

test('an error text holds no secret, key or signature', async () => {
  const secret = 'whsec_EXAMPLE0BothyWebhookVectorSecretOlderKey000='
  const alex = await signer(1)
  const v = await createVerifier({ keys: await staticKeys([alex.publicKey]), secret, now: () => now * 1000 })
  const good = await signDelivery(now, '{}', [alex])
  const err = await v.verify(good, 'changed').catch((e) => e)
  for (const s of [secret, alex.publicKey, good['webhook-signature'].split(',')[1]]) {
    assert.ok(!err.message.includes(s) && !String(err.stack).includes(s))
  }
})

test('no keys means keys_unavailable unless v1 verifies', async () => {
  const secret = 'whsec_EXAMPLE0BothyWebhookVectorSecretOlderKey000='
  const alex = await signer(1)
  const headers = await signDelivery(now, '{}', [alex], [secret])
  await rejects((await createVerifier({ keys: await staticKeys([]), now: () => now * 1000 })).verify(headers, '{}'),
    ErrorCode.KEYS_UNAVAILABLE, 'no keys, no secret')
  const d = await (await createVerifier({ keys: await staticKeys([]), secret, now: () => now * 1000 })).verify(headers, '{}')
  assert.equal(d.scheme, 'v1')
})
