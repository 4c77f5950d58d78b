/**
 * Streamed Bedrock answers (`POST /v1/stream/answer?format=bedrock-stream`) with the real client:
 * `@aws-sdk/client-bedrock-runtime`'s `ConverseStreamCommand` talks (cleartext HTTP/2, signed
 * requests) to a loopback server of this test that answers with recorded ConverseStream events in
 * the AWS event stream encoding (encoded by the SDK's own codec, `@smithy/core/event-streams`); the
 * test re-encodes each event the SDK yields and forwards it to citegate's stream route (also on
 * 127.0.0.1) while reading the events citegate emits. Faults (a cut connection, a malformed
 * message, a stream exception) are injected by the replaying server or the forwarder.
 */
import {
  BedrockRuntimeClient,
  type CitationsDelta,
  ConverseStreamCommand,
  type ConverseStreamOutput
} from "@aws-sdk/client-bedrock-runtime"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Http from "node:http"
import * as http2 from "node:http2"
import type { AddressInfo } from "node:net"
import * as BedrockStream from "../src/answer/BedrockStream.js"
import type { CitationsPolicy } from "../src/answer/Records.js"
import { RunNotFound } from "../src/Errors.js"
import * as EventStream from "../src/internal/eventStream.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import * as StreamRoute from "../src/server/StreamRoute.js"
import * as Verifier from "../src/verify/Verifier.js"
import { emojiRecord } from "./answerSupport.js"
import { manifest, verifierLayer } from "./streamSupport.js"
import { codec, concat, corrupt, encodeEvent, encodeException } from "./support/eventStream.js"
import { byType, type Event, ndjsonReader, streamedText, wellFormed } from "./support/streamEvents.js"
import { salesRecord, SALES } from "./support.js"

const READER = "reader-token"
const auth = Auth.make([{ sha256: tokenDigest(READER), runs: ["run-1"], capture: false }])

// --- Recorded ConverseStream events (typed by the SDK: a drifting fixture fails to compile) ------

const salesQuote = "Net sales for Q3 2026 were 4,210 units"
const bikesQuote = "The 🚲 fleet grew to 42 bikes"

/** A documentChar citation of `quote` in `text`, in code points (as Bedrock counts), shifted by `shift`. */
const charCitation = (documentIndex: number, text: string, quote: string, shift = 0): CitationsDelta => {
  const start = [...text.slice(0, text.indexOf(quote))].length + shift
  return {
    title: `Source ${documentIndex + 1}`,
    sourceContent: [{ text: quote }],
    location: { documentChar: { documentIndex, start, end: start + [...quote].length } }
  }
}

const delta = (index: number, d: { text: string } | { citation: CitationsDelta }): ConverseStreamOutput => ({
  contentBlockDelta: { contentBlockIndex: index, delta: d }
})
const stop = (index: number): ConverseStreamOutput => ({ contentBlockStop: { contentBlockIndex: index } })

const grounded: ReadonlyArray<ConverseStreamOutput> = [
  { messageStart: { role: "assistant" } },
  delta(0, { text: "Here is a summary. " }),
  stop(0),
  delta(1, { text: "Net sales for Q3 2026 " }),
  delta(1, { text: "were 4,210 units." }),
  delta(1, { citation: charCitation(0, salesRecord.text, salesQuote) }),
  stop(1),
  delta(2, { text: " The 🚲 fleet grew to 42 bikes." }),
  delta(2, { citation: charCitation(2, emojiRecord.text, bikesQuote) }),
  stop(2),
  { messageStop: { stopReason: "end_turn" } },
  { metadata: { usage: { inputTokens: 900, outputTokens: 40, totalTokens: 940 }, metrics: { latencyMs: 12 } } }
]
const groundedText = "Here is a summary. Net sales for Q3 2026 were 4,210 units.[^1] The 🚲 fleet grew to 42 bikes.[^2]"

/** The sales quote fabricated: the bulletin never says 9,999. */
const fabricated = grounded.map((e, i) =>
  i === 4 ? delta(1, { text: "were 9,999 units." }) : i === 5 ? delta(1, { citation: { ...charCitation(0, salesRecord.text, salesQuote), sourceContent: [{ text: "Net sales for Q3 2026 were 9,999 units" }] } }) : e
)

/** Block 1 cites the sales bulletin by its exact URL, without a cited passage: document-level. */
const documentLevel = grounded.map((e, i) =>
  i === 5 ? delta(1, { citation: { title: "Q3 sales", location: { web: { url: SALES, domain: "reports.northwind.test" } } } }) : e
)

// --- The replaying Bedrock runtime (HTTP/2) -------------------------------------------------------

interface Replay {
  /** The encoded messages, in order. */
  readonly messages: ReadonlyArray<Uint8Array>
  /** Reset the stream after this many messages. */
  readonly cutAfter?: number
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `POST /model/{id}/converse-stream` answers with `replays[id]`, a message at a time. */
const bedrockApi = (replays: Record<string, Replay>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const requests: Array<{ readonly path: string; readonly authorization: string }> = []
      const server = http2.createServer()
      const sessions = new Set<http2.ServerHttp2Session>()
      server.on("session", (session) => {
        sessions.add(session)
        session.on("close", () => sessions.delete(session))
      })
      server.on("stream", (stream, headers) => {
        stream.on("error", () => undefined)
        stream.resume()
        stream.on("end", async () => {
          const path = String(headers[":path"])
          requests.push({ path, authorization: String(headers["authorization"] ?? "") })
          const replay = replays[decodeURIComponent(/^\/model\/([^/]+)\/converse-stream$/.exec(path)?.[1] ?? "")]
          if (replay === undefined) {
            stream.respond({ ":status": 404, "content-type": "application/json" })
            stream.end(JSON.stringify({ message: `no replay for ${path}` }))
            return
          }
          stream.respond({ ":status": 200, "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-1" })
          for (const [i, message] of replay.messages.entries()) {
            if (replay.cutAfter !== undefined && i === replay.cutAfter) {
              await pause(50)
              // The connection drops (not a clean reset of one stream).
              stream.session?.destroy()
              return
            }
            await new Promise<void>((resolve) => stream.write(message, () => resolve()))
          }
          stream.end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, sessions, requests, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }),
    ({ server, sessions }) =>
      Effect.promise(() => {
        for (const session of sessions) session.destroy()
        return new Promise<void>((resolve) => server.close(() => resolve()))
      })
  )

// --- citegate's stream route ----------------------------------------------------------------------

const citegate = (citations?: CitationsPolicy) =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
    const m = yield* manifest
    const route = StreamRoute.make({
      authenticate: (headers, runId) => auth.authenticate(headers, Access.readRun(runId)),
      run: (runId) => (runId === "run-1" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId }))),
      citations
    })
    const server = Http.createServer()
    yield* Layer.build(HttpServer.serve(route.router).pipe(Layer.provide(NodeHttpServer.layer(() => server, { host: "127.0.0.1", port: 0 }))))
    const port = (server.address() as AddressInfo).port
    return { manifest: m, url: `http://127.0.0.1:${port}/v1/stream/answer?run=run-1&format=bedrock-stream&manifest=${m.digest}` }
  })

/** Bytes POSTed to citegate as they are written; its events read meanwhile. */
const post = (url: string) => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  const events: Array<Event> = []
  const reading = (async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${READER}`, "content-type": "application/vnd.amazon.eventstream" },
      body,
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(response.status, 200)
    const reader = ndjsonReader(response)
    for (let e = await reader.next(); e !== undefined; e = await reader.next()) events.push(e)
  })()
  return {
    events,
    send: (bytes: Uint8Array) => controller.enqueue(bytes),
    end: async () => {
      controller.close()
      await reading
      return events
    }
  }
}

interface Forwarded {
  readonly events: ReadonlyArray<Event>
  /** What the SDK threw (a malformed message, an exception), if anything. */
  readonly sdkError: unknown
  /** How many events the SDK yielded. */
  readonly yielded: number
  /** citegate's events seen before each forwarded SDK event (by its index), at the checkpoints. */
  readonly seenBefore: ReadonlyMap<number, ReadonlyArray<Event>>
}

/** The SDK's ConverseStream against the replaying server; each event it yields re-encoded and forwarded to citegate. */
const forward = (
  endpoint: string,
  model: string,
  citegateUrl: string,
  options: {
    /** Forward in pieces of this many bytes (cutting messages, headers and multi-byte characters). */
    readonly pieces?: number
    readonly checkpoints?: ReadonlyMap<number, (events: ReadonlyArray<Event>) => boolean>
    /** Bytes forwarded after the SDK's events, before the body ends. */
    readonly trailing?: Uint8Array
  } = {}
) =>
  Effect.promise(async (): Promise<Forwarded> => {
    const client = new BedrockRuntimeClient({
      region: "us-east-1",
      endpoint,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
      maxAttempts: 1
    })
    const target = post(citegateUrl)
    const seenBefore = new Map<number, ReadonlyArray<Event>>()
    let sdkError: unknown = undefined
    let yielded = 0
    const send = async (bytes: Uint8Array) => {
      if (options.pieces === undefined) return target.send(bytes)
      for (let i = 0; i < bytes.length; i += options.pieces) {
        target.send(bytes.slice(i, i + options.pieces))
        await pause(1)
      }
    }
    try {
      const response = await client.send(new ConverseStreamCommand({ modelId: model, messages: [{ role: "user", content: [{ text: "Summarise Q3." }] }] }))
      let i = 0
      for await (const event of response.stream!) {
        const ready = options.checkpoints?.get(i)
        if (ready !== undefined) {
          for (let waited = 0; !ready(target.events) && waited < 5_000; waited += 10) await pause(10)
          await pause(100)
          seenBefore.set(i, [...target.events])
        }
        await send(encodeEvent(event))
        yielded = ++i
      }
    } catch (error) {
      sdkError = error
    }
    if (options.trailing !== undefined) await send(options.trailing)
    client.destroy()
    // The upstream ended (or broke): so does the body citegate reads.
    return { events: await target.end(), sdkError, yielded, seenBefore }
  })

describe("POST /v1/stream/answer?format=bedrock-stream, with the AWS SDK's ConverseStreamCommand", () => {
  it.scopedLive("a grounded streamed answer: text as it arrives, each citation verified once its block stops, one done", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      const api = yield* bedrockApi({ grounded: { messages: grounded.map(encodeEvent) } })
      // Block 2's stop: its text and citation forwarded, the citation not yet judged.
      const stop2 = grounded.findIndex((e) => e.contentBlockStop?.contentBlockIndex === 2)
      const { events, sdkError, seenBefore } = yield* forward(api.endpoint, "grounded", c.url, {
        pieces: 7,
        checkpoints: new Map([[stop2, (seen: ReadonlyArray<Event>) => streamedText(seen).includes("42 bikes.")]])
      })
      assert.isUndefined(sdkError)
      assert.match(api.requests[0]!.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//)
      assert.strictEqual(api.requests[0]!.path, "/model/grounded/converse-stream")
      const done = wellFormed(events)
      assert.strictEqual(streamedText(events), groundedText)
      const before = seenBefore.get(stop2)!
      assert.include(streamedText(before), "42 bikes.")
      assert.notInclude(streamedText(before), "[^2]")
      assert.deepStrictEqual(byType(before, "citation").map((e) => e.footnote), [1])
      const citations = byType(events, "citation")
      assert.deepStrictEqual(citations.map((e) => [e.footnote, e.claimId, e.sourceNumber, e.quote]), [
        [1, "block-1", 1, salesQuote],
        [2, "block-2", 3, bikesQuote]
      ])
      // documentChar counts code points of the document; the event's span is UTF-16 units of the capture.
      assert.strictEqual(emojiRecord.text.slice(citations[1]!.span.start, citations[1]!.span.end), bikesQuote)
      const marks = byType(events, "delta").flatMap((e) => e.footnotes)
      for (const m of marks) assert.strictEqual(groundedText.slice(m.at, m.at + `[^${m.footnote}]`.length), `[^${m.footnote}]`)
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual(done.summary, {
        claims: 2, claimsGrounded: 2, claimsRemoved: 0, citations: 2, citationsVerified: 2, citationsRetracted: 0,
        claimsDocumentLevel: 0, citationsDocumentLevel: 0
      })
    }))

  it.scopedLive("a fabricated quote is retracted (SnippetAbsent) with its sentence; offsets in UTF-16 units are a SpanMismatch", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      // The emoji citation counted in UTF-16 units (one more than code points past the emoji).
      const utf16 = fabricated.map((e, i) => (i === 8 ? delta(2, { citation: charCitation(2, emojiRecord.text, bikesQuote, 1) }) : e))
      const api = yield* bedrockApi({ fabricated: { messages: utf16.map(encodeEvent) } })
      const { events, sdkError } = yield* forward(api.endpoint, "fabricated", c.url)
      assert.isUndefined(sdkError)
      const done = wellFormed(events)
      const retractions = byType(events, "retraction")
      assert.deepStrictEqual(retractions.map((r) => [r.footnote, r.claimId, r.removeSentence, r.reasons.map((x) => x._tag)]), [
        [1, "block-1", true, ["SnippetAbsent"]],
        [2, "block-2", true, ["SpanMismatch"]]
      ])
      const text = streamedText(events)
      assert.strictEqual(text.slice(retractions[0]!.sentence.start, retractions[0]!.sentence.end), "Net sales for Q3 2026 were 9,999 units.[^1]")
      assert.deepStrictEqual(byType(events, "citation"), [])
      assert.strictEqual(done.state, "no_evidence")
      assert.deepStrictEqual([done.summary.claimsRemoved, done.summary.citationsRetracted], [2, 2])
    }))

  it.scopedLive("the provider's connection cut mid-block: the SDK's iteration just ends, citegate ends with ProviderStreamIncomplete and one done", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      // Cut after block 2's citation: its stop never comes.
      const cut = grounded.findIndex((e) => e.contentBlockStop?.contentBlockIndex === 2)
      const api = yield* bedrockApi({ cut: { messages: grounded.map(encodeEvent), cutAfter: cut } })
      const { events, yielded } = yield* forward(api.endpoint, "cut", c.url)
      // The SDK (its HTTP/2 handler) ends the iteration on the dropped connection, with or without an
      // error (observed: without): only the missing messageStop tells the answer is incomplete.
      assert.strictEqual(yielded, cut)
      const done = wellFormed(events)
      const [error, ...more] = byType(events, "error")
      assert.deepStrictEqual(more, [])
      assert.strictEqual(error!.error._tag, "ProviderStreamIncomplete")
      if (error!.error._tag !== "ProviderStreamIncomplete") return
      assert.deepStrictEqual([error!.error.format, error!.error.at, error!.error.events], ["bedrock-converse-stream", "inside-block", cut])
      assert.strictEqual(done.state, "rejected")
      // Block 1 was complete and verified before the cut; block 2's citation was never judged.
      assert.deepStrictEqual(byType(events, "citation").map((e) => e.footnote), [1])
    }))

  it.scopedLive("a message cut in half at the end of the body: ProviderStreamIncomplete inside-event", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      const api = yield* bedrockApi({ half: { messages: grounded.slice(0, 3).map(encodeEvent) } })
      const last = encodeEvent(grounded[3]!)
      const { events } = yield* forward(api.endpoint, "half", c.url, { trailing: last.subarray(0, 20) })
      wellFormed(events)
      const error = byType(events, "error")[0]!.error
      assert.deepStrictEqual([error._tag, error._tag === "ProviderStreamIncomplete" ? error.at : ""], ["ProviderStreamIncomplete", "inside-event"])
    }))

  it.scopedLive("a malformed message: the SDK refuses it from Bedrock, citegate refuses the same bytes (ProviderEventInvalid, one done)", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      const messages = grounded.map(encodeEvent)
      const bad = corrupt(messages[4]!)
      const api = yield* bedrockApi({ malformed: { messages: [...messages.slice(0, 4), bad] } })
      const { sdkError } = yield* forward(api.endpoint, "malformed", c.url)
      assert.instanceOf(sdkError, Error)
      assert.match(String((sdkError as Error).message), /checksum|crc/i)
      // The raw body a gateway would forward: the first four messages, then the damaged one.
      const target = post(c.url)
      target.send(concat([...messages.slice(0, 4), bad, ...messages.slice(5)]))
      const events = yield* Effect.promise(() => target.end())
      const done = wellFormed(events)
      const error = byType(events, "error")[0]!.error
      assert.strictEqual(error._tag, "ProviderEventInvalid")
      if (error._tag !== "ProviderEventInvalid") return
      assert.strictEqual(error.event, 5)
      assert.match(error.detail, /checksum/)
      assert.strictEqual(done.state, "rejected")
      assert.strictEqual(streamedText(events), "Here is a summary. Net sales for Q3 2026 ")
    }))

  it.scopedLive("a stream exception (throttlingException): the SDK throws it, citegate ends with ProviderStreamError", () =>
    Effect.gen(function*() {
      const c = yield* citegate()
      const messages = [...grounded.slice(0, 3).map(encodeEvent), encodeException("throttlingException", "Too many tokens, please wait.")]
      const api = yield* bedrockApi({ throttled: { messages } })
      const { sdkError } = yield* forward(api.endpoint, "throttled", c.url)
      assert.strictEqual((sdkError as Error).name, "ThrottlingException")
      const target = post(c.url)
      target.send(concat(messages))
      const events = yield* Effect.promise(() => target.end())
      wellFormed(events)
      const error = byType(events, "error")[0]!.error
      assert.deepStrictEqual(
        error._tag === "ProviderStreamError" ? [error.format, error.errorType, error.detail] : [error._tag],
        ["bedrock-converse-stream", "throttlingException", "Too many tokens, please wait."]
      )
    }))

  it.scopedLive("answers.citations: a document-level citation is a CoarseCitation under quote, a document event under document", () =>
    Effect.gen(function*() {
      const api = yield* bedrockApi({ document: { messages: documentLevel.map(encodeEvent) } })
      const quote = yield* forward(api.endpoint, "document", (yield* citegate("quote")).url)
      const q = wellFormed(quote.events)
      assert.deepStrictEqual(byType(quote.events, "retraction").map((r) => [r.footnote, r.removeSentence, r.reasons.map((x) => x._tag)]), [
        [1, true, ["CoarseCitation"]]
      ])
      assert.deepStrictEqual(byType(quote.events, "document"), [])
      assert.deepStrictEqual([q.summary.claimsGrounded, q.summary.citationsDocumentLevel, q.summary.claimsDocumentLevel], [1, 0, 0])

      const document = yield* forward(api.endpoint, "document", (yield* citegate("document")).url)
      const d = wellFormed(document.events)
      assert.deepStrictEqual(byType(document.events, "retraction"), [])
      const [accepted, ...more] = byType(document.events, "document")
      assert.deepStrictEqual(more, [])
      assert.deepStrictEqual(
        [accepted!.footnote, accepted!.claimId, accepted!.sourceNumber, accepted!.source, accepted!.captureSha256, accepted!.label],
        [1, "block-1", 1, SALES, salesRecord.sha256, "document-level: no quote verified"]
      )
      // Never a verified quote: the document-level claim is counted apart, the quote claim grounds the answer.
      assert.deepStrictEqual(byType(document.events, "citation").map((e) => e.footnote), [2])
      assert.deepStrictEqual(d.summary, {
        claims: 2, claimsGrounded: 1, claimsRemoved: 0, citations: 2, citationsVerified: 1, citationsRetracted: 0,
        claimsDocumentLevel: 1, citationsDocumentLevel: 1
      })
    }))
})

describe("BedrockStream.fromEventStream and the event stream decoder", () => {
  it("a whole body gives the streamed blocks; cut, damaged or oversized input is a typed failure", () => {
    const body = concat(grounded.map(encodeEvent))
    const response = BedrockStream.decodeEventStream(body)
    assert.isTrue(Either.isRight(response))
    if (Either.isRight(response)) assert.strictEqual(response.right.output.message.content.length, 3)
    const cut = BedrockStream.decodeEventStream(body.subarray(0, body.length - 3))
    assert.isTrue(Either.isLeft(cut) && cut.left._tag === "ProviderStreamIncomplete" && cut.left.at === "inside-event")
    const damaged = BedrockStream.decodeEventStream(concat([encodeEvent(grounded[0]!), corrupt(encodeEvent(grounded[1]!))]))
    assert.isTrue(Either.isLeft(damaged) && damaged.left._tag === "ProviderEventInvalid" && damaged.left.event === 2)
    // A prelude announcing more than the decoder's bound is refused before anything of it is held.
    const decoder = new EventStream.Decoder(1024)
    const huge = new Uint8Array(8)
    new DataView(huge.buffer).setUint32(0, 10_000_000)
    const refused = decoder.push(huge)
    assert.deepStrictEqual(refused.messages, [])
    assert.strictEqual(refused.error?.kind, "too-large")
  })

  it("the decoder reads the SDK codec's messages byte by byte, headers of every type included", () => {
    const message = codec.encode({
      headers: {
        a: { type: "boolean", value: true },
        b: { type: "boolean", value: false },
        c: { type: "byte", value: -3 },
        d: { type: "short", value: 300 },
        e: { type: "integer", value: 70_000 },
        f: { type: "binary", value: new Uint8Array([1, 2, 3]) },
        g: { type: "string", value: "é東😀" },
        h: { type: "timestamp", value: new Date(0) },
        i: { type: "uuid", value: "3b5cfc4c-5c7c-4d49-a1e5-d1fbd1e3a7d5" }
      },
      body: new TextEncoder().encode("{}")
    })
    const decoder = new EventStream.Decoder(1 << 16)
    const out: Array<EventStream.Message> = []
    for (const byte of concat([message, message])) {
      const pushed = decoder.push(new Uint8Array([byte]))
      assert.isUndefined(pushed.error)
      out.push(...pushed.messages)
    }
    assert.strictEqual(out.length, 2)
    const h = out[0]!.headers
    assert.deepStrictEqual([h.get("a"), h.get("b"), h.get("c"), h.get("d"), h.get("e"), h.get("g")], [true, false, -3, 300, 70_000, "é東😀"])
    assert.deepStrictEqual(h.get("f"), new Uint8Array([1, 2, 3]))
    assert.strictEqual(new TextDecoder().decode(out[1]!.payload), "{}")
    assert.strictEqual(decoder.pending, 0)
  })
})
