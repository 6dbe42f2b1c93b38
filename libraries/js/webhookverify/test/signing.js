// Signing for the tests, with node:crypto: an independent implementation
// of what the server does (docs/api/webhooks.md 2), so the library's Web
// Crypto code is checked against another one.
import crypto from 'node:crypto'

// signer returns an Ed25519 key made from a seed of one repeated byte,
// with its public key in the whpk_ form of getWebhookKeys.
export async function signer (byte) {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, byte)])
  const privateKey = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
  const spki = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' })
  return { privateKey, publicKey: 'whpk_' + spki.toString('base64') }
}

// signDelivery returns the headers of a delivery of body at nowSeconds,
// signed by every signer (v1a) and every whsec_ secret (v1).
export async function signDelivery (nowSeconds, body, signers, secrets = []) {
  const id = '019ad4a0-7c00-7000-8000-000000000001'
  const content = Buffer.from(`${id}.${nowSeconds}.${body}`)
  const entries = signers.map((s) => 'v1a,' + crypto.sign(null, content, s.privateKey).toString('base64'))
  for (const secret of secrets) {
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
    entries.push('v1,' + crypto.createHmac('sha256', key).update(content).digest('base64'))
  }
  return { 'webhook-id': id, 'webhook-timestamp': String(nowSeconds), 'webhook-signature': entries.join(' ') }
}
