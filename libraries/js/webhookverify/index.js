// @bothy/webhookverify verifies, at the receiver, the outgoing webhooks of a
// bothy server (docs/api/webhooks.md): the Ed25519 signatures (v1a) with
// the public keys of getWebhookKeys, optionally the HMAC-SHA256 signatures
// (v1) with the subscription's whsec_ secret, and the freshness of
// webhook-timestamp. It has no dependencies and uses only the Web Crypto
// API (globalThis.crypto.subtle, which in Node is node:crypto's webcrypto),
// fetch, TextEncoder and atob, so the one file runs in Node 20+, Deno, Bun
// and edge runtimes. It mirrors the Go module
// bothy/libraries/go/webhookverify (ADR 0071).

/** How far webhook-timestamp may lie from the receiver's clock by default, in seconds (the Standard Webhooks libraries' five minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 300
/** The most entries of webhook-signature read; a header with more is refused before any signature is checked. */
export const MAX_SIGNATURES = 32
/** The path of getWebhookKeys below an instance's address. */
export const KEYS_PATH = '/api/v1/instance/webhook-keys'
/** The largest answer of getWebhookKeys a KeySource reads. */
export const MAX_KEYS_DOCUMENT = 1 << 20
/** The longest a KeySource keeps keys without fetching, whatever max-age says, in seconds. */
export const MAX_CACHE_AGE_SECONDS = 24 * 60 * 60

/** The codes of WebhookVerificationError; the same causes as the Go module's errors. */
export const ErrorCode = Object.freeze({
  MISSING_HEADER: 'missing_header',
  INVALID_TIMESTAMP: 'invalid_timestamp',
  TIMESTAMP_OUT_OF_TOLERANCE: 'timestamp_out_of_tolerance',
  TOO_MANY_SIGNATURES: 'too_many_signatures',
  NO_MATCHING_SIGNATURE: 'no_matching_signature',
  KEYS_UNAVAILABLE: 'keys_unavailable',
  INVALID_KEY: 'invalid_key',
  INVALID_SECRET: 'invalid_secret'
})

const statuses = {
  [ErrorCode.MISSING_HEADER]: 400,
  [ErrorCode.INVALID_TIMESTAMP]: 400,
  [ErrorCode.TOO_MANY_SIGNATURES]: 400,
  [ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE]: 401,
  [ErrorCode.NO_MATCHING_SIGNATURE]: 401,
  [ErrorCode.KEYS_UNAVAILABLE]: 503
}

/**
 * Every error the library throws on purpose. `code` is one of ErrorCode;
 * the message adds details (which header, how far the timestamp is off)
 * but never a header value, a signature, a key or a secret; `cause` holds
 * what made the keys unavailable.
 */
export class WebhookVerificationError extends Error {
  constructor (code, message, options) {
    super(message, options)
    this.name = 'WebhookVerificationError'
    this.code = code
  }
}

function fail (code, message, cause) {
  return new WebhookVerificationError(code, `webhookverify: ${message}`, cause === undefined ? undefined : { cause })
}

/**
 * statusFor returns the HTTP status a receiver answers for an error of
 * verify: 400 for a request that is not a delivery, 401 for one that is not
 * authentic or not fresh, 503 when the keys are unavailable (the server
 * retries a 503 without counting a failure), 500 for anything else.
 */
export function statusFor (err) {
  return (err instanceof WebhookVerificationError && statuses[err.code]) || 500
}

function subtle () {
  const s = globalThis.crypto?.subtle
  if (!s) throw new TypeError('webhookverify: the Web Crypto API (globalThis.crypto.subtle) is missing')
  return s
}

// decodeBase64 decodes standard base64 with padding in its one canonical
// spelling, or returns null.
function decodeBase64 (s) {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null
  let bin
  try {
    bin = atob(s)
  } catch {
    return null
  }
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  if (btoa(bin) !== s) return null
  return out
}

/**
 * parsePublicKey decodes a public_key of getWebhookKeys: "whpk_" and the
 * standard base64 of an Ed25519 SubjectPublicKeyInfo (RFC 8410), into a
 * CryptoKey that verifies. Anything else rejects with code invalid_key.
 */
export async function parsePublicKey (text) {
  if (typeof text !== 'string' || !text.startsWith('whpk_')) throw fail(ErrorCode.INVALID_KEY, 'the whpk_ prefix is missing')
  const der = decodeBase64(text.slice('whpk_'.length))
  if (der === null) throw fail(ErrorCode.INVALID_KEY, 'not standard base64')
  try {
    return await subtle().importKey('spki', der, { name: 'Ed25519' }, true, ['verify'])
  } catch {
    throw fail(ErrorCode.INVALID_KEY, 'not an Ed25519 SubjectPublicKeyInfo')
  }
}

/**
 * parseSecret decodes a whsec_ secret (the standard base64 of at least one
 * byte) into its key bytes; anything else throws with code invalid_secret.
 */
export function parseSecret (text) {
  if (typeof text !== 'string' || !text.startsWith('whsec_')) throw fail(ErrorCode.INVALID_SECRET, 'the whsec_ prefix is missing')
  const key = decodeBase64(text.slice('whsec_'.length))
  if (key === null || key.length === 0) throw fail(ErrorCode.INVALID_SECRET, 'not standard base64 of at least one byte')
  return key
}

/**
 * staticKeys returns a key set of fixed public keys in their whpk_ form,
 * for a receiver that configures them itself and for tests; refresh never
 * fetches. An empty list gives keys_unavailable on use.
 */
export async function staticKeys (publicKeys) {
  const keys = []
  for (const [i, text] of publicKeys.entries()) {
    try {
      keys.push({ id: '', publicKey: await parsePublicKey(text), state: '', notAfter: '' })
    } catch (err) {
      throw fail(ErrorCode.INVALID_KEY, `key ${i}: ${err.message}`)
    }
  }
  const get = async () => {
    if (keys.length === 0) throw fail(ErrorCode.KEYS_UNAVAILABLE, 'the static key list is empty')
    return keys
  }
  return Object.freeze({
    keys: get,
    refresh: async () => ({ keys: await get(), fetched: false })
  })
}

function isLoopback (hostname) {
  const h = hostname.toLowerCase()
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
}

// freshnessSeconds returns how long an answer may be used (RFC 9111 4.2):
// max-age of Cache-Control less Age, or 0 without max-age, with no-store or
// no-cache, or with a value that is not decimal seconds.
function freshnessSeconds (headers) {
  let maxAge = -1
  for (const directive of (headers.get('cache-control') ?? '').split(',')) {
    const [rawName, ...rest] = directive.trim().split('=')
    const name = rawName.trim().toLowerCase()
    if (name === 'no-store' || name === 'no-cache') return 0
    if (name === 'max-age') {
      const value = rest.join('=').trim().replace(/^"|"$/g, '')
      if (!/^[0-9]+$/.test(value)) return 0
      maxAge = Number(value)
    }
  }
  if (maxAge < 0) return 0
  const age = (headers.get('age') ?? '').trim()
  if (/^[0-9]+$/.test(age)) maxAge -= Number(age)
  return Math.max(maxAge, 0)
}

/**
 * KeySource fetches the keys of one instance's getWebhookKeys and keeps
 * them in memory, like the Go module's KeySource: fresh for the max-age of
 * Cache-Control less Age (at least minRefetchIntervalSeconds, at most a
 * day); fetched again by refresh, which a verifier calls when no key
 * verified a delivery, at most once per minRefetchIntervalSeconds; the last
 * keys stay in use while a fetch fails, and a failed fetch waits that
 * interval too. Concurrent callers share one fetch, which runs for at most
 * fetchTimeoutMs; each caller waits at most until its own signal aborts.
 */
export class KeySource {
  #url
  #fetch
  #minRefetchMs
  #timeoutMs
  #now
  #keys = null
  #freshUntil = 0
  #lastFetch = null
  #lastError = null
  #inflight = null

  /**
   * base is the address the instance's API is served at (for example
   * https://chat.example.com); the keys come from base + KEYS_PATH. It must
   * be https without user info, query or fragment; plain http only for a
   * loopback host. Options: fetch (default globalThis.fetch, with the
   * caller's TLS settings), minRefetchIntervalSeconds (default 60),
   * fetchTimeoutMs (default 10000), now (milliseconds, default Date.now).
   */
  constructor (base, { fetch = globalThis.fetch, minRefetchIntervalSeconds = 60, fetchTimeoutMs = 10000, now = Date.now } = {}) {
    let u
    try {
      u = new URL(base)
    } catch {
      throw new TypeError('webhookverify: the instance address must be absolute, as https://chat.example.com')
    }
    if (u.username || u.password || u.search || u.hash || /[?#]/.test(String(base))) {
      throw new TypeError('webhookverify: the instance address must have no user info, query or fragment')
    }
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopback(u.hostname))) {
      throw new TypeError('webhookverify: the instance address must be https (http only for a loopback host)')
    }
    if (!(minRefetchIntervalSeconds >= 0) || !(fetchTimeoutMs >= 0)) {
      throw new RangeError('webhookverify: minRefetchIntervalSeconds and fetchTimeoutMs must not be negative')
    }
    if (typeof fetch !== 'function') throw new TypeError('webhookverify: no fetch function')
    u.pathname = u.pathname.replace(/\/$/, '') + KEYS_PATH
    this.#url = u.toString()
    this.#fetch = fetch
    this.#minRefetchMs = (minRefetchIntervalSeconds || 60) * 1000
    this.#timeoutMs = fetchTimeoutMs || 10000
    this.#now = now
  }

  /** The address of getWebhookKeys this source fetches. */
  get url () {
    return this.#url
  }

  #tooSoon (now) {
    return this.#inflight === null && this.#lastFetch !== null && now - this.#lastFetch < this.#minRefetchMs
  }

  /**
   * keys returns the cached keys while they are fresh, and otherwise
   * fetches them (or waits for the fetch in progress); after a failed fetch
   * the keys of the last successful one. It rejects with keys_unavailable
   * when it has none, or when signal aborts first.
   */
  async keys ({ signal } = {}) {
    const now = this.#now()
    if (this.#keys !== null && now < this.#freshUntil) return this.#keys
    if (this.#tooSoon(now)) {
      if (this.#keys !== null) return this.#keys
      throw this.#lastError
    }
    return this.#wait(this.#start(now), signal, false)
  }

  /**
   * refresh fetches the keys at once (or waits for the fetch in progress)
   * and resolves to { keys, fetched: true }, unless the last fetch started
   * less than minRefetchIntervalSeconds ago: then to the cached keys with
   * fetched false. It rejects like keys.
   */
  async refresh ({ signal } = {}) {
    const now = this.#now()
    if (this.#tooSoon(now)) {
      if (this.#keys !== null) return { keys: this.#keys, fetched: false }
      throw this.#lastError
    }
    return { keys: await this.#wait(this.#start(now), signal, true), fetched: true }
  }

  #start (now) {
    if (this.#inflight === null) {
      this.#lastFetch = now
      this.#inflight = this.#run().finally(() => { this.#inflight = null })
    }
    return this.#inflight
  }

  // #run performs one fetch, detached from the callers and bounded by the
  // timeout, records its outcome and resolves to { keys } or { error }.
  async #run () {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs)
    try {
      const { keys, maxAge } = await this.#get(controller.signal)
      this.#keys = keys
      this.#lastError = null
      this.#freshUntil = this.#lastFetch + Math.min(Math.max(maxAge * 1000, this.#minRefetchMs), MAX_CACHE_AGE_SECONDS * 1000)
      return { keys }
    } catch (err) {
      const cause = controller.signal.aborted ? controller.signal.reason : err
      this.#lastError = fail(ErrorCode.KEYS_UNAVAILABLE, `getWebhookKeys: ${cause?.message ?? cause}`, cause)
      return { error: this.#lastError }
    } finally {
      clearTimeout(timer)
    }
  }

  async #wait (inflight, signal, strict) {
    let onAbort
    const aborted = new Promise((resolve) => {
      if (!signal) return
      onAbort = () => resolve({ error: fail(ErrorCode.KEYS_UNAVAILABLE, 'the caller gave up waiting for the keys', signal.reason) })
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      const result = await Promise.race([inflight, aborted])
      if (!result.error) return result.keys
      if (!strict && this.#keys !== null && result.error === this.#lastError) return this.#keys
      throw result.error
    } finally {
      if (signal && onAbort) signal.removeEventListener('abort', onAbort)
    }
  }

  async #get (signal) {
    const res = await this.#fetch(this.#url, { signal, headers: { accept: 'application/json' } })
    if (res.url) {
      const final = new URL(res.url)
      if (final.protocol !== 'https:' && !isLoopback(final.hostname)) {
        throw new Error('getWebhookKeys was answered over plain http')
      }
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {})
      throw new Error(`getWebhookKeys answered ${res.status}`)
    }
    const raw = await readLimited(res, MAX_KEYS_DOCUMENT)
    let doc
    try {
      doc = JSON.parse(new TextDecoder().decode(raw))
    } catch {
      throw new Error('getWebhookKeys answered no JSON key list')
    }
    if (!Array.isArray(doc?.keys) || doc.keys.length === 0) throw new Error('getWebhookKeys lists no key')
    const keys = []
    for (const [i, k] of doc.keys.entries()) {
      let publicKey
      try {
        publicKey = await parsePublicKey(k?.public_key)
      } catch (err) {
        throw fail(err.code, `key ${i} of getWebhookKeys: ${err.message}`)
      }
      keys.push({ id: String(k.kid ?? ''), publicKey, state: String(k.state ?? ''), notAfter: String(k.not_after ?? '') })
    }
    return { keys, maxAge: freshnessSeconds(res.headers) }
  }
}

// readLimited reads a response body of at most limit bytes.
async function readLimited (res, limit) {
  if (!res.body) return new Uint8Array(await res.arrayBuffer())
  const reader = res.body.getReader()
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new Error(`getWebhookKeys answered more than ${limit} bytes`)
    }
    chunks.push(value)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

function header (headers, name) {
  let v
  if (typeof headers?.get === 'function') {
    v = headers.get(name)
  } else if (headers) {
    v = headers[name]
    if (v === undefined) {
      const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
      if (key !== undefined) v = headers[key]
    }
  }
  if (Array.isArray(v)) v = v.join(' ')
  return v == null ? '' : String(v)
}

function bytesOf (body) {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
  throw new TypeError('webhookverify: the body must be the raw bytes (Uint8Array, ArrayBuffer) or their text')
}

// parseSignatures returns the decoded v1a and v1 signatures of
// webhook-signature. Entries are separated by white space; an entry of
// another scheme, without a comma, with invalid base64 or of the wrong
// length is skipped (a comma that Headers.get put between two header lines
// is dropped first).
function parseSignatures (text) {
  const entries = text.split(/\s+/).filter(Boolean)
  if (entries.length > MAX_SIGNATURES) {
    throw fail(ErrorCode.TOO_MANY_SIGNATURES, `${entries.length} entries, at most ${MAX_SIGNATURES}`)
  }
  const v1a = []
  const v1 = []
  for (const entry of entries) {
    const comma = entry.indexOf(',')
    if (comma < 0) continue
    const scheme = entry.slice(0, comma)
    const sig = decodeBase64(entry.slice(comma + 1).replace(/,$/, ''))
    if (sig === null) continue
    if (scheme === 'v1a' && sig.length === 64) v1a.push(sig)
    if (scheme === 'v1' && sig.length === 32) v1.push(sig)
  }
  return { v1a, v1 }
}

async function verifyV1a (keys, content, sigs) {
  for (const sig of sigs) {
    for (const k of keys) {
      if (await subtle().verify({ name: 'Ed25519' }, k.publicKey, sig, content)) return { ok: true, keyId: k.id }
    }
  }
  return { ok: false }
}

// verifyV1 compares every v1 entry with the HMAC in constant time: the time
// taken depends neither on where an entry differs nor on which one matched.
async function verifyV1 (hmacKey, content, sigs) {
  if (!hmacKey || sigs.length === 0) return false
  const want = new Uint8Array(await subtle().sign('HMAC', hmacKey, content))
  let ok = false
  for (const sig of sigs) {
    let diff = sig.length ^ want.length
    for (let i = 0; i < want.length; i++) diff |= (sig[i] ?? 0) ^ want[i]
    ok = ok || diff === 0
  }
  return ok
}

/**
 * createVerifier returns a verifier of one subscription's deliveries.
 * Options: keys (required: a KeySource or staticKeys), secret (optional:
 * the whsec_ secret, to accept v1 as well), toleranceSeconds (default
 * DEFAULT_TOLERANCE_SECONDS), now (milliseconds, default Date.now). It
 * rejects with invalid_secret for a secret in the wrong form.
 */
export async function createVerifier ({ keys, secret, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = Date.now } = {}) {
  if (!keys || typeof keys.keys !== 'function' || typeof keys.refresh !== 'function') {
    throw new TypeError('webhookverify: keys is required (a KeySource or staticKeys): v1a is on every delivery')
  }
  if (!(toleranceSeconds >= 0)) throw new RangeError('webhookverify: toleranceSeconds must not be negative')
  const tolerance = toleranceSeconds || DEFAULT_TOLERANCE_SECONDS
  const hmacKey = secret
    ? await subtle().importKey('raw', parseSecret(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    : null

  /**
   * verify checks one delivery: headers (a Headers object, or an object
   * such as node:http's req.headers), body (the raw bytes as received, or
   * their text). It resolves to { id, timestamp, scheme, keyId } when
   * webhook-id is present, webhook-timestamp lies within the tolerance and
   * an entry of webhook-signature verifies over
   * "{webhook-id}.{webhook-timestamp}.{body}" (v1a with a key, or v1 with
   * the secret); every entry is tried, and when no key verifies the keys
   * are fetched once more (refresh). Otherwise it rejects with a
   * WebhookVerificationError. signal bounds the wait for the keys. It does
   * not remember webhook-id values: dropping duplicates is the caller's.
   */
  async function verify (headers, body, { signal } = {}) {
    const id = header(headers, 'webhook-id')
    const rawTs = header(headers, 'webhook-timestamp')
    const sigHeader = header(headers, 'webhook-signature')
    if (!id) throw fail(ErrorCode.MISSING_HEADER, 'missing webhook header: webhook-id')
    if (!rawTs) throw fail(ErrorCode.MISSING_HEADER, 'missing webhook header: webhook-timestamp')
    if (!sigHeader.trim()) throw fail(ErrorCode.MISSING_HEADER, 'missing webhook header: webhook-signature')
    if (!/^[0-9]+$/.test(rawTs) || !Number.isSafeInteger(Number(rawTs))) {
      throw fail(ErrorCode.INVALID_TIMESTAMP, 'webhook-timestamp is not Unix seconds')
    }
    const ts = Number(rawTs)
    const skew = Math.round(now() / 1000 - ts)
    if (Math.abs(now() / 1000 - ts) > tolerance) {
      throw fail(ErrorCode.TIMESTAMP_OUT_OF_TOLERANCE, `webhook-timestamp ${skew} s away from the receiver's clock, tolerance ${tolerance} s`)
    }
    const { v1a, v1 } = parseSignatures(sigHeader)
    const prefix = new TextEncoder().encode(`${id}.${rawTs}.`)
    const bytes = bytesOf(body)
    const content = new Uint8Array(prefix.length + bytes.length)
    content.set(prefix)
    content.set(bytes, prefix.length)
    const delivery = (scheme, keyId = '') => ({ id, timestamp: ts, scheme, keyId })

    let current = null
    let keysError = null
    try {
      current = await keys.keys({ signal })
    } catch (err) {
      keysError = err
    }
    if (current) {
      const r = await verifyV1a(current, content, v1a)
      if (r.ok) return delivery('v1a', r.keyId)
    }
    if (await verifyV1(hmacKey, content, v1)) return delivery('v1')
    if (keysError) throw keysError
    // No known key verified: the delivery may be signed by a key published
    // after the keys were fetched (webhooks.md 2.1 point 2).
    if (v1a.length > 0) {
      const { keys: fresh, fetched } = await keys.refresh({ signal })
      if (fetched) {
        const r = await verifyV1a(fresh, content, v1a)
        if (r.ok) return delivery('v1a', r.keyId)
      }
    }
    throw fail(ErrorCode.NO_MATCHING_SIGNATURE, `no signature verifies (${v1a.length} v1a and ${v1.length} v1 entries checked)`)
  }

  return Object.freeze({ verify })
}
