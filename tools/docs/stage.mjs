// stage.mjs lays out the source folder of the documentation site (make docs).
//
//   node stage.mjs ROOT STAGE
//
// The site mirrors the repository: every Markdown file git knows (tracked,
// or untracked and not ignored) is copied to the same path under STAGE, so a
// relative link that works in the repository works in the site. README.md
// becomes index.md (the page of its folder), except at the top, where the
// generated home page is index.md. Files under docs/ that are not Markdown
// (images) are copied beside their pages. Relative links to other
// repository files (api/openapi.yaml, a migration) are checked and the
// files copied to STAGE/public at the same path, so the site serves them.
// A relative link to a file or folder that does not exist fails the stage
// with file:line, before VitePress checks the links between pages.
//
// Generated pages: reference/go/ (go doc -all of every package of
// services/server), reference/api.md with the Redocly reference of
// api/openapi.yaml (when the file exists), and the home page index.md,
// which links to every chapter that exists.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const [root, stage] = process.argv.slice(2).map((p) => path.resolve(p))
if (!root || !stage) {
  console.error('usage: node stage.mjs ROOT STAGE')
  process.exit(2)
}
const here = path.dirname(new URL(import.meta.url).pathname)
const posix = path.posix
const errors = []

function gitFiles() {
  const out = execFileSync('git', ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 1 << 28 })
  return [...new Set(out.split('\0'))].filter((f) => f && fs.existsSync(path.join(root, f)) && fs.statSync(path.join(root, f)).isFile())
}

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true })
  fs.copyFileSync(from, to)
}

// stagedPath maps a repository path of a Markdown file to its page path.
function stagedPath(rel) {
  if (posix.basename(rel) === 'README.md' && posix.dirname(rel) !== '.') {
    return posix.join(posix.dirname(rel), 'index.md')
  }
  return rel
}

// title returns the first level-one heading of a Markdown text.
function title(text, fallback) {
  const body = text.replace(/^---\n[\s\S]*?\n---\n/, '')
  const m = body.match(/^# +(.+?)\s*$/m)
  return m ? m[1].replace(/`/g, '') : fallback
}

// links yields [line, target] for the inline and reference links of a
// Markdown text, outside fenced code blocks and inline code.
function* links(text) {
  let fence = null
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const f = line.match(/^\s*(```+|~~~+)/)
    if (f) {
      if (!fence) fence = f[1]
      else if (line.trim().startsWith(fence)) fence = null
      continue
    }
    if (fence) continue
    const plain = line.replace(/`[^`]*`/g, '')
    for (const m of plain.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) yield [i + 1, m[1], m[0].startsWith('!')]
    const ref = plain.match(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/)
    if (ref) yield [i + 1, ref[1], false]
  }
}

const files = gitFiles().filter((f) => !f.split('/').includes('node_modules'))
fs.rmSync(stage, { recursive: true, force: true })
fs.mkdirSync(stage, { recursive: true })
const fileSet = new Set(files)
const dirSet = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('/'))))

// 1. Pages and the files they link to.
const pages = []
for (const f of files) {
  if (f.endsWith('.md')) {
    const text = fs.readFileSync(path.join(root, f), 'utf8')
    const to = stagedPath(f)
    copy(path.join(root, f), path.join(stage, to))
    pages.push({ src: f, page: to, title: title(text, posix.basename(f, '.md')) })
    for (const [line, href, image] of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) continue
      const target = posix.normalize(posix.join(posix.dirname(f), decodeURIComponent(href.replace(/[?#].*$/, ''))))
      if (target.startsWith('..')) {
        errors.push(`${f}:${line}: link ${href} leaves the repository`)
      } else if (fileSet.has(target)) {
        if (image) copy(path.join(root, target), path.join(stage, target))
        else if (!target.endsWith('.md')) copy(path.join(root, target), path.join(stage, 'public', target))
      } else if (dirSet.has(target) || target === '.') {
        if (!fileSet.has(posix.join(target, 'README.md')) && target !== '.') errors.push(`${f}:${line}: link ${href} names a folder without README.md`)
      } else {
        errors.push(`${f}:${line}: broken link ${href} (${target} does not exist)`)
      }
    }
  } else if (f.startsWith('docs/')) {
    copy(path.join(root, f), path.join(stage, f))
  }
}

// 2. Go package docs.
const server = path.join(root, 'services/server')
const goPages = []
if (fs.existsSync(path.join(server, 'go.mod'))) {
  const goEnv = { ...process.env, GOWORK: 'off' } // go doc would write go.work.sum beside go.work
  const list = execFileSync('go', ['list', '-f', '{{.ImportPath}}\t{{.Name}}\t{{.Doc}}', './...'], { cwd: server, encoding: 'utf8', env: goEnv })
  const modulePath = execFileSync('go', ['list', '-m'], { cwd: server, encoding: 'utf8', env: goEnv }).trim()
  for (const row of list.trim().split('\n').filter(Boolean)) {
    const [importPath, name, synopsis] = row.split('\t')
    const rel = importPath === modulePath ? 'root' : importPath.slice(modulePath.length + 1)
    const args = ['doc', '-all', ...(name === 'main' ? ['-cmd'] : []), importPath]
    const doc = execFileSync('go', args, { cwd: server, encoding: 'utf8', env: goEnv })
    const page = posix.join('reference/go', `${rel}.md`)
    const readme = posix.join('services/server', rel, 'README.md')
    const up = posix.relative(posix.dirname(page), '.')
    let md = `# ${rel}\n\n\`import "${importPath}"\`\n\n${synopsis || ''}\n\n`
    if (fileSet.has(readme)) md += `The package's [README](${posix.join(up, readme)}) says how to use and test it.\n\n`
    md += '````text\n' + doc.replace(/````/g, '```\u200b`') + '````\n'
    fs.mkdirSync(path.dirname(path.join(stage, page)), { recursive: true })
    fs.writeFileSync(path.join(stage, page), md)
    goPages.push({ rel, page, synopsis })
  }
  let idx = '# Go packages\n\nThe documentation of every package of `services/server`, generated with `go doc -all`.\n\n| package | synopsis |\n| --- | --- |\n'
  for (const p of goPages) idx += `| [${p.rel}](${posix.relative('reference/go', p.page)}) | ${(p.synopsis || '').replace(/\|/g, '\\|')} |\n`
  fs.writeFileSync(path.join(stage, 'reference/go/index.md'), idx)
}

// 3. The HTTP API reference from api/openapi.yaml.
const openapi = path.join(root, 'api/openapi.yaml')
const hasAPI = fs.existsSync(openapi)
if (hasAPI) {
  const out = path.join(stage, 'public/reference/http-api.html')
  fs.mkdirSync(path.dirname(out), { recursive: true })
  try {
    execFileSync(path.join(here, 'node_modules/.bin/redocly'), ['build-docs', openapi, '--inlineBundle', '--title', 'bothy HTTP API', '-o', out], { stdio: 'pipe', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } })
  } catch (e) {
    console.error(String(e.stderr || ''), String(e.stdout || ''))
    console.error('stage: redocly build-docs failed on api/openapi.yaml')
    process.exit(1)
  }
  copy(openapi, path.join(stage, 'public/api/openapi.yaml'))
  fs.writeFileSync(path.join(stage, 'reference/api.md'), `# HTTP API reference

The reference of every operation, schema and problem response, generated
with Redocly from the contract [api/openapi.yaml](../api/openapi.yaml).

<a href="/reference/http-api.html" target="_self">Open the HTTP API reference</a>
`)
}

// 4. The home page.
const groups = [
  ['Specification', (p) => p.src.startsWith('docs/spec/')],
  ['Guides', (p) => p.src.startsWith('docs/guides/')],
  ['API guides', (p) => p.src.startsWith('docs/api/')],
  ['Architecture decisions', (p) => p.src.startsWith('docs/adr/')],
  ['Operations, observability and security', (p) => /^docs\/(operations|observability|security)\//.test(p.src)],
  ['More documentation', (p) => p.src.startsWith('docs/')],
  ['Modules and packages', (p) => p.src.startsWith('services/')],
  ['Project', () => true],
]
let home = `---
title: bothy
---

# bothy documentation

bothy is a self-hosted chat server with an apps platform; its flagship is
outgoing webhooks after Standard Webhooks. This site is built from the
repository by \`make docs\`: every page mirrors a Markdown file of the
repository, plus the generated references.

## Reference

`
if (hasAPI) home += '- [HTTP API reference](reference/api.md), generated from `api/openapi.yaml`\n'
if (goPages.length) home += `- [Go packages](reference/go/index.md): ${goPages.length} packages of \`services/server\`, from \`go doc\`\n`
const done = new Set()
for (const [name, match] of groups) {
  const inGroup = pages.filter((p) => !done.has(p) && p.page !== 'index.md' && match(p)).sort((a, b) => a.page.localeCompare(b.page))
  if (!inGroup.length) continue
  home += `\n## ${name}\n\n`
  for (const p of inGroup) {
    done.add(p)
    home += `- [${p.title.replace(/[[\]]/g, '')}](${p.page}) \`${p.src}\`\n`
  }
}
fs.writeFileSync(path.join(stage, 'index.md'), home)

// 5. The sidebar, read by .vitepress/config.mts.
const sidebar = [{ text: 'Reference', items: [...(hasAPI ? [{ text: 'HTTP API', link: '/reference/api' }] : []), ...(goPages.length ? [{ text: 'Go packages', link: '/reference/go/' }] : [])] }]
const seen = new Set()
for (const [name, match] of groups) {
  const items = pages.filter((p) => !seen.has(p) && p.page !== 'index.md' && match(p)).sort((a, b) => a.page.localeCompare(b.page))
  items.forEach((p) => seen.add(p))
  if (items.length) sidebar.push({ text: name, collapsed: true, items: items.map((p) => ({ text: p.title, link: '/' + p.page.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '') })) })
}
fs.writeFileSync(path.join(stage, '.sidebar.json'), JSON.stringify(sidebar, null, 1))

if (errors.length) {
  for (const e of errors) console.error(e)
  console.error(`stage: ${errors.length} broken link(s)`)
  process.exit(1)
}
console.log(`stage: ${pages.length} pages, ${goPages.length} Go packages, API reference: ${hasAPI ? 'yes' : 'no api/openapi.yaml yet'}`)
