// verify_deliveries.mjs verifies deliveries a running bothy server made
// with the JavaScript library (libraries/js/webhookverify):
//
//   node verify_deliveries.mjs LIBRARY INPUT
//
// LIBRARY is the library's index.js; INPUT a JSON file written by
// TestLibrariesVerifyARealDelivery: { keys_base, deliveries: [{ name,
// headers, body_base64, secret? }] }, the requests as the receiver got them
// and the address of the process's API. For each delivery it verifies the
// raw body with a KeySource on keys_base (a real fetch of getWebhookKeys)
// and, with a secret, also v1 alone (static keys of no instance plus the
// secret); then it verifies the body changed by one byte, which must fail.
// The last line is a JSON array of results; it never prints a secret,
// key or signature. Any unexpected error exits with status 1.
import { readFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'

const [library, input] = process.argv.slice(2)
const { createVerifier, KeySource, staticKeys } = await import(pathToFileURL(library).href)
const { keys_base: keysBase, deliveries } = JSON.parse(await readFile(input, 'utf8'))

// The public key of the Ed25519 seed of 32 bytes 0x5a (as in the Go test):
// a key of no instance, so only the secret can verify.
const unrelated = 'whpk_MCowBQYDK2VwAyEADXVQdU4IAKXSN+71gmA1dmubPloVhoqUCrKJlYeI47A='

const keys = new KeySource(keysBase)
const results = []
for (const d of deliveries) {
  const body = Buffer.from(d.body_base64, 'base64')
  const verifier = await createVerifier({ keys, secret: d.secret })
  const delivery = await verifier.verify(d.headers, body)
  const result = { name: d.name, scheme: delivery.scheme, key_id: delivery.keyId, webhook_id: delivery.id }
  if (d.secret) {
    const v1 = await createVerifier({ keys: await staticKeys([unrelated]), secret: d.secret })
    result.v1_scheme = (await v1.verify(d.headers, body)).scheme
  }
  const changed = Buffer.from(body)
  changed[changed.length >> 1] ^= 0x01
  result.tampered = await verifier.verify(d.headers, changed).then(() => 'accepted', (err) => err.code)
  results.push(result)
}
console.log(JSON.stringify(results))
