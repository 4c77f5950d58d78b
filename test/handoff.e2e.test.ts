/**
 * The drafting loop, end to end, once per hand-off format: capture an HTML page, a Markdown file
 * and a PDF from a 127.0.0.1 server; hand the drafting model the documents (`run-pipeline sources
 * --format …`, `GET /v1/runs/{id}/documents?format=…`); a scripted drafter copies sentences (and
 * their pages and heading paths, where the hand-off gives them) from exactly that output and
 * writes an answer in that provider's format; `verify-answer` (and `POST /v1/verify/answer`) finds
 * it grounded, every citation verified.
 *
 * Bedrock: Converse answers are not yet an answer format citegate reads, so for Bedrock the
 * documents' shape is checked and their texts are compared with the capture records' texts.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as HttpServer from "@effect/platform/HttpServer"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Config from "../src/Config.js"
import type { SourceUrl } from "../src/Domain.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import { cli } from "./cliProcess.js"
import { type AnthropicOutput, type DocumentsOutput, draftAnswerJson, draftAnthropic, draftEvi1, readEvi1Prompt } from "./handoffDrafter.js"
import { makePdf } from "./pdfWriter.js"

const html = `<!doctype html>
<html><head><title>Northwind Q3</title></head><body>
<h1>Northwind Q3 2026</h1>
<h2>Sales</h2>
<p>Net sales reached 4,210 units in the third quarter.</p>
<h2>Returns</h2>
<p>Returns fell to two percent of orders &amp; stayed there.</p>
</body></html>
`
const markdown = `# Field guide

## Returns

Returns are accepted within thirty days of delivery.

## Shipping

Standard shipping takes five business days, "tracked" end to end.
`
const pdf = makePdf([["Annual report 2026 for the board."], ["Revenue rose twelve percent in 2026."]])

const token = "citegate-handoff-token-0123456789abcdef"

interface Setup {
  work: string
  configFile: string
  runDir: string
  sources: ReadonlyArray<SourceUrl>
  sourceServer: http.Server
  base: string
  serviceRun: string
  closeService: () => Promise<void>
}
let setup: Setup

const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
const ok = (ran: { code: number | null; stdout: string; stderr: string }, what: string) => {
  assert.strictEqual(ran.code, 0, `${what}: ${ran.stderr}`)
  return ran.stdout
}

const fetchJson = async (pathAndQuery: string, init: { body?: string } = {}) => {
  const response = await fetch(setup.base + pathAndQuery, {
    method: init.body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}` },
    ...(init.body === undefined ? {} : { body: init.body })
  })
  return { status: response.status, json: await response.json() as any }
}

beforeAll(async () => {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-handoff-"))
  const sourceServer = http.createServer((req, res) => {
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { "content-type": type })
      res.end(body)
    }
    if (req.url === "/q3.html") return send("text/html; charset=utf-8", html)
    if (req.url === "/guide.md") return send("text/markdown; charset=utf-8", markdown)
    if (req.url === "/annual.pdf") return send("application/pdf", pdf)
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => sourceServer.listen(0, "127.0.0.1", resolve))
  const port = (sourceServer.address() as { port: number }).port
  const sources = ["/q3.html", "/guide.md", "/annual.pdf"].map((p) => `http://127.0.0.1:${port}${p}` as SourceUrl)
  const configJson = {
    sources,
    labels: ["unused"],
    capture: { timeoutMs: 20_000, contentTypes: ["text/html", "text/markdown", "application/pdf"] },
    server: { tokens: [{ sha256: tokenDigest(token), runs: "*", capture: true, name: "drafter" }] }
  }
  const configFile = path.join(work, "pipeline.json")
  await fsp.writeFile(configFile, JSON.stringify(configJson, null, 2))
  const runDir = path.join(work, "run")
  const captured = await run(cli(["capture", "--config", configFile, "--run-dir", runDir, "--allow-loopback-http"]))
  assert.strictEqual(captured.code, 0, captured.stderr)

  // The service, on its own run root; its run captures the same sources.
  const config = await run(Effect.orDie(Config.decode(configJson)))
  const scope = await run(Scope.make())
  const context = await run(Effect.orDie(Layer.buildWithScope(
    Server.layer({ config, configFile, runRoot: path.join(work, "runs"), allowLoopbackHttp: true, host: "127.0.0.1", port: 0 }).pipe(
      // The request log lines are not what this test reads.
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    ),
    scope
  )))
  const address = (await run(Effect.provide(HttpServer.HttpServer, context))).address
  const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
  setup = { work, configFile, runDir, sources, sourceServer, base, serviceRun: "", closeService: () => run(Scope.close(scope, Exit.void)) }
  const started = await fetchJson("/v1/runs", { body: "" })
  assert.strictEqual(started.status, 202)
  setup.serviceRun = started.json.id
  for (let i = 0; i < 200; i++) {
    const info = await fetchJson(`/v1/runs/${setup.serviceRun}`)
    if (info.json.status === "completed") break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}, 120_000)

afterAll(async () => {
  await setup?.closeService()
  await new Promise((resolve) => setup?.sourceServer.close(resolve))
  if (setup !== undefined) await fsp.rm(setup.work, { recursive: true, force: true })
})

/** `sources --format <format>` on the CLI's run. */
const cliHandOff = (format: string) =>
  run(cli(["sources", "--config", setup.configFile, "--run-dir", setup.runDir, "--format", format])).then((r) => ok(r, `sources --format ${format}`))

/** `verify-answer` on the CLI's run: the JSON rendering. */
const cliVerify = async (answer: string, formatIn: string, extra: ReadonlyArray<string> = []) => {
  const file = path.join(setup.work, `answer-${formatIn}-${Math.random().toString(36).slice(2)}`)
  await fsp.writeFile(file, answer)
  const ran = await run(cli([
    "verify-answer", "--answer", file, "--format-in", formatIn, "--config", setup.configFile, "--run-dir", setup.runDir, "--format", "json", ...extra
  ]))
  assert.strictEqual(ran.code, 0, `verify-answer ${formatIn}: ${ran.stdout}\n${ran.stderr}`)
  return JSON.parse(ran.stdout)
}

/** Every claim grounded, every citation verified (none removed, none retracted). */
const assertAllVerified = (result: any, claims: number) => {
  assert.strictEqual(result.status, "verified", JSON.stringify(result.error ?? {}).slice(0, 2000))
  const answer = result.answer
  assert.strictEqual(answer.outcome, "grounded")
  assert.deepStrictEqual(answer.removed, [])
  assert.strictEqual(answer.summary.claims, claims)
  assert.strictEqual(answer.summary.claimsGrounded, claims)
  assert.strictEqual(answer.summary.citationsVerified, answer.summary.citations)
  return answer
}

/** The texts of the capture records, as citegate stores them (read through the store). */
const recordTexts = (directory: string) =>
  run(Effect.forEach(setup.sources, (source) => Effect.flatMap(CaptureStore.CaptureStore, (store) => store.read(source))).pipe(
    Effect.map((records) => records.map((r) => r.text)),
    Effect.provide(CaptureStore.layerFileSystem({ directory })),
    Effect.orDie
  ))

const serviceRunDirectory = () => path.join(setup.work, "runs", setup.serviceRun)

describe("the hand-off loop, end to end", () => {
  it.live("citegate.answer/1 from citegate.documents/1: sentences with their pages and heading paths verify (CLI and service)", () =>
    Effect.promise(async () => {
      const handOff: DocumentsOutput = JSON.parse(await cliHandOff("documents"))
      assert.strictEqual(handOff.format, "citegate.documents/1")
      assert.deepStrictEqual(handOff.documents.map((d) => d.text), await recordTexts(setup.runDir))
      const answer = draftAnswerJson(handOff)
      // The drafter named pages for the PDF and heading paths for the HTML and Markdown sentences.
      const cites = answer.claims.map((c) => c.citations[0]!) as Array<any>
      assert.deepStrictEqual(cites.filter((c) => c.source === 3).map((c) => c.page), [{ start: 1, end: 2 }, { start: 2, end: 3 }])
      assert.deepStrictEqual(cites.filter((c) => c.source === 1).map((c) => c.heading), [["Northwind Q3 2026", "Sales"], ["Northwind Q3 2026", "Returns"]])
      assert.deepStrictEqual(cites.filter((c) => c.source === 2).map((c) => c.heading), [["Field guide", "Returns"], ["Field guide", "Shipping"]])
      const verified = assertAllVerified(await cliVerify(JSON.stringify(answer), "json"), 6)
      assert.deepStrictEqual(verified.claims.filter((c: any) => c.citations[0].citation.source === setup.sources[2]).map((c: any) => c.citations[0].evidence.page), [1, 2])

      const served = await fetchJson(`/v1/runs/${setup.serviceRun}/documents?format=documents`)
      assert.strictEqual(served.status, 200)
      assert.deepStrictEqual(served.json.documents.map((d: any) => d.text), await recordTexts(serviceRunDirectory()))
      const servedAnswer = draftAnswerJson(served.json)
      // manifestDigest: the documented alias of manifest.
      const result = await fetchJson(`/v1/verify/answer?run=${setup.serviceRun}&format=json&manifestDigest=${served.json.manifest}`, {
        body: JSON.stringify(servedAnswer)
      })
      assert.strictEqual(result.status, 200)
      assertAllVerified(result.json, 6)
    }))

  it.live("Anthropic: a Messages response citing the document blocks with char_location verifies (CLI and service)", () =>
    Effect.promise(async () => {
      const handOff: AnthropicOutput = JSON.parse(await cliHandOff("anthropic"))
      assert.strictEqual(handOff.format, "citegate.anthropic-documents/1")
      assert.deepStrictEqual(handOff.documents.map((d) => [d.type, d.source.type, d.source.media_type, d.citations.enabled, d.title]), [
        ["document", "text", "text/plain", true, `[1] ${setup.sources[0]}`],
        ["document", "text", "text/plain", true, `[2] ${setup.sources[1]}`],
        ["document", "text", "text/plain", true, `[3] ${setup.sources[2]}`]
      ])
      assert.deepStrictEqual(handOff.documents.map((d) => d.source.data), await recordTexts(setup.runDir))
      const response = draftAnthropic(handOff)
      const verified = assertAllVerified(await cliVerify(JSON.stringify(response), "anthropic", ["--manifest-digest", handOff.manifest]), 6)
      // The model's preamble is uncited prose, reported (not a citation).
      assert.strictEqual(verified.uncited.length, 1)

      const served = await fetchJson(`/v1/runs/${setup.serviceRun}/documents?format=anthropic`)
      assert.strictEqual(served.status, 200)
      const result = await fetchJson(`/v1/verify/answer?run=${setup.serviceRun}&format=anthropic&manifest=${served.json.manifest}`, {
        body: JSON.stringify(draftAnthropic(served.json))
      })
      assertAllVerified(result.json, 6)
    }))

  it.live("EVI1: an answer copying quotes out of the prompt's fences verifies (CLI and service)", () =>
    Effect.promise(async () => {
      const prompt = await cliHandOff("evi1")
      const { documents, manifest } = readEvi1Prompt(prompt)
      assert.match(prompt, /## How to cite \(EVI1\)/)
      assert.deepStrictEqual(documents.map((d) => d.number), [1, 2, 3])
      assert.deepStrictEqual(documents.map((d) => d.text), await recordTexts(setup.runDir))
      const answer = draftEvi1(prompt)
      assert.include(answer, `MANIFEST ${manifest}`)
      assert.include(answer, '\\"tracked\\"') // a quote with double quotes, escaped as EVI1 requires
      assertAllVerified(await cliVerify(answer, "evi1"), 6)

      const served = await fetchJson(`/v1/runs/${setup.serviceRun}/documents?format=evi1`)
      assert.strictEqual(served.status, 200)
      assert.strictEqual(served.json.format, "citegate.evi1-prompt/1")
      const result = await fetchJson(`/v1/verify/answer?run=${setup.serviceRun}&format=evi1`, { body: draftEvi1(served.json.prompt) })
      assertAllVerified(result.json, 6)
    }))

  it.live("Bedrock: Converse document blocks, citations enabled, whose texts are the capture texts (CLI and service)", () =>
    Effect.promise(async () => {
      const handOff = JSON.parse(await cliHandOff("bedrock"))
      assert.strictEqual(handOff.format, "citegate.bedrock-documents/1")
      assert.match(handOff.manifest, /^[0-9a-f]{64}$/)
      const texts = await recordTexts(setup.runDir)
      assert.deepStrictEqual(handOff.documents, texts.map((text, i) => ({
        document: { format: "txt", name: `Source ${i + 1}`, source: { text }, citations: { enabled: true } }
      })))
      // The manifest digest is the run's (what an answer must be bound to).
      const manifest = JSON.parse(await cliHandOff("json"))
      assert.strictEqual(handOff.manifest, manifest.digest)

      const served = await fetchJson(`/v1/runs/${setup.serviceRun}/documents?format=bedrock`)
      assert.strictEqual(served.status, 200)
      assert.deepStrictEqual(served.json.documents.map((d: any) => d.document.source.text), await recordTexts(serviceRunDirectory()))
      assert.strictEqual(served.json.manifest, (await fetchJson(`/v1/runs/${setup.serviceRun}`)).json.manifest.digest)
    }))
})
