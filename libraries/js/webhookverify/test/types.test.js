// index.d.ts declares exactly what index.js exports, so TypeScript users
// see every export and nothing that is not there.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'

test('index.d.ts declares every runtime export and no other', async () => {
  const runtime = Object.keys(await import('../index.js')).sort()
  const dts = await readFile(new URL('../index.d.ts', import.meta.url), 'utf8')
  const declared = [...dts.matchAll(/^export (?:const|function|class) (\w+)/gm)].map((m) => m[1])
  assert.deepEqual([...new Set(declared)].sort(), runtime)
})
