// VitePress configuration of the bothy documentation site (make docs).
// tools/docs/build.sh stages the pages (stage.mjs) into BOTHY_DOCS_STAGE and
// builds them into BOTHY_DOCS_OUT; links between pages that do not resolve
// fail the build (VitePress's dead-link check, never switched off here).
import fs from 'node:fs'
import path from 'node:path'
import { defineConfig } from 'vitepress'

const stage = process.env.BOTHY_DOCS_STAGE
const out = process.env.BOTHY_DOCS_OUT
if (!stage || !out) throw new Error('run tools/docs/build.sh (make docs): BOTHY_DOCS_STAGE and BOTHY_DOCS_OUT are not set')

// repoLinks keeps links that work in the repository working in the site:
// a link to a README.md points to the index.md it became, and a link to a
// folder gets its trailing slash, so VitePress resolves it to the folder's
// page (and its dead-link check still sees it).
function repoLinks(md: any) {
  md.core.ruler.after('inline', 'bothy-repo-links', (state: any) => {
    const page: string = state.env.relativePath || ''
    for (const tok of state.tokens) {
      for (const c of tok.children || []) {
        if (c.type !== 'link_open') continue
        const href: string = c.attrGet('href') || ''
        if (!href || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) continue
        const m = href.match(/^([^?#]*)(.*)$/)!
        let p = m[1]
        if (!p) continue
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(p)))
        const staged = path.join(stage!, target)
        if (path.posix.basename(target) === 'README.md' && !fs.existsSync(staged) && fs.existsSync(path.join(path.dirname(staged), 'index.md'))) {
          p = p.slice(0, -'README.md'.length) + 'index.md'
        } else if (!p.endsWith('/') && fs.existsSync(staged) && fs.statSync(staged).isDirectory()) {
          p += '/'
        }
        c.attrSet('href', p + m[2])
      }
    }
  })
}

export default defineConfig({
  srcDir: stage,
  outDir: out,
  cacheDir: path.join(stage, '.vitepress-cache'),
  title: 'bothy',
  description: 'Self-hosted chat server with outgoing webhooks after Standard Webhooks',
  lang: 'en',
  cleanUrls: false,
  ignoreDeadLinks: false,
  // The generated Go and API pages make large chunks; that is expected.
  vite: { build: { chunkSizeWarningLimit: 4096 } },
  markdown: {
    // Pages render as in the repository: {...} is text (MADR placeholders),
    // not markdown-it-attrs attributes.
    attrs: { disable: true },
    config: (md) => md.use(repoLinks),
  },
  themeConfig: {
    nav: [
      { text: 'Home', link: '/' },
      { text: 'Go packages', link: '/reference/go/' },
    ],
    sidebar: JSON.parse(fs.readFileSync(path.join(stage, '.sidebar.json'), 'utf8')),
    search: { provider: 'local' },
    outline: [2, 3],
  },
})
