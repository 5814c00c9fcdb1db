// check.mjs: reads HAR exports of mockserver's journal with third-party
// tools, as their users do.
//
//   node check.mjs ALL.har SANDBOX.har SANDBOX_ID [SANDBOX_URL]
//
// 1. Ajv validates each against the HAR 1.2 JSON Schema of har-schema (the
//    schemas har-validator validates with; har-validator itself is no
//    longer kept, Ajv is). The schemas are of draft-06 and use two
//    keywords of their own (`optional`, `min`): Ajv is told so, nothing
//    else is changed.
// 2. What the export must hold: the sandbox's export holds its exchanges
//    only (a creation, a long poll, an answer a fault cut, an upload),
//    with the mock's annotations; the server's holds them and more.
// 3. With SANDBOX_URL (the server is gone by then), Playwright's
//    routeFromHAR replays the sandbox's export in Chromium (CHROMIUM_PATH,
//    else /usr/bin/chromium): a page reads the long poll's address and
//    posts the creation again, and gets the recorded answers.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'

const [allPath, sandboxPath, sandboxID, replayURL] = process.argv.slice(2)
if (!allPath || !sandboxPath || !sandboxID) {
  console.error('usage: node check.mjs ALL.har SANDBOX.har SANDBOX_ID [SANDBOX_URL]')
  process.exit(2)
}
const require = createRequire(import.meta.url)
const schemas = require('har-schema')
const problems = []

const ajv = new Ajv({ allErrors: true, strict: false })
ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'))
addFormats(ajv)
for (const s of Object.values(schemas)) ajv.addSchema(s)
const validate = ajv.getSchema('har.json#')
if (!validate) throw new Error('har-schema has no har.json')

const read = async (path) => {
  const har = JSON.parse(await readFile(path, 'utf8'))
  if (!validate(har)) {
    for (const e of validate.errors) problems.push(`${path}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
  }
  return har
}
const all = await read(allPath)
const sandbox = await read(sandboxPath)

const entries = sandbox.log.entries
if (sandbox.log._scope !== `sandbox ${sandboxID}`) problems.push(`${sandboxPath}: _scope ${sandbox.log._scope}`)
for (const e of entries) {
  if (e._sandboxId !== sandboxID) problems.push(`${sandboxPath}: entry ${e._id} is of ${e._sandboxId || 'no sandbox'}, not ${sandboxID}`)
}
const find = (what, f) => {
  const e = entries.find(f)
  if (!e) problems.push(`${sandboxPath}: no ${what}`)
  return e
}
const create = find('creation', (e) => e._operation === 'createGeneration' && e.response.status === 201)
const poll = find('long poll', (e) => e._operation === 'getGeneration' && e.request.queryString.some((q) => q.name === 'wait_seconds'))
const cut = find('answer a fault cut', (e) => e._answerCut && e.response._answerCut && e._fault)
const upload = find('upload', (e) => e._operation === 'createUpload' && e.request.postData?._encoding === 'base64')
if (create && !create.request.postData?.text.includes('"prompt"')) problems.push('the creation has no body')
if (poll && !poll.response.content.text.includes('"status":"completed"')) problems.push('the long poll did not end completed')
const ids = new Set(entries.map((e) => e._id))
const others = all.log.entries.filter((e) => !ids.has(e._id))
if (all.log.entries.length <= entries.length || others.some((e) => e._sandboxId === sandboxID)) {
  problems.push(`${allPath}: ${all.log.entries.length} entries, the sandbox's ${entries.length}: the server's export should hold more`)
}

if (replayURL && create && poll) {
  const { chromium } = require('playwright-core')
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox'] })
  try {
    const context = await browser.newContext()
    await context.routeFromHAR(sandboxPath, { url: `${replayURL}/**`, notFound: 'abort' })
    const page = await context.newPage()
    const res = await page.goto(poll.request.url)
    const body = await res.text()
    if (res.status() !== 200 || body !== poll.response.content.text) {
      problems.push(`replay: GET ${poll.request.url}: ${res.status()} ${body.slice(0, 200)}`)
    }
    const again = await page.evaluate(async ([url, headers, body]) => {
      const r = await fetch(url, { method: 'POST', headers, body })
      return { status: r.status, text: await r.text() }
    }, [create.request.url, { 'Content-Type': create.request.postData.mimeType }, create.request.postData.text])
    if (again.status !== 201 || again.text !== create.response.content.text) {
      problems.push(`replay: POST ${create.request.url}: ${again.status} ${again.text.slice(0, 200)}`)
    }
    console.log(`har-check: Playwright ${require('playwright-core/package.json').version} replayed the export in ${browser.version()}`)
  } finally {
    await browser.close()
  }
}

if (problems.length) {
  console.error(problems.join('\n'))
  process.exit(1)
}
console.log(`har-check: ${allPath} (${all.log.entries.length} entries) and ${sandboxPath} (${entries.length}) are valid HAR 1.2`)
