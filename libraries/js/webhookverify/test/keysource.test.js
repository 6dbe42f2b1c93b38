// KeySource against a getWebhookKeys on 127.0.0.1 (node:http; plain http is
// accepted for a loopback host only) with a clock the tests move by hand.
import assert from 'node:assert/strict'
import http from 'node:http'
import { test } from 'node:test'

import { createVerifier, ErrorCode, KEYS_PATH, KeySource, WebhookVerificationError } from '../index.js'
import { signDelivery, signer } from './signing.js'

// keysServer serves the public keys of signers (kid "kid-<i>", the first
// active, the others retiring) with Cache-Control "public, max-age=300";
// the test changes state between requests.
async function keysServer (t, signers) {
  const state = { requests: 0, cacheControl: 'public, max-age=300', age: '', status: 200, body: '', block: null, keys: [] }
  state.setSigners = (list) => {
    state.keys = list.map((s, i) => ({ kid: `kid-${i}`, public_key: s.publicKey, state: i === 0 ? 'active' : 'retiring' }))
  }
  state.setSigners(signers)
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url !== KEYS_PATH) {
      res.writeHead(404).end()
      return
    }
    state.requests++
    if (state.block) await state.block
    const headers = { 'Content-Type': 'application/json' }
    if (state.cacheControl) headers['Cache-Control'] = state.cacheControl
    if (state.age) headers.Age = state.age
    res.writeHead(state.status, headers).end(state.body || JSON.stringify({ keys: state.keys }))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  state.url = `http://127.0.0.1:${server.address().port}`
  return state
}

function fakeClock () {
  const clock = { ms: 1796032800 * 1000 }
  clock.now = () => clock.ms
  clock.advance = (seconds) => { clock.ms += seconds * 1000 }
  return clock
}

async function unavailable (promise, what) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof WebhookVerificationError, `${what}: ${err}`)
    assert.equal(err.code, ErrorCode.KEYS_UNAVAILABLE, `${what}: ${err.message}`)
    return true
  })
}

test('keys are kept for the max-age of Cache-Control', async (t) => {
  const alex = await signer(1)
  const sam = await signer(2)
  const srv = await keysServer(t, [alex, sam])
  const clock = fakeClock()
  const ks = new KeySource(srv.url, { now: clock.now })
  const keys = await ks.keys()
  assert.deepEqual(keys.map((k) => [k.id, k.state]), [['kid-0', 'active'], ['kid-1', 'retiring']])
  clock.advance(299)
  await ks.keys()
  assert.equal(srv.requests, 1, 'within max-age')
  clock.advance(1)
  await ks.keys()
  assert.equal(srv.requests, 2, 'after max-age')
})

test('freshness follows Cache-Control and Age, within the minimum interval and a day', async (t) => {
  const alex = await signer(1)
  for (const [name, cacheControl, age, fresh] of [
    ['max-age', 'public, max-age=300', '', 299],
    ['upper case and a quoted value', 'Public, Max-Age="120"', '', 119],
    ['Age counts against max-age', 'max-age=300', '200', 99],
    ['no Cache-Control', '', '', 59],
    ['no-store', 'no-store', '', 59],
    ['no-cache', 'max-age=300, no-cache', '', 59],
    ['below the minimum interval', 'max-age=5', '', 59],
    ['an invalid max-age', 'max-age=soon', '', 59],
    ['over a day', 'max-age=999999999', '', 86399]
  ]) {
    const srv = await keysServer(t, [alex])
    srv.cacheControl = cacheControl
    srv.age = age
    const clock = fakeClock()
    const ks = new KeySource(srv.url, { now: clock.now })
    await ks.keys()
    clock.advance(fresh)
    await ks.keys()
    assert.equal(srv.requests, 1, `${name}: fresh at ${fresh} s`)
    clock.advance(1)
    await ks.keys()
    assert.equal(srv.requests, 2, `${name}: stale at ${fresh + 1} s`)
  }
})

test('a delivery of a new signer makes one more fetch, at most once per minimum interval', async (t) => {
  const alex = await signer(1)
  const sam = await signer(2)
  const robin = await signer(3)
  const srv = await keysServer(t, [alex])
  const clock = fakeClock()
  const ks = new KeySource(srv.url, { now: clock.now, minRefetchIntervalSeconds: 60 })
  const v = await createVerifier({ keys: ks, now: clock.now })
  const at = () => clock.now() / 1000
  await v.verify(await signDelivery(at(), '{}', [alex]), '{}')
  clock.advance(60)
  srv.setSigners([sam, alex])
  const d = await v.verify(await signDelivery(at(), '{}', [sam]), '{}')
  assert.equal(d.keyId, 'kid-0')
  assert.equal(srv.requests, 2)

  await assert.rejects(v.verify(await signDelivery(at(), '{}', [robin]), '{}'), (err) => err.code === ErrorCode.NO_MATCHING_SIGNATURE)
  assert.equal(srv.requests, 2, 'within the interval no request')
  clock.advance(60)
  await assert.rejects(v.verify(await signDelivery(at(), '{}', [robin]), '{}'), (err) => err.code === ErrorCode.NO_MATCHING_SIGNATURE)
  assert.equal(srv.requests, 3, 'after the interval one request')
})

test('an answer that is not a key list is keys_unavailable', async (t) => {
  const alex = await signer(1)
  for (const [name, change, cause] of [
    ['a 500 answer', (s) => { s.status = 500 }, ''],
    ['not JSON', (s) => { s.body = '<html>' }, ''],
    ['no keys member', (s) => { s.body = '{"items": []}' }, ''],
    ['an empty list', (s) => { s.body = '{"keys": []}' }, ''],
    ['a key without whpk_', (s) => { s.body = '{"keys": [{"kid": "k", "public_key": "MCowBQYDK2VwAyEA", "state": "active"}]}' }, ErrorCode.INVALID_KEY],
    ['a key that is not Ed25519', (s) => { s.body = '{"keys": [{"kid": "k", "public_key": "whpk_AAAA", "state": "active"}]}' }, ErrorCode.INVALID_KEY],
    ['a document over 1 MiB', (s) => { s.body = '{"keys": [], "pad": "' + 'x'.repeat(1 << 20) + '"}' }, '']
  ]) {
    const srv = await keysServer(t, [alex])
    change(srv)
    const ks = new KeySource(srv.url, { now: fakeClock().now })
    await assert.rejects(ks.keys(), (err) => {
      assert.equal(err.code, ErrorCode.KEYS_UNAVAILABLE, name)
      if (cause) assert.equal(err.cause?.code, cause, name)
      return true
    })
  }
})

test('the last keys stay in use while fetches fail, and a failure waits the minimum interval', async (t) => {
  const alex = await signer(1)
  const srv = await keysServer(t, [alex])
  const clock = fakeClock()
  const ks = new KeySource(srv.url, { now: clock.now, minRefetchIntervalSeconds: 60 })
  await ks.keys()
  srv.status = 503
  clock.advance(300)
  assert.equal((await ks.keys()).length, 1, 'stale keys after a failure')
  assert.equal(srv.requests, 2)
  clock.advance(59)
  await ks.keys()
  assert.equal(srv.requests, 2, 'within the interval after a failure')
  clock.advance(1)
  await ks.keys()
  assert.equal(srv.requests, 3, 'after the interval')

  const empty = await keysServer(t, [])
  empty.status = 502
  const clock2 = fakeClock()
  const ks2 = new KeySource(empty.url, { now: clock2.now, minRefetchIntervalSeconds: 60 })
  for (let i = 0; i < 3; i++) await unavailable(ks2.keys(), 'no keys yet')
  assert.equal(empty.requests, 1, 'a failed first fetch is not repeated within the interval')
  clock2.advance(60)
  await unavailable(ks2.keys(), 'after the interval')
  assert.equal(empty.requests, 2)
})

test('a caller waits no longer than its signal, and callers share one fetch', async (t) => {
  const alex = await signer(1)
  const srv = await keysServer(t, [alex])
  let release
  srv.block = new Promise((resolve) => { release = resolve })
  const ks = new KeySource(srv.url, { now: fakeClock().now })
  const controller = new AbortController()
  const callers = Array.from({ length: 8 }, () => ks.keys({ signal: controller.signal }))
  controller.abort()
  for (const c of callers) await unavailable(c, 'an aborted caller')
  release()
  assert.equal((await ks.keys()).length, 1, 'the fetch went on and filled the cache')
  assert.equal(srv.requests, 1, 'one request shared by every caller')
})

test('fetchTimeoutMs bounds a fetch', async (t) => {
  const alex = await signer(1)
  const srv = await keysServer(t, [alex])
  let release
  srv.block = new Promise((resolve) => { release = resolve })
  t.after(() => release())
  const ks = new KeySource(srv.url, { now: fakeClock().now, fetchTimeoutMs: 1 })
  await unavailable(ks.keys(), 'a hung server')
})

test('an answer over plain http from another host is refused', async () => {
  const alex = await signer(1)
  const fetch = async () => {
    const res = new Response(JSON.stringify({ keys: [{ kid: 'k', public_key: alex.publicKey, state: 'active' }] }), { status: 200 })
    Object.defineProperty(res, 'url', { value: 'http://keys.example.com' + KEYS_PATH })
    return res
  }
  const ks = new KeySource('https://chat.example.com', { fetch, now: fakeClock().now })
  await assert.rejects(ks.keys(), (err) => err.code === ErrorCode.KEYS_UNAVAILABLE && /plain http/.test(err.message))
})

test('the instance address is checked', () => {
  for (const [base, url] of [
    ['https://chat.example.com', 'https://chat.example.com' + KEYS_PATH],
    ['https://chat.example.com/', 'https://chat.example.com' + KEYS_PATH],
    ['https://chat.example.com:8443/bothy', 'https://chat.example.com:8443/bothy' + KEYS_PATH],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080' + KEYS_PATH],
    ['http://localhost:8080', 'http://localhost:8080' + KEYS_PATH],
    ['http://[::1]:8080', 'http://[::1]:8080' + KEYS_PATH]
  ]) {
    assert.equal(new KeySource(base).url, url, base)
  }
  for (const base of ['http://chat.example.com', 'http://10.0.0.1', 'ftp://chat.example.com', 'https://robin@chat.example.com',
    'https://chat.example.com/?a=b', 'https://chat.example.com/#keys', 'chat.example.com', '']) {
    assert.throws(() => new KeySource(base), TypeError, base)
  }
  assert.throws(() => new KeySource('https://chat.example.com', { minRefetchIntervalSeconds: -1 }), RangeError)
})
