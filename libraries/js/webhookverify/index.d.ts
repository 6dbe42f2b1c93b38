// Type declarations of @bothy/webhookverify (index.js).

/** How far webhook-timestamp may lie from the receiver's clock by default, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS: 300
/** The most entries of webhook-signature read. */
export const MAX_SIGNATURES: 32
/** The path of getWebhookKeys below an instance's address. */
export const KEYS_PATH: '/api/v1/instance/webhook-keys'
/** The largest answer of getWebhookKeys a KeySource reads, in bytes. */
export const MAX_KEYS_DOCUMENT: number
/** The longest a KeySource keeps keys without fetching, in seconds. */
export const MAX_CACHE_AGE_SECONDS: number

/** The codes of WebhookVerificationError. */
export const ErrorCode: Readonly<{
  MISSING_HEADER: 'missing_header'
  INVALID_TIMESTAMP: 'invalid_timestamp'
  TIMESTAMP_OUT_OF_TOLERANCE: 'timestamp_out_of_tolerance'
  TOO_MANY_SIGNATURES: 'too_many_signatures'
  NO_MATCHING_SIGNATURE: 'no_matching_signature'
  KEYS_UNAVAILABLE: 'keys_unavailable'
  INVALID_KEY: 'invalid_key'
  INVALID_SECRET: 'invalid_secret'
}>

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode]

/** Every error the library throws on purpose; the message never holds a header value, signature, key or secret. */
export class WebhookVerificationError extends Error {
  constructor (code: ErrorCodeValue, message: string, options?: { cause?: unknown })
  readonly name: 'WebhookVerificationError'
  readonly code: ErrorCodeValue
}

/** The HTTP status to answer for an error of verify: 400, 401, 503 or 500. */
export function statusFor (err: unknown): 400 | 401 | 503 | 500

/** One public key that verifies v1a signatures. */
export interface Key {
  /** The kid of getWebhookKeys; '' for a static key. */
  id: string
  publicKey: CryptoKey
  /** next, active or retiring; '' for a static key. */
  state: string
  /** The not_after of a retiring key (RFC 3339), else ''. */
  notAfter: string
}

/** What createVerifier takes as keys: a KeySource, staticKeys, or your own. */
export interface KeySet {
  /** The keys to verify with now; rejects with keys_unavailable. */
  keys (options?: { signal?: AbortSignal }): Promise<Key[]>
  /** Called when no key verified: may fetch again (fetched true). */
  refresh (options?: { signal?: AbortSignal }): Promise<{ keys: Key[], fetched: boolean }>
}

/** Decodes a whpk_ public key of getWebhookKeys; rejects with invalid_key. */
export function parsePublicKey (text: string): Promise<CryptoKey>

/** Decodes a whsec_ secret into its key bytes; throws with invalid_secret. */
export function parseSecret (text: string): Uint8Array

/** A key set of fixed whpk_ public keys; refresh never fetches. */
export function staticKeys (publicKeys: readonly string[]): Promise<KeySet>

export interface KeySourceOptions {
  /** Sends the requests; default globalThis.fetch. */
  fetch?: (input: string, init?: { signal?: AbortSignal, headers?: Record<string, string> }) => Promise<Response>
  /** Least time between two fetches, in seconds; default 60. */
  minRefetchIntervalSeconds?: number
  /** Bound of one fetch, in milliseconds; default 10000. */
  fetchTimeoutMs?: number
  /** The clock in milliseconds; default Date.now. */
  now?: () => number
}

/** The keys of one instance's getWebhookKeys, cached after its Cache-Control. */
export class KeySource implements KeySet {
  /** base: the instance's address, https (http only for a loopback host). Throws TypeError or RangeError. */
  constructor (base: string, options?: KeySourceOptions)
  /** The address of getWebhookKeys fetched. */
  readonly url: string
  keys (options?: { signal?: AbortSignal }): Promise<Key[]>
  refresh (options?: { signal?: AbortSignal }): Promise<{ keys: Key[], fetched: boolean }>
}

export interface VerifierOptions {
  /** Required: the v1a keys. */
  keys: KeySet
  /** The subscription's whsec_ secret, to accept v1 as well. */
  secret?: string
  /** Default DEFAULT_TOLERANCE_SECONDS. */
  toleranceSeconds?: number
  /** The clock in milliseconds; default Date.now. */
  now?: () => number
}

/** Headers as a Headers object or a plain object such as node:http's req.headers. */
export type WebhookHeaders =
  | { get (name: string): string | null }
  | Record<string, string | readonly string[] | undefined>

/** What verify learned of an accepted delivery. */
export interface Delivery {
  /** webhook-id: the event ID, to drop duplicates by. */
  id: string
  /** webhook-timestamp in Unix seconds. */
  timestamp: number
  /** The scheme of the entry that verified. */
  scheme: 'v1a' | 'v1'
  /** The kid of the key whose v1a entry verified; '' for v1 or a static key. */
  keyId: string
}

export interface Verifier {
  /** Verifies one delivery over its raw body; rejects with a WebhookVerificationError. */
  verify (headers: WebhookHeaders, body: Uint8Array | ArrayBuffer | ArrayBufferView | string, options?: { signal?: AbortSignal }): Promise<Delivery>
}

/** A verifier of one subscription's deliveries; rejects with invalid_secret, TypeError or RangeError. */
export function createVerifier (options: VerifierOptions): Promise<Verifier>
