/**
 * Streamed Anthropic answers (`POST /v1/stream/answer?format=anthropic-sse`) with the real client:
 * `@anthropic-ai/sdk` talks to a loopback server of this test that replays recorded Messages
 * streams; the test forwards the SDK's raw events as SSE to citegate's stream route (also on
 * 127.0.0.1) while reading the events citegate emits.
 */
import Anthropic from "@anthropic-ai/sdk"
import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { RunNotFound } from "../src/Errors.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import * as StreamRoute from "../src/server/StreamRoute.js"
import * as Verifier from "../src/verify/Verifier.js"
import { emojiRecord } from "./answerSupport.js"
import { bikesQuote, fabricated, grounded, leedsQuote, salesQuote, sseEvent } from "./anthropicSseFixtures.js"
import { manifest, verifierLayer } from "./streamSupport.js"
import { byType, type Event, ndjsonReader, streamedText, wellFormed } from "./support/streamEvents.js"
import { inventoryRecord, salesRecord } from "./support.js"


const READER = "reader-token"
const auth = Auth.make([{ sha256: tokenDigest(READER), runs: ["run-1"], capture: false }])

/** citegate's streaming routes on 127.0.0.1, closed with the scope. */
const citegate = Effect.gen(function*() {
  const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
  const m = yield* manifest
  const route = StreamRoute.make({
    authenticate: (headers, runId) => auth.authenticate(headers, Access.readRun(runId)),
    run: (runId) => (runId === "run-1" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId })))
  })
  const server = Http.createServer()
  yield* Layer.build(HttpServer.serve(route.router).pipe(Layer.provide(NodeHttpServer.layer(() => server, { host: "127.0.0.1", port: 0 }))))
  const port = (server.address() as AddressInfo).port
  return { manifest: m, url: `http://127.0.0.1:${port}/v1/stream/answer?run=run-1&format=anthropic-sse&manifest=${m.digest}` }
})

interface Replay {
  readonly events: ReadonlyArray<RawMessageStreamEvent>
  /** Drop the connection after this many events (mid-stream). */
  readonly cutAfter?: number
  /** Write the events of these indices in pieces of this many bytes, pausing between pieces. */
  readonly pieces?: { readonly of: ReadonlySet<number>; readonly bytes: number }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Bytes cut every `size` bytes: pieces split JSON and multi-byte characters. */
const split = (text: string, size: number): Array<Uint8Array> => {
  const bytes = new TextEncoder().encode(text)
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

/** A Messages API of the test's own on 127.0.0.1: `POST /v1/messages` replays a recorded stream. */
const anthropicApi = (replay: Replay) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const requests: Array<unknown> = []
      const server = Http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        request.on("end", async () => {
          requests.push({ url: request.url, body: JSON.parse(body) })
          response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
          // Each write is flushed before the next step: a cut drops the connection, not unsent events.
          const write = (chunk: string | Uint8Array) => new Promise<void>((resolve) => response.write(chunk, () => resolve()))
          for (const [i, event] of replay.events.entries()) {
            if (replay.cutAfter !== undefined && i === replay.cutAfter) {
              await pause(50)
              response.socket?.destroy()
              return
            }
            const text = sseEvent(event)
            if (replay.pieces?.of.has(i) === true) {
              for (const piece of split(text, replay.pieces.bytes)) {
                await write(piece)
                await pause(2)
              }
            } else await write(text)
          }
          response.end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, requests, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }),
    ({ server }) =>
      Effect.promise(() => {
        server.closeAllConnections()
        return new Promise<void>((resolve) => server.close(() => resolve()))
      })
  )

interface Forwarded {
  readonly events: ReadonlyArray<Event>
  /** What the SDK threw (a cut connection), if anything. */
  readonly sdkError: unknown
  /** citegate's events seen before each forwarded SDK event (by the SDK event's index). */
  readonly seenBefore: ReadonlyMap<number, ReadonlyArray<Event>>
}

/**
 * The SDK's stream API against the replaying server; each raw event it yields is forwarded to
 * citegate as SSE (in `forwardPieces`-byte pieces when given) while citegate's events are read.
 */
const forward = (
  baseURL: string,
  citegateUrl: string,
  options: {
    readonly forwardPieces?: number
    /** Before forwarding SDK event i: wait until citegate's events satisfy the predicate, then record them. */
    readonly checkpoints?: ReadonlyMap<number, (events: ReadonlyArray<Event>) => boolean>
  } = {}
) =>
  Effect.promise(async (): Promise<Forwarded> => {
    const client = new Anthropic({ apiKey: "test-key", baseURL, maxRetries: 0 })
    let controller!: ReadableStreamDefaultController<Uint8Array>
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
    // The response's head comes with citegate's first event: the request is not awaited before forwarding starts.
    const responding = fetch(citegateUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${READER}`, "content-type": "text/event-stream" },
      body,
      duplex: "half"
    } as RequestInit)
    const events: Array<Event> = []
    const seenBefore = new Map<number, ReadonlyArray<Event>>()
    let sdkError: unknown = undefined
    // Reads citegate's events while the SDK events are forwarded.
    const reading = (async () => {
      const response = await responding
      assert.strictEqual(response.status, 200)
      const reader = ndjsonReader(response)
      for (let e = await reader.next(); e !== undefined; e = await reader.next()) events.push(e)
    })()
    const stream = client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [{
        role: "user",
        content: [
          { type: "document", source: { type: "text", media_type: "text/plain", data: salesRecord.text }, citations: { enabled: true } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: inventoryRecord.text }, citations: { enabled: true } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: emojiRecord.text }, citations: { enabled: true } },
          { type: "text", text: "Summarise Q3 with citations." }
        ]
      }]
    })
    try {
      let i = 0
      for await (const event of stream) {
        const ready = options.checkpoints?.get(i)
        if (ready !== undefined) {
          // citegate has answered what it was sent (up to 5 s), and a little longer for anything it should not send.
          for (let waited = 0; !ready(events) && waited < 5_000; waited += 10) await pause(10)
          await pause(100)
          seenBefore.set(i, [...events])
        }
        const text = sseEvent(event)
        if (options.forwardPieces === undefined) controller.enqueue(new TextEncoder().encode(text))
        else {
          for (const piece of split(text, options.forwardPieces)) {
            controller.enqueue(piece)
            await pause(1)
          }
        }
        i++
      }
    } catch (error) {
      sdkError = error
    }
    // The upstream ended (or broke): so does the body citegate reads.
    controller.close()
    await reading
    return { events, sdkError, seenBefore }
  })

const groundedText = "Here is a summary. Net sales for Q3 2026 were 4,210 units.[^1] Leeds held 640 of the 4,210 units.[^2][^3] The 🚲 fleet grew to 42 bikes.[^4]"

describe("POST /v1/stream/answer?format=anthropic-sse, with the Anthropic SDK", () => {
  it.scopedLive("a grounded streamed answer: text as it arrives, each citation verified once its block stops, one done", () =>
    Effect.gen(function*() {
      const c = yield* citegate
      const api = yield* anthropicApi({ events: grounded })
      // Block 2's content_block_stop: its text has been forwarded, its citation not yet judged.
      const stop2 = grounded.findIndex((e) => e.type === "content_block_stop" && e.index === 2)
      const { events, sdkError, seenBefore } = yield* forward(api.baseURL, c.url, {
        checkpoints: new Map([[stop2, (seen: ReadonlyArray<Event>) => streamedText(seen).includes("were 4,210 units.")]])
      })
      assert.isUndefined(sdkError)
      assert.strictEqual(api.requests.length, 1)
      const done = wellFormed(events)
      assert.strictEqual(streamedText(events), groundedText)
      // Before the block stopped: its text streamed, but no marker and no citation event.
      const before = seenBefore.get(stop2)!
      assert.include(streamedText(before), "were 4,210 units.")
      assert.notInclude(streamedText(before), "[^1]")
      assert.deepStrictEqual(byType(before, "citation"), [])
      const citations = byType(events, "citation")
      assert.deepStrictEqual(citations.map((e) => [e.footnote, e.claimId, e.sourceNumber, e.quote]), [
        [1, "block-2", 1, salesQuote],
        [2, "block-4", 2, leedsQuote],
        [3, "block-4", 1, "4,210 units"],
        [4, "block-5", 3, bikesQuote]
      ])
      // The emoji text: char indices in code points, the event's span in UTF-16 units of the capture.
      const bikes = citations[3]!
      assert.strictEqual(emojiRecord.text.slice(bikes.span.start, bikes.span.end), bikesQuote)
      assert.strictEqual(citations[0]!.captureSha256, salesRecord.sha256)
      // Each footnote's marker sits where the delta placed it.
      const marks = byType(events, "delta").flatMap((e) => e.footnotes)
      assert.deepStrictEqual(marks.map((m) => [m.footnote, m.claimId, m.source]), [[1, "block-2", 1], [2, "block-4", 2], [3, "block-4", 1], [4, "block-5", 3]])
      for (const m of marks) assert.strictEqual(groundedText.slice(m.at, m.at + `[^${m.footnote}]`.length), `[^${m.footnote}]`)
      assert.deepStrictEqual(byType(events, "retraction"), [])
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual(done.summary, { claims: 3, claimsGrounded: 3, claimsRemoved: 0, citations: 4, citationsVerified: 4, citationsRetracted: 0 })
      assert.deepStrictEqual(done.uncited, [])
    }))

  it.scopedLive("a fabricated quote is retracted (SnippetAbsent) with its sentence; the other claims stay grounded", () =>
    Effect.gen(function*() {
      const c = yield* citegate
      const api = yield* anthropicApi({ events: fabricated })
      const { events, sdkError } = yield* forward(api.baseURL, c.url)
      assert.isUndefined(sdkError)
      const done = wellFormed(events)
      const [retraction, ...more] = byType(events, "retraction")
      assert.deepStrictEqual(more, [])
      assert.strictEqual(retraction!.footnote, 1)
      assert.strictEqual(retraction!.claimId, "block-2")
      assert.strictEqual(retraction!.claim, "Net sales for Q3 2026 were 9,999 units.")
      assert.isTrue(retraction!.removeSentence)
      assert.deepStrictEqual(retraction!.reasons.map((r) => r._tag), ["SnippetAbsent"])
      const text = streamedText(events)
      assert.strictEqual(text.slice(retraction!.sentence.start, retraction!.sentence.end), "Net sales for Q3 2026 were 9,999 units.[^1]")
      // No citation event for the retracted footnote; a retraction only after its marker was sent.
      assert.deepStrictEqual(byType(events, "citation").map((e) => e.footnote), [2, 3, 4])
      assert.isTrue(events.indexOf(retraction!) > events.findIndex((e) => e.type === "delta" && e.footnotes.some((f) => f.footnote === 1)))
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual(done.summary, { claims: 3, claimsGrounded: 2, claimsRemoved: 1, citations: 4, citationsVerified: 3, citationsRetracted: 1 })
    }))

  it.scopedLive("the provider's connection cut mid-block: the SDK fails, citegate ends with ProviderStreamIncomplete and one done", () =>
    Effect.gen(function*() {
      const c = yield* citegate
      // Cut right after block 4's text: its citations arrived, its stop never does.
      const cut = grounded.findIndex((e) => e.type === "content_block_stop" && e.index === 4)
      const api = yield* anthropicApi({ events: grounded, cutAfter: cut })
      const { events, sdkError } = yield* forward(api.baseURL, c.url)
      assert.instanceOf(sdkError, Error)
      const done = wellFormed(events)
      const errors = byType(events, "error")
      assert.strictEqual(errors.length, 1)
      const error = errors[0]!.error
      assert.strictEqual(error._tag, "ProviderStreamIncomplete")
      if (error._tag !== "ProviderStreamIncomplete") return
      assert.deepStrictEqual([error.format, error.at, error.events], ["anthropic-sse", "inside-block", cut])
      assert.strictEqual(done.state, "rejected")
      // Block 2 was complete and verified before the cut; block 4's citations were never judged.
      assert.deepStrictEqual(byType(events, "citation").map((e) => e.footnote), [1])
      assert.deepStrictEqual(done.summary, { claims: 1, claimsGrounded: 1, claimsRemoved: 0, citations: 1, citationsVerified: 1, citationsRetracted: 0 })
      assert.include(streamedText(events), "Leeds held 640 of the 4,210 units.")
    }))

  it.scopedLive("citations_delta arriving in pieces (split inside its JSON and inside a UTF-8 character), both hops: the same events", () =>
    Effect.gen(function*() {
      const c = yield* citegate
      const citationDeltas = new Set(grounded.flatMap((e, i) => (e.type === "content_block_delta" && e.delta.type === "citations_delta" ? [i] : [])))
      const api = yield* anthropicApi({ events: grounded, pieces: { of: citationDeltas, bytes: 3 } })
      const { events, sdkError } = yield* forward(api.baseURL, c.url, { forwardPieces: 5 })
      assert.isUndefined(sdkError)
      const done = wellFormed(events)
      assert.strictEqual(streamedText(events), groundedText)
      assert.deepStrictEqual(byType(events, "citation").map((e) => [e.footnote, e.quote]), [[1, salesQuote], [2, leedsQuote], [3, "4,210 units"], [4, bikesQuote]])
      assert.strictEqual(done.state, "grounded")
      assert.strictEqual(done.summary.citationsVerified, 4)
    }))
})
