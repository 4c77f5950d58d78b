/**
 * The streaming routes without a port: `StreamRoute.make`'s router as a web handler
 * (`HttpApp.toWebHandler`), over the real AnswerStream, Verifier and Auth. Each query parameter
 * at and past what it accepts, every refusal's status and body, both wire formats byte for byte
 * (NDJSON and SSE, chosen by Accept), the response headers, resuming (header, query, invalid ids),
 * and retention (events and bytes kept, streams kept, expiry): expected values written out here.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RunNotFound } from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import * as StreamRoute from "../src/server/StreamRoute.js"
import * as Verifier from "../src/verify/Verifier.js"
import { call, sources, startService, tokens, waitForRun } from "./serverSupport.js"
import { manifest, verifierLayer } from "./streamSupport.js"

const READER = "reader-token"
const OTHER = "other-token"
const auth = Auth.make([
  { sha256: tokenDigest(READER), runs: ["run-1", "run-9"], capture: false },
  { sha256: tokenDigest(OTHER), runs: ["run-2"], capture: false }
])
const bearer = { authorization: `Bearer ${READER}` }

/** The route as a web handler; `run-1` exists, every other run is RunNotFound. */
const route = (options: Partial<StreamRoute.StreamRouteOptions> = {}) =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
    const m = yield* manifest
    const made = StreamRoute.make({
      authenticate: (headers, runId) => auth.authenticate(headers, Access.readRun(runId)),
      authenticateToken: (headers) => auth.authenticate(headers),
      run: (runId) => (runId === "run-1" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId }))),
      ...options
    })
    const handler = HttpApp.toWebHandler(made.router)
    const send = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
      Effect.promise(async () => {
        const response = await handler(new Request(`http://citegate.invalid${path}`, {
          method: init.method ?? (init.body === undefined ? "GET" : "POST"),
          headers: init.headers ?? bearer,
          ...(init.body === undefined ? {} : { body: init.body })
        }))
        return { status: response.status, headers: response.headers, text: await response.text() }
      })
    /** A POST whose body the test writes while reading the response; and a GET read as it arrives. */
    const live = (path: string, init: { method: string; headers?: Record<string, string> }) => {
      let controller!: ReadableStreamDefaultController<Uint8Array>
      const body = init.method === "POST" ? new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }) : undefined
      const response = handler(new Request(`http://citegate.invalid${path}`, {
        method: init.method,
        headers: init.headers ?? bearer,
        ...(body === undefined ? {} : { body, duplex: "half" })
      } as RequestInit))
      const reading = response.then((r) => ({ headers: r.headers, reader: r.body!.getReader() }))
      const decoder = new TextDecoder()
      let buffered = ""
      /** The next `n` NDJSON lines. */
      const lines = async (n: number) => {
        const { reader } = await reading
        while (buffered.split("\n").length - 1 < n) {
          const { done, value } = await reader.read()
          if (done) break
          buffered += decoder.decode(value, { stream: true })
        }
        const parts = buffered.split("\n")
        const out = parts.slice(0, n)
        buffered = parts.slice(n).join("\n")
        return out
      }
      /** The rest, to the end of the response. */
      const rest = async () => {
        const { reader } = await reading
        for (let r = await reader.read(); !r.done; r = await reader.read()) buffered += decoder.decode(r.value, { stream: true })
        const out = buffered
        buffered = ""
        return out
      }
      return {
        send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
        end: () => controller.close(),
        headers: () => reading.then((r) => r.headers),
        lines,
        rest
      }
    }
    return { ...made, send, live, manifest: m }
  })

const line = (text: string) => `${JSON.stringify({ type: "delta", text })}\n`
const json = (text: string) => JSON.parse(text)

/** A short answer: one verified citation. Its events: delta, citation, done. */
const answer = (digest: string) => line(`Up 4,210.[1]{c1}\nEVI1\nMANIFEST ${digest}\nc1|1|"4,210"\nEND_EVI1\n`)

describe("POST /v1/stream/answer: the query", () => {
  it.effect("run: exactly one run id; manifest: at most one digest; mode: at most one of drop, reject", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const body = line("Plain.\n")
      const refused = (parameter: string, detail: string) => ({ status: 400, body: { _tag: "StreamRequestInvalid", parameter, detail } })
      const runDetail = "must be one run id (1 to 64 letters, digits, `-` or `_`)"
      const manifestDetail = "must be one manifest digest (64 lowercase hex characters), as manifest or its alias manifestDigest"
      const cases: Array<[string, unknown]> = [
        ["", refused("run", runDetail)],
        ["?run=run-1&run=run-1", refused("run", runDetail)],
        ["?run=..%2Fx", refused("run", runDetail)],
        [`?run=run-1&manifest=${"a".repeat(64)}&manifest=${"a".repeat(64)}`, refused("manifest", manifestDetail)],
        [`?run=run-1&manifest=${"A".repeat(64)}`, refused("manifest", manifestDetail)],
        [`?run=run-1&manifest=${"a".repeat(63)}`, refused("manifest", manifestDetail)],
        [`?run=run-1&manifest=x${"a".repeat(64)}`, refused("manifest", manifestDetail)],
        [`?run=run-1&manifest=${"a".repeat(64)}x`, refused("manifest", manifestDetail)],
        // manifestDigest is manifest's alias: one digest in all, well formed.
        [`?run=run-1&manifest=${"a".repeat(64)}&manifestDigest=${"a".repeat(64)}`, refused("manifest", manifestDetail)],
        [`?run=run-1&manifestDigest=${"A".repeat(64)}`, refused("manifest", manifestDetail)],
        ["?run=run-1&mode=drop&mode=drop", refused("mode", "must be drop or reject")],
        ["?run=run-1&mode=lenient", refused("mode", "must be drop or reject")],
        ["?run=run-1&mode=", refused("mode", "must be drop or reject")]
      ]
      for (const [query, expected] of cases) {
        const response = yield* s.send(`/v1/stream/answer${query}`, { body })
        assert.deepStrictEqual({ status: response.status, body: json(response.text) }, expected, query)
      }
      assert.strictEqual(s.retainedStreams(), 0)
      // Accepted: each alone, and together.
      for (
        const query of [
          "?run=run-1",
          "?run=run-1&mode=drop",
          "?run=run-1&mode=reject",
          `?run=run-1&manifest=${"a".repeat(64)}&mode=reject`,
          `?run=run-1&manifestDigest=${"a".repeat(64)}`
        ]
      ) {
        assert.strictEqual((yield* s.send(`/v1/stream/answer${query}`, { body })).status, 200, query)
      }
      assert.strictEqual(s.retainedStreams(), 5)
    }))

  it.effect("the manifest named in the query is the one checked; mode from the query, else the route's, else drop", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const evidenceOnly = line(`Up 4,210.[1]{c1}\nEVI1\nc1|1|"4,210"\nEND_EVI1\n`)
      const ok = yield* s.send(`/v1/stream/answer?run=run-1&manifest=${s.manifest.digest}`, { body: evidenceOnly })
      assert.strictEqual(json(ok.text.trim().split("\n").at(-1)!).state, "grounded")
      const retracted = line(`Up 4,210.[1]{c1}\nEVI1\nMANIFEST ${s.manifest.digest}\nc1|1|"4,211"\nEND_EVI1\n`)
      const states = (text: string) => text.trim().split("\n").map((l) => json(l)).filter((e) => e.type === "done" || e.type === "error").map((e) => e.type === "done" ? e.state : e.error._tag)
      assert.deepStrictEqual(states((yield* s.send("/v1/stream/answer?run=run-1", { body: retracted })).text), ["no_evidence"])
      assert.deepStrictEqual(states((yield* s.send("/v1/stream/answer?run=run-1&mode=reject", { body: retracted })).text), ["AnswerRejected", "rejected"])
      const strict = yield* route({ mode: "reject" })
      assert.deepStrictEqual(states((yield* strict.send("/v1/stream/answer?run=run-1", { body: retracted })).text), ["AnswerRejected", "rejected"])
      assert.deepStrictEqual(states((yield* strict.send("/v1/stream/answer?run=run-1&mode=drop", { body: retracted })).text), ["no_evidence"])
      // The uncited policy: report by default, reject when the route says so.
      const uncited = line(`Up 4,210.[1]{c1} Revenue in Q3 2026 was 12,345 units across 3 regions.\nEVI1\nMANIFEST ${s.manifest.digest}\nc1|1|"4,210"\nEND_EVI1\n`)
      assert.deepStrictEqual(states((yield* s.send("/v1/stream/answer?run=run-1", { body: uncited })).text), ["grounded"])
      const rejecting = yield* route({ uncited: "reject" })
      assert.deepStrictEqual(states((yield* rejecting.send("/v1/stream/answer?run=run-1", { body: uncited })).text), ["AnswerRejected", "rejected"])
    }))
})

describe("refusals", () => {
  it.effect("401 without a token, 403 for a run not listed, 404 for a run that does not exist; nothing retained", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const body = line("x")
      const none = yield* s.send("/v1/stream/answer?run=run-1", { headers: {}, body })
      assert.deepStrictEqual([none.status, json(none.text)], [401, { _tag: "Unauthorized", reason: "missing" }])
      const other = yield* s.send("/v1/stream/answer?run=run-2", { body })
      assert.deepStrictEqual([other.status, json(other.text)], [403, { _tag: "Forbidden", action: "read-run", runId: "run-2" }])
      const absent = yield* s.send("/v1/stream/answer?run=run-9", { body })
      assert.deepStrictEqual([absent.status, json(absent.text)], [404, { _tag: "RunNotFound", runId: "run-9" }])
      assert.strictEqual(s.retainedStreams(), 0)
    }))
})

describe("wire formats", () => {
  it.effect("NDJSON: one event a line, exactly encodeEvent's JSON; its headers", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const response = yield* s.send("/v1/stream/answer?run=run-1", { body: answer(s.manifest.digest) })
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type"), "application/x-ndjson; charset=utf-8")
      const id = response.headers.get(StreamRoute.streamIdHeader)!
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.strictEqual(response.headers.get("cache-control"), "no-store")
      assert.strictEqual(response.headers.get("x-accel-buffering"), "no")
      assert.strictEqual(response.headers.get("x-content-type-options"), "nosniff")
      const lines = response.text.split("\n")
      assert.strictEqual(lines.at(-1), "")
      const events = lines.slice(0, -1).map((l) => AnswerStream.decodeEvent(l))
      assert.deepStrictEqual(events.map((e) => [e.id, e.type]), [[1, "delta"], [2, "citation"], [3, "done"]])
      assert.strictEqual(response.text, events.map((e) => AnswerStream.encodeEvent(e) + "\n").join(""))
      assert.strictEqual(s.retainedStreams(), 1)
      assert.strictEqual(s.liveStreams(), 0)
    }))

  it.effect("SSE when Accept lists text/event-stream (with parameters, among others): retry first, then id and data", () =>
    Effect.gen(function*() {
      const s = yield* route()
      for (const accept of ["text/event-stream", "text/html, text/event-stream;q=0.9", " text/event-stream ; charset=utf-8"]) {
        const response = yield* s.send("/v1/stream/answer?run=run-1", { headers: { ...bearer, accept }, body: answer(s.manifest.digest) })
        assert.strictEqual(response.headers.get("content-type"), "text/event-stream; charset=utf-8", accept)
        assert.strictEqual(response.headers.get("x-content-type-options"), null)
        assert.strictEqual(response.headers.get("cache-control"), "no-store")
        assert.strictEqual(response.headers.get("x-accel-buffering"), "no")
        assert.isTrue(response.text.startsWith("retry: 500\n\n"), accept)
        const frames = response.text.slice("retry: 500\n\n".length).split("\n\n")
        assert.strictEqual(frames.at(-1), "")
        const parsed = frames.slice(0, -1).map((frame) => {
          const match = /^id: (\d+)\ndata: (.*)$/.exec(frame)
          assert.isNotNull(match, frame)
          return { id: Number(match![1]), event: AnswerStream.decodeEvent(match![2]!) }
        })
        assert.deepStrictEqual(parsed.map((f) => [f.id, f.event.id, f.event.type]), [[1, 1, "delta"], [2, 2, "citation"], [3, 3, "done"]])
      }
      assert.strictEqual(StreamRoute.sseRetryMs, 500)
      // Anything else: NDJSON.
      for (const accept of ["text/event-streams", "application/json", "text/*"]) {
        const response = yield* s.send("/v1/stream/answer?run=run-1", { headers: { ...bearer, accept }, body: answer(s.manifest.digest) })
        assert.strictEqual(response.headers.get("content-type"), "application/x-ndjson; charset=utf-8", accept)
      }
    }))
})

describe("GET /v1/stream/answer/{id}: resuming", () => {
  it.effect("replays after Last-Event-ID (header first, else lastEventId in the query); invalid ids are 400", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const posted = yield* s.send("/v1/stream/answer?run=run-1", { body: answer(s.manifest.digest) })
      const id = posted.headers.get(StreamRoute.streamIdHeader)!
      const all = posted.text.split("\n").slice(0, -1)
      const resume = (query: string, headers: Record<string, string> = {}) => s.send(`/v1/stream/answer/${id}${query}`, { headers: { ...bearer, ...headers } })
      assert.strictEqual((yield* resume("")).text, all.map((l) => l + "\n").join(""))
      assert.strictEqual((yield* resume("", { "last-event-id": "0" })).text, all.map((l) => l + "\n").join(""))
      assert.strictEqual((yield* resume("", { "last-event-id": "1" })).text, all.slice(1).map((l) => l + "\n").join(""))
      assert.strictEqual((yield* resume("", { "last-event-id": " 2 " })).text, all[2] + "\n")
      assert.strictEqual((yield* resume("", { "last-event-id": "3" })).text, "")
      assert.strictEqual((yield* resume("", { "last-event-id": "99" })).text, "")
      assert.strictEqual((yield* resume("?lastEventId=2")).text, all[2] + "\n")
      // Spaces around the id are trimmed (a header's are already, by the HTTP layer; the query's are not).
      assert.strictEqual((yield* resume("?lastEventId=%202%20")).text, all[2] + "\n")
      // The header wins over the query.
      assert.strictEqual((yield* resume("?lastEventId=0", { "last-event-id": "2" })).text, all[2] + "\n")
      const resumed = yield* resume("", { "last-event-id": "1" })
      assert.strictEqual(resumed.headers.get(StreamRoute.streamIdHeader), id)
      assert.strictEqual(resumed.headers.get("content-type"), "application/x-ndjson; charset=utf-8")
      assert.strictEqual(resumed.headers.get("x-content-type-options"), "nosniff")
      const sse = yield* resume("", { "last-event-id": "1", accept: "text/event-stream" })
      assert.strictEqual(sse.headers.get("content-type"), "text/event-stream; charset=utf-8")
      assert.strictEqual(sse.text, `retry: 500\n\nid: 2\ndata: ${all[1]}\n\nid: 3\ndata: ${all[2]}\n\n`)
      const invalid = { _tag: "StreamRequestInvalid", parameter: "Last-Event-ID", detail: "must be one event id (a non-negative integer)" }
      for (const value of ["-1", "01", "1.0", "x", "12345678901", ""]) {
        const response = yield* resume("", { "last-event-id": value })
        assert.deepStrictEqual([response.status, json(response.text)], [400, invalid], JSON.stringify(value))
      }
      const twice = yield* resume("?lastEventId=1&lastEventId=2")
      assert.deepStrictEqual([twice.status, json(twice.text)], [400, invalid])
      // Ten digits are an id.
      assert.strictEqual((yield* resume("", { "last-event-id": "1234567890" })).status, 200)
    }))

  it.effect("an unknown stream is 404 StreamGone; a token is checked first (401), then the run (403)", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const unknown = yield* s.send("/v1/stream/answer/no-such-stream")
      assert.deepStrictEqual([unknown.status, json(unknown.text)], [404, { _tag: "StreamGone", streamId: "no-such-stream", reason: "unknown-stream", oldestRetained: null }])
      const none = yield* s.send("/v1/stream/answer/no-such-stream", { headers: {} })
      assert.deepStrictEqual([none.status, json(none.text)], [401, { _tag: "Unauthorized", reason: "missing" }])
      const posted = yield* s.send("/v1/stream/answer?run=run-1", { body: answer(s.manifest.digest) })
      const id = posted.headers.get(StreamRoute.streamIdHeader)!
      // A valid token that may not read the stream's run: 403, with the run named.
      const other = yield* s.send(`/v1/stream/answer/${id}`, { headers: { authorization: `Bearer ${OTHER}` } })
      assert.deepStrictEqual([other.status, json(other.text)], [403, { _tag: "Forbidden", action: "read-run", runId: "run-1" }])
      // Without authenticateToken, an unknown id is 404 before any token is looked at.
      const open = yield* route({ authenticateToken: undefined })
      const openUnknown = yield* open.send("/v1/stream/answer/no-such-stream", { headers: {} })
      assert.deepStrictEqual([openUnknown.status, json(openUnknown.text).reason], [404, "unknown-stream"])
    }))
})

describe("retention", () => {
  it.effect("the newest maxEvents events are kept: resuming before them is 410 with the oldest kept", () =>
    Effect.gen(function*() {
      const s = yield* route({ retention: { maxEvents: 2 } })
      const posted = yield* s.send("/v1/stream/answer?run=run-1", { body: answer(s.manifest.digest) })
      const id = posted.headers.get(StreamRoute.streamIdHeader)!
      const all = posted.text.split("\n").slice(0, -1)
      const gone = yield* s.send(`/v1/stream/answer/${id}`)
      assert.deepStrictEqual([gone.status, json(gone.text)], [410, { _tag: "StreamGone", streamId: id, reason: "not-retained", oldestRetained: 2 }])
      assert.strictEqual((yield* s.send(`/v1/stream/answer/${id}`, { headers: { ...bearer, "last-event-id": "1" } })).text, `${all[1]}\n${all[2]}\n`)
    }))

  it.effect("maxBytes: the oldest events go first until the rest fit; the newest is kept even alone over it", () =>
    Effect.gen(function*() {
      const probe = yield* route()
      const all = (yield* probe.send("/v1/stream/answer?run=run-1", { body: answer(probe.manifest.digest) })).text.split("\n").slice(0, -1)
      const sizes = all.map((l) => l.length)
      const resumeFrom = (s: Effect.Effect.Success<ReturnType<typeof route>>, id: string) => s.send(`/v1/stream/answer/${id}`)
      // Exactly the last two events' bytes: the first is dropped.
      const two = yield* route({ retention: { maxBytes: sizes[1]! + sizes[2]! } })
      const twoId = (yield* two.send("/v1/stream/answer?run=run-1", { body: answer(two.manifest.digest) })).headers.get(StreamRoute.streamIdHeader)!
      assert.strictEqual(json((yield* resumeFrom(two, twoId)).text).oldestRetained, 2)
      // One byte more: all three stay only if they fit; one byte less than the last two: only the last.
      const three = yield* route({ retention: { maxBytes: sizes[0]! + sizes[1]! + sizes[2]! } })
      const threeId = (yield* three.send("/v1/stream/answer?run=run-1", { body: answer(three.manifest.digest) })).headers.get(StreamRoute.streamIdHeader)!
      assert.strictEqual((yield* resumeFrom(three, threeId)).status, 200)
      const one = yield* route({ retention: { maxBytes: sizes[1]! + sizes[2]! - 1 } })
      const oneId = (yield* one.send("/v1/stream/answer?run=run-1", { body: answer(one.manifest.digest) })).headers.get(StreamRoute.streamIdHeader)!
      assert.strictEqual(json((yield* resumeFrom(one, oneId)).text).oldestRetained, 3)
      const tiny = yield* route({ retention: { maxBytes: 1 } })
      const tinyId = (yield* tiny.send("/v1/stream/answer?run=run-1", { body: answer(tiny.manifest.digest) })).headers.get(StreamRoute.streamIdHeader)!
      assert.strictEqual((yield* tiny.send(`/v1/stream/answer/${tinyId}`, { headers: { ...bearer, "last-event-id": "2" } })).text, `${all[2]}\n`)
    }))

  it.effect("maxStreams: opening past it drops the oldest ended streams; an expired stream is gone", () =>
    Effect.gen(function*() {
      const s = yield* route({ retention: { maxStreams: 2 } })
      const open = () => Effect.map(s.send("/v1/stream/answer?run=run-1", { body: answer(s.manifest.digest) }), (r) => r.headers.get(StreamRoute.streamIdHeader)!)
      const a = yield* open()
      const b = yield* open()
      assert.strictEqual(s.retainedStreams(), 2)
      // At capacity, looking streams up drops none of them (each lookup used to drop the oldest ended one).
      for (const id of [a, a, b, a]) assert.strictEqual((yield* s.send(`/v1/stream/answer/${id}`)).status, 200, id)
      assert.strictEqual(s.retainedStreams(), 2)
      const c = yield* open()
      assert.strictEqual(s.retainedStreams(), 2)
      assert.strictEqual((yield* s.send(`/v1/stream/answer/${a}`)).status, 404)
      assert.strictEqual((yield* s.send(`/v1/stream/answer/${b}`)).status, 200)
      assert.strictEqual((yield* s.send(`/v1/stream/answer/${c}`)).status, 200)
      const three = yield* route({ retention: { maxStreams: 3 } })
      for (let i = 0; i < 3; i++) yield* three.send("/v1/stream/answer?run=run-1", { body: answer(three.manifest.digest) })
      assert.strictEqual(three.retainedStreams(), 3)
      yield* three.send("/v1/stream/answer?run=run-1", { body: answer(three.manifest.digest) })
      assert.strictEqual(three.retainedStreams(), 3)
      // Expired at once (a negative retention): the next lookup drops it.
      const expired = yield* route({ retention: { retainMs: -1 } })
      const id = (yield* expired.send("/v1/stream/answer?run=run-1", { body: answer(expired.manifest.digest) })).headers.get(StreamRoute.streamIdHeader)!
      assert.strictEqual((yield* expired.send(`/v1/stream/answer/${id}`)).status, 404)
      assert.strictEqual(expired.retainedStreams(), 0)
      assert.deepStrictEqual(StreamRoute.defaultRetention, {
        maxEvents: 1_024,
        maxBytes: 1_048_576,
        retainMs: 60_000,
        maxStreams: 1_000,
        maxTotalBytes: 67_108_864
      })
    }))
})

describe("following a live stream", () => {
  it.effect("a follower gets the events so far, then each new one as it is made, then the end; never one twice", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const producer = s.live("/v1/stream/answer?run=run-1", { method: "POST" })
      const events = yield* Effect.promise(async () => {
        producer.send(line("Up 4,210.[1]{c1}\n"))
        const first = await producer.lines(1)
        const id = (await producer.headers()).get(StreamRoute.streamIdHeader)!
        assert.strictEqual(s.liveStreams(), 1)
        const follower = s.live(`/v1/stream/answer/${id}`, { method: "GET" })
        const seenFirst = await follower.lines(1)
        producer.send(line(`EVI1\nMANIFEST ${s.manifest.digest}\nc1|1|"4,210"\n`))
        const second = await producer.lines(1)
        const seenSecond = await follower.lines(1)
        // A second follower from after the first event, while the stream is still open.
        const late = s.live(`/v1/stream/answer/${id}`, { method: "GET", headers: { ...bearer, "last-event-id": "1" } })
        const lateFirst = await late.lines(1)
        producer.send(line("END_EVI1\n"))
        producer.end()
        const tail = await producer.rest()
        return { first, second, tail, seen: [...seenFirst, ...seenSecond, await follower.rest()], late: [...lateFirst, await late.rest()] }
      })
      const all = [...events.first, ...events.second, ...events.tail.split("\n").slice(0, -1)]
      assert.deepStrictEqual(all.map((l) => [AnswerStream.decodeEvent(l).id, AnswerStream.decodeEvent(l).type]), [[1, "delta"], [2, "citation"], [3, "done"]])
      assert.deepStrictEqual(events.seen, [all[0], all[1], `${all[2]}\n`])
      assert.deepStrictEqual(events.late, [all[1], `${all[2]}\n`])
      assert.strictEqual(s.liveStreams(), 0)
      assert.strictEqual(s.retainedStreams(), 1)
    }))
})

describe("following from the start", () => {
  it.effect("a follower that arrives before the first event waits for it, and gets every event", () =>
    Effect.gen(function*() {
      const s = yield* route()
      const producer = s.live("/v1/stream/answer?run=run-1", { method: "POST" })
      const result = yield* Effect.promise(async () => {
        const id = (await producer.headers()).get(StreamRoute.streamIdHeader)!
        const follower = s.live(`/v1/stream/answer/${id}`, { method: "GET" })
        await follower.headers()
        producer.send(answer(s.manifest.digest))
        producer.end()
        return { produced: await producer.rest(), followed: await follower.rest() }
      })
      assert.strictEqual(result.produced.split("\n").length, 4)
      assert.strictEqual(result.followed, result.produced)
    }))
})

describe("the route in the service (StreamRoute.layer)", () => {
  it.scopedLive("tokens and runs as for every endpoint; the configuration's mode (drop when unset) and uncited policy", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const id = started.json.id as string
      yield* waitForRun(service, id)
      const digest = (yield* call(service, `/v1/runs/${id}`, { token: tokens.admin })).json.manifest.digest as string
      const body = line(
        `Net sales for Q3 2026 were 4,210 units.[1]{c1} Returns were 9%.[1]{c2} Revenue in Q3 2026 was 12,345 units across 3 regions.\nEVI1\nMANIFEST ${digest}\nc1|1|"4,210 units"\nc2|1|"Returns were 9% of units sold"\nEND_EVI1\n`
      )
      const streamed = yield* call(service, `/v1/stream/answer?run=${id}`, { token: tokens.admin, body })
      assert.strictEqual(streamed.status, 200, streamed.text)
      const events = streamed.text.trim().split("\n").map((l) => JSON.parse(l))
      assert.deepStrictEqual(events.map((e) => e.type), ["delta", "citation", "retraction", "done"])
      // Drop (the configuration names no mode): the retraction does not reject; the uncited sentence is reported.
      assert.strictEqual(events[3].state, "grounded")
      assert.deepStrictEqual(events[3].uncited.map((u: any) => u.sentence), ["Revenue in Q3 2026 was 12,345 units across 3 regions."])
      const rejected = yield* call(service, `/v1/stream/answer?run=${id}&mode=reject`, { token: tokens.admin, body })
      assert.deepStrictEqual(rejected.text.trim().split("\n").map((l) => JSON.parse(l).type).slice(-2), ["error", "done"])
      const none = yield* call(service, `/v1/stream/answer?run=${id}`, { body })
      assert.deepStrictEqual([none.status, none.json], [401, { _tag: "Unauthorized", reason: "missing" }])
      const refused = yield* call(service, `/v1/stream/answer?run=${id}`, { token: tokens.reader, body })
      assert.deepStrictEqual([refused.status, refused.json], [403, { _tag: "Forbidden", action: "read-run", runId: id }])
      const unknown = yield* call(service, "/v1/stream/answer?run=no-such-run", { token: tokens.admin, body })
      assert.deepStrictEqual([unknown.status, unknown.json], [404, { _tag: "RunNotFound", runId: "no-such-run" }])
      // Resuming: the token first (401 for any id), then the stream's run for this token (403).
      const streamId = streamed.headers.get(StreamRoute.streamIdHeader)!
      const anonymous = yield* call(service, `/v1/stream/answer/${streamId}`, {})
      assert.deepStrictEqual([anonymous.status, anonymous.json], [401, { _tag: "Unauthorized", reason: "missing" }])
      const readerResume = yield* call(service, `/v1/stream/answer/${streamId}`, { token: tokens.reader })
      assert.deepStrictEqual([readerResume.status, readerResume.json], [403, { _tag: "Forbidden", action: "read-run", runId: id }])
      const resumed = yield* call(service, `/v1/stream/answer/${streamId}`, { token: tokens.admin, headers: { "last-event-id": "3" } })
      assert.deepStrictEqual(resumed.text.trim().split("\n").map((l) => JSON.parse(l).id), [4])
    }))
})
