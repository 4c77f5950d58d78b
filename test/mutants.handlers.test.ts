/**
 * The typed endpoints' handlers at their edges, over loopback: the exact SSE framing and headers
 * of run events, every form of Last-Event-ID, a stored run without a readable manifest, who may
 * read which run (listed, owned, neither; existing or not), the verification mode and answer
 * format taken from the query or the configuration, and the JSON content type of every verdict.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { call, report, salesDigest, salesText, type Service, sources, startService, tokens, waitForRun } from "./serverSupport.js"

/** A service whose one run (started by the admin token) holds the sales capture. */
const withRun = (options: { readerRuns?: ReadonlyArray<string>; verify?: object; answers?: object } = {}) =>
  Effect.gen(function*() {
    const { server: source } = yield* sources
    const sales = source.url("/q3-sales.txt")
    const service = yield* startService({ sources: [sales], ...(options.readerRuns ? { readerRuns: options.readerRuns } : {}) })
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
    assert.strictEqual(started.status, 202, started.text)
    assert.deepStrictEqual(Object.keys(started.json).sort(), ["id", "status"])
    const runId: string = started.json.id
    yield* waitForRun(service, runId)
    return { service, sales, runId }
  })

const events = (service: Service, runId: string, headers: Record<string, string> = {}, token: string = tokens.admin) =>
  call(service, `/v1/runs/${runId}/events`, { token, headers })

/** The SSE body rebuilt frame by frame from the parsed frames, written here independently of the server. */
const frames = (body: string) => {
  const parsed: Array<{ id: number; event: string; data: any }> = []
  const pattern = /id: (\d+)\nevent: ([a-z]+)\ndata: ([^\n]*)\n\n/gy
  let match: RegExpExecArray | null
  let consumed = 0
  while ((match = pattern.exec(body)) !== null) {
    parsed.push({ id: Number(match[1]), event: match[2]!, data: JSON.parse(match[3]!) })
    consumed = pattern.lastIndex
  }
  assert.strictEqual(consumed, body.length, `unparsed SSE text: ${JSON.stringify(body.slice(consumed))}`)
  return parsed
}

describe("GET /v1/runs/{id}/events", () => {
  it.scopedLive("frames are `id`, `event` (the tag), `data` (the JSON event), a blank line; no-store, unbuffered, text/event-stream", () =>
    Effect.gen(function*() {
      const { runId, sales, service } = yield* withRun()
      const all = yield* events(service, runId)
      assert.strictEqual(all.status, 200)
      assert.strictEqual(all.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(all.headers.get("cache-control"), "no-store")
      assert.strictEqual(all.headers.get("x-accel-buffering"), "no")
      const parsed = frames(all.text)
      assert.deepStrictEqual(parsed.map((f) => [f.id, f.event]), [[1, "started"], [2, "captured"], [3, "done"]])
      for (const f of parsed) {
        assert.strictEqual(f.data.id, f.id)
        assert.strictEqual(f.data._tag, f.event)
      }
      assert.deepStrictEqual(parsed[0]!.data, { _tag: "started", id: 1, runId, sources: 1 })
      const captured = parsed[1]!.data
      assert.deepStrictEqual(
        { ...captured, accessedAt: typeof captured.accessedAt },
        { _tag: "captured", id: 2, number: 1, source: sales, captureSha256: salesDigest, byteLength: Buffer.byteLength(salesText), accessedAt: "string" }
      )
      assert.deepStrictEqual(parsed[2]!.data, { _tag: "done", id: 3, status: "completed", captured: 1, failed: 0 })
      const expected = parsed.map((f) => `id: ${f.id}\nevent: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`).join("")
      assert.strictEqual(all.text, expected)
    }))

  it.scopedLive("Last-Event-ID: 1 to 9 decimal digits resume after that id; anything else starts from the beginning", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun()
      const ids = (text: string) => frames(text).map((f) => f.id)
      const cases: Array<[string, Array<number>]> = [
        ["0", [1, 2, 3]],
        ["1", [2, 3]],
        ["2", [3]],
        ["02", [3]],
        ["000000002", [3]],
        ["3", []],
        ["999999999", []],
        // Ten digits, a sign, a space, a fraction, hex, a letter: not an id.
        ["0000000002", [1, 2, 3]],
        ["-1", [1, 2, 3]],
        ["+2", [1, 2, 3]],
        ["x2", [1, 2, 3]],
        ["2.0", [1, 2, 3]],
        ["0x2", [1, 2, 3]],
        ["abc", [1, 2, 3]],
        ["", [1, 2, 3]]
      ]
      for (const [value, expected] of cases) {
        const response = yield* events(service, runId, { "last-event-id": value })
        assert.strictEqual(response.status, 200, value)
        assert.deepStrictEqual(ids(response.text), expected, JSON.stringify(value))
      }
      assert.deepStrictEqual(ids((yield* events(service, runId)).text), [1, 2, 3])
    }))

  it.scopedLive("a stored run (a directory the service did not start): its sources from the manifest, then done (stored)", () =>
    Effect.gen(function*() {
      const { sales, service } = yield* withRun()
      yield* Effect.promise(() => fsp.mkdir(path.join(service.runRoot, "stored-run")))
      const stream = yield* events(service, "stored-run")
      assert.strictEqual(stream.status, 200, stream.text)
      assert.deepStrictEqual(frames(stream.text), [
        { id: 1, event: "missing", data: { _tag: "missing", id: 1, number: 1, source: sales, reason: { _tag: "MissingCapture", source: sales } } },
        { id: 2, event: "done", data: { _tag: "done", id: 2, status: "stored", captured: 0, failed: 1 } }
      ])
      const resumed = yield* events(service, "stored-run", { "last-event-id": "1" })
      assert.deepStrictEqual(frames(resumed.text).map((f) => f.id), [2])
      const info = yield* call(service, "/v1/runs/stored-run", { token: tokens.admin })
      assert.strictEqual(info.status, 200, info.text)
      assert.deepStrictEqual([info.json.id, info.json.status, info.json.manifest.sources[0].status], ["stored-run", "stored", "missing"])
    }))
})

describe("who may read a run", () => {
  it.scopedLive("listed but absent is 404; neither listed nor owned is 403 whether it exists or not; owned or listed is 200", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun({ readerRuns: ["listed-but-absent"] })
      const absent = yield* call(service, "/v1/runs/listed-but-absent", { token: tokens.reader })
      assert.strictEqual(absent.status, 404, absent.text)
      assert.deepStrictEqual(absent.json, { _tag: "RunNotFound", runId: "listed-but-absent" })
      const absentEvents = yield* events(service, "listed-but-absent", {}, tokens.reader)
      assert.strictEqual(absentEvents.status, 404)
      assert.deepStrictEqual(absentEvents.json, { _tag: "RunNotFound", runId: "listed-but-absent" })
      // The admin's run: the capture token (no runs listed) neither lists nor started it.
      for (const id of [runId, "20260101T000000Z-000000000000"]) {
        const refused = yield* call(service, `/v1/runs/${id}`, { token: tokens.capture })
        assert.strictEqual(refused.status, 403, refused.text)
        assert.deepStrictEqual(refused.json, { _tag: "Forbidden", action: "read-run", runId: id })
      }
      // An admin asking for an unknown run learns it does not exist.
      const unknown = yield* call(service, "/v1/runs/20260101T000000Z-000000000000", { token: tokens.admin })
      assert.strictEqual(unknown.status, 404)
      assert.deepStrictEqual(unknown.json, { _tag: "RunNotFound", runId: "20260101T000000Z-000000000000" })
      // The capture token's own run.
      const own = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      yield* waitForRun(service, own.json.id, tokens.capture)
      const info = yield* call(service, `/v1/runs/${own.json.id}`, { token: tokens.capture })
      assert.strictEqual(info.status, 200, info.text)
      assert.deepStrictEqual([info.json.id, info.json.status, info.json.manifest.sources[0].captureSha256], [own.json.id, "completed", salesDigest])
      assert.deepStrictEqual(Object.keys(info.json).sort(), ["id", "manifest", "status"])
      // The same run verified by the reader (neither listed nor owned): 403.
      const verify = yield* call(service, `/v1/verify/answer?run=${own.json.id}`, { token: tokens.reader, body: "{}" })
      assert.strictEqual(verify.status, 403)
      assert.deepStrictEqual(verify.json, { _tag: "Forbidden", action: "read-run", runId: own.json.id })
    }))
})

const absent = "Net sales were 9,999 units"
const present = "Net sales for Q3 2026 were 4,210 units"

describe("POST /v1/verify/report", () => {
  it.scopedLive("the mode: reject by default (the configuration names none), drop or reject from the query; JSON either way", () =>
    Effect.gen(function*() {
      const { runId, sales, service } = yield* withRun()
      const verdict = (query: string, snippets: ReadonlyArray<string>) =>
        Effect.map(call(service, `/v1/verify/report?run=${runId}${query}`, { token: tokens.admin, body: report(sales, snippets) }), (r) => {
          assert.strictEqual(r.status, 200, r.text)
          assert.strictEqual(r.headers.get("content-type"), "application/json")
          return r.json
        })
      const byDefault = yield* verdict("", [absent])
      assert.strictEqual(byDefault.status, "rejected")
      assert.strictEqual(byDefault.error._tag, "ReportRejected")
      assert.deepStrictEqual(byDefault.error.failures.map((f: any) => f.error._tag), ["SnippetAbsent"])
      const rejected = yield* verdict("&mode=reject", [absent])
      assert.deepStrictEqual(rejected, byDefault)
      const dropped = yield* verdict("&mode=drop", [absent])
      assert.strictEqual(dropped.status, "verified")
      assert.strictEqual(dropped.report.outcome, "no_evidence")
      const grounded = yield* verdict("", [present])
      assert.strictEqual(grounded.status, "verified")
      assert.strictEqual(grounded.report.outcome, "grounded")
    }))
})

describe("POST /v1/verify/answer", () => {
  it.scopedLive("formats json (the default), evi1 and anthropic, each read by its own decoder; mode from the query", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun()
      const info = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
      const digest: string = info.json.manifest.digest
      const post = (query: string, body: string) =>
        Effect.map(call(service, `/v1/verify/answer?run=${runId}${query}`, { token: tokens.admin, body }), (r) => {
          assert.strictEqual(r.status, 200, r.text)
          assert.strictEqual(r.headers.get("content-type"), "application/json")
          return r.json
        })
      const answer = (quotes: ReadonlyArray<string>) =>
        JSON.stringify({
          format: "citegate.answer/1",
          manifest: digest,
          claims: quotes.map((quote, i) => ({ id: `c${i}`, text: `Claim ${i} about net sales.`, citations: [{ source: 1, quote }] }))
        })
      const json = yield* post("", answer(["4,210 units"]))
      assert.strictEqual(json.status, "verified", JSON.stringify(json))
      assert.strictEqual(json.answer.outcome, "grounded")
      assert.deepStrictEqual(yield* post("&format=json", answer(["4,210 units"])), json)
      // Reject is the configuration's default; drop from the query retracts instead.
      const mixed = answer(["4,210 units", "tripled overnight"])
      const rejected = yield* post("", mixed)
      assert.strictEqual(rejected.status, "rejected")
      assert.strictEqual(rejected.error._tag, "AnswerRejected")
      assert.deepStrictEqual(yield* post("&mode=reject", mixed), rejected)
      const dropped = yield* post("&mode=drop", mixed)
      assert.strictEqual(dropped.status, "verified")
      assert.deepStrictEqual(dropped.answer.removed.map((r: any) => r.text), ["Claim 1 about net sales."])

      const evi1Text = `Net sales were 4,210 units.[1]{c1}\nEVI1\nMANIFEST ${digest}\nc1|1|"4,210 units"\nEND_EVI1\n`
      const evi1 = yield* post(`&format=evi1`, evi1Text)
      assert.strictEqual(evi1.status, "verified", JSON.stringify(evi1))
      assert.strictEqual(evi1.answer.outcome, "grounded")
      // An uncited sentence that looks like a fact is reported (the configuration's default), not rejected.
      const uncited = yield* post(`&format=evi1`, evi1Text.replace("\nEVI1", " Revenue in Q3 2026 was 12,345 units across 3 regions.\nEVI1"))
      assert.strictEqual(uncited.status, "verified", JSON.stringify(uncited))
      assert.deepStrictEqual(uncited.answer.uncited.map((u: any) => u.sentence), ["Revenue in Q3 2026 was 12,345 units across 3 regions."])
      // The same EVI1 text read as JSON is not an answer.
      const evi1AsJson = yield* post("", evi1Text)
      assert.strictEqual(evi1AsJson.status, "rejected")

      const start = [...salesText.slice(0, salesText.indexOf("4,210 units"))].length
      const anthropic = JSON.stringify({
        id: "msg_01",
        type: "message",
        role: "assistant",
        model: "claude-x",
        stop_reason: "end_turn",
        usage: { input_tokens: 1, output_tokens: 1 },
        content: [{
          type: "text",
          text: "Net sales were 4,210 units.",
          citations: [{ type: "char_location", cited_text: "4,210 units", document_index: 0, document_title: null, start_char_index: start, end_char_index: start + 11 }]
        }]
      })
      const viaAnthropic = yield* post(`&format=anthropic&manifestDigest=${digest}`, anthropic)
      assert.strictEqual(viaAnthropic.status, "verified", JSON.stringify(viaAnthropic))
      assert.strictEqual(viaAnthropic.answer.outcome, "grounded")
      const anthropicAsJson = yield* post(`&manifestDigest=${digest}`, anthropic)
      assert.strictEqual(anthropicAsJson.status, "rejected")
      // A digest in the query that is not the run's manifest: StaleManifest.
      const stale = yield* post(`&format=evi1&manifestDigest=${"0".repeat(64)}`, evi1Text)
      assert.strictEqual(stale.status, "rejected")
      assert.strictEqual(stale.error._tag, "StaleManifest")
    }))
})
