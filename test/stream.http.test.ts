import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readdirSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { RunNotFound } from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import * as StreamRoute from "../src/server/StreamRoute.js"
import * as Verifier from "../src/verify/Verifier.js"
import { waitUntil } from "./httpServer.js"
import { evidence, manifest, sample, sampleBody, sampleStreamed, verifierLayer } from "./streamSupport.js"
import { ndjsonReader } from "./support/streamEvents.js"

type Event = AnswerStream.StreamEvent

/** The `eventsource` package (v3, a WHATWG EventSource for Node), loaded at run time: its exports name TypeScript sources. */
interface EventSourceLike {
  addEventListener(type: string, listener: (message: { readonly data: string; readonly lastEventId: string }) => void): void
  close(): void
}
type EventSourceClass = new (url: string, init: { fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response> }) => EventSourceLike
const eventsourcePackage = "eventsource"
const loadEventSource = async () => ((await import(eventsourcePackage)) as { EventSource: EventSourceClass }).EventSource

const READER = "reader-token"
const OTHER = "other-run-token"
const auth = Auth.make([
  { sha256: tokenDigest(READER), runs: ["run-1"], capture: false },
  { sha256: tokenDigest(OTHER), runs: ["run-2"], capture: false }
])

/** The streaming routes on a node server at 127.0.0.1 (never another address), closed with the scope. */
const serve = (options: { retention?: Partial<StreamRoute.Retention>; limits?: Partial<AnswerStream.StreamLimits> } = {}) =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
    const m = yield* manifest
    const route = StreamRoute.make({
      authenticate: (headers, runId) => auth.authenticate(headers, Access.readRun(runId)),
      run: (runId) => (runId === "run-1" || runId === "run-2" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId }))),
      ...options
    })
    const server = Http.createServer()
    const seen: Array<{ readonly method: string; readonly url: string; readonly headers: Http.IncomingHttpHeaders; readonly socket: import("node:net").Socket }> = []
    server.on("request", (request: Http.IncomingMessage) =>
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, socket: request.socket }))
    yield* Layer.build(
      HttpServer.serve(route.router).pipe(Layer.provide(NodeHttpServer.layer(() => server, { host: "127.0.0.1", port: 0 })))
    )
    const port = (server.address() as AddressInfo).port
    const connections = () => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))))
    return { route, server, seen, connections, manifest: m, url: (path: string) => `http://127.0.0.1:${port}${path}`, port }
  })

const line = (text: string) => `${JSON.stringify({ type: "delta", text })}\n`

/** A request body the test writes to while the response is read. */
const pushBody = () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  return {
    body,
    send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close()
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

const openFds = () => readdirSync("/proc/self/fd").length
/** The descriptor count once it has not changed for 250 ms (connections of earlier tests close asynchronously). */
const steadyFds = () =>
  Effect.promise(async () => {
    let last = openFds()
    for (let same = 0; same < 5;) {
      await new Promise((r) => setTimeout(r, 50))
      const now = openFds()
      same = now === last ? same + 1 : 0
      last = now
    }
    return last
  })

describe("POST /v1/stream/answer", () => {
  it.scoped("NDJSON: the response streams while the request body is still being written", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const body = pushBody()
      const events = yield* Effect.promise(async () => {
        body.send(line(sampleBody))
        const response = await fetch(s.url("/v1/stream/answer?run=run-1"), {
          method: "POST",
          headers: { ...bearer(READER), "content-type": "application/x-ndjson" },
          body: body.body,
          duplex: "half"
        } as RequestInit)
        assert.strictEqual(response.status, 200)
        assert.strictEqual(response.headers.get("content-type"), "application/x-ndjson; charset=utf-8")
        assert.match(response.headers.get(StreamRoute.streamIdHeader) ?? "", /^[0-9a-f-]{36}$/)
        const reader = ndjsonReader(response)
        // The body's first line has been verified and answered before the rest is sent.
        const first = await reader.next()
        assert.deepStrictEqual(first?.type === "delta" && first.text, sampleStreamed)
        body.send(line(`EVI1\nMANIFEST ${s.manifest.digest}\n${evidence.c1}\nc2|2|"Invented stock figures."\n`))
        const mid = await reader.until("retraction")
        body.send(line(`${evidence.c2s1}\n${evidence.c3}\nEND_EVI1\n`))
        body.end()
        return [first!, ...mid, ...(await reader.until("done"))]
      })
      assert.deepStrictEqual(events.map((e) => e.id), events.map((_, i) => i + 1))
      assert.deepStrictEqual(events.map((e) => e.type), ["delta", "citation", "retraction", "citation", "citation", "done"])
      const done = events.at(-1) as Extract<Event, { type: "done" }>
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual([done.summary.citationsVerified, done.summary.citationsRetracted, done.summary.claimsRemoved], [3, 1, 0])
    }))

  it.scoped("refusals: 401 without a token, 403 for another run's token, 400 for a bad query, 404 for an unknown stream", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const post = (path: string, headers: Record<string, string>) =>
        Effect.promise(async () => {
          const response = await fetch(s.url(path), { method: "POST", headers, body: line("x") })
          return { status: response.status, body: await response.json() as Record<string, unknown> }
        })
      const none = yield* post("/v1/stream/answer?run=run-1", {})
      assert.deepStrictEqual(none, { status: 401, body: { _tag: "Unauthorized", reason: "missing" } })
      const wrong = yield* post("/v1/stream/answer?run=run-1", bearer("nobody"))
      assert.deepStrictEqual(wrong, { status: 401, body: { _tag: "Unauthorized", reason: "unknown-token" } })
      const other = yield* post("/v1/stream/answer?run=run-1", bearer(OTHER))
      assert.deepStrictEqual(other, { status: 403, body: { _tag: "Forbidden", action: "read-run", runId: "run-1" } })
      // A run the token may not read is 403 whether or not it exists: nothing is disclosed.
      const unknown = yield* post("/v1/stream/answer?run=run-9", bearer(READER))
      assert.deepStrictEqual(unknown, { status: 403, body: { _tag: "Forbidden", action: "read-run", runId: "run-9" } })
      const bad = yield* post("/v1/stream/answer?run=../etc", bearer(READER))
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body["_tag"], "StreamRequestInvalid")
      const badMode = yield* post("/v1/stream/answer?run=run-1&mode=lenient", bearer(READER))
      assert.deepStrictEqual([badMode.status, badMode.body], [400, { _tag: "StreamRequestInvalid", parameter: "mode", detail: "must be drop or reject" }])
      const gone = yield* Effect.promise(async () => {
        const response = await fetch(s.url("/v1/stream/answer/00000000-0000-0000-0000-000000000000"), { headers: bearer(READER) })
        return { status: response.status, body: await response.json() }
      })
      assert.deepStrictEqual(gone, {
        status: 404,
        body: { _tag: "StreamGone", streamId: "00000000-0000-0000-0000-000000000000", reason: "unknown-stream", oldestRetained: null }
      })
      // Nothing was opened for a refused request.
      assert.strictEqual(s.route.retainedStreams(), 0)
    }))

  it.scoped("an unknown run is 404 for a token that may read every run", () =>
    Effect.gen(function*() {
      const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
      const m = yield* manifest
      const all = Auth.make([{ sha256: tokenDigest("all"), runs: "*", capture: false }])
      const route = StreamRoute.make({
        authenticate: (headers, runId) => all.authenticate(headers, Access.readRun(runId)),
        run: (runId) => (runId === "run-1" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId })))
      })
      const server = Http.createServer()
      yield* Layer.build(HttpServer.serve(route.router).pipe(Layer.provide(NodeHttpServer.layer(() => server, { host: "127.0.0.1", port: 0 }))))
      const port = (server.address() as AddressInfo).port
      const result = yield* Effect.promise(async () => {
        const response = await fetch(`http://127.0.0.1:${port}/v1/stream/answer?run=run-9`, { method: "POST", headers: bearer("all"), body: line("x") })
        return { status: response.status, body: await response.json() }
      })
      assert.deepStrictEqual(result, { status: 404, body: { _tag: "RunNotFound", runId: "run-9" } })
    }))

  it.scoped("SSE: a real EventSource follows a live stream, reconnects with Last-Event-ID after its connection drops, and misses nothing", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const body = pushBody()
      const result = yield* Effect.promise(async () => {
        body.send(line(sampleBody))
        const response = await fetch(s.url("/v1/stream/answer?run=run-1"), {
          method: "POST",
          headers: { ...bearer(READER), accept: "text/event-stream" },
          body: body.body,
          duplex: "half"
        } as RequestInit)
        assert.strictEqual(response.headers.get("content-type"), "text/event-stream; charset=utf-8")
        const id = response.headers.get(StreamRoute.streamIdHeader)!
        // The POST's own SSE body is read to the end in the background.
        const posted = response.text()

        const received: Array<{ readonly lastEventId: string; readonly event: Event }> = []
        const EventSource = await loadEventSource()
        const source = new EventSource(s.url(`/v1/stream/answer/${id}`), {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...bearer(READER) } })
        })
        const waitFor = (predicate: () => boolean, what: string) =>
          new Promise<void>((resolve, reject) => {
            const started = Date.now()
            const tick = () => (predicate() ? resolve() : Date.now() - started > 5_000 ? reject(new Error(`timed out: ${what}`)) : setTimeout(tick, 10))
            tick()
          })
        source.addEventListener("message", (message) => {
          const event = AnswerStream.decodeEvent(message.data)
          received.push({ lastEventId: message.lastEventId, event })
          if (event.type === "done") source.close()
        })
        await waitFor(() => received.length >= 1, "the first delta")
        body.send(line(`EVI1\nMANIFEST ${s.manifest.digest}\n${evidence.c1}\n`))
        await waitFor(() => received.length >= 2, "the first citation")
        // Drop the follower's connection from the server side: the EventSource reconnects by itself.
        const gets = () => s.seen.filter((r) => r.method === "GET")
        assert.strictEqual(gets().length, 1)
        gets()[0]!.socket.destroy()
        body.send(line(`${evidence.c2s2}\n${evidence.c2s1}\n`))
        await waitFor(() => gets().length === 2, "a reconnect")
        body.send(line(`c3|3|"The fleet shrank"\nEND_EVI1\n`))
        body.end()
        await waitFor(() => received.at(-1)?.event.type === "done", "done")
        return { received, reconnect: gets()[1]!, posted: await posted, id }
      })
      const ids = result.received.map((r) => r.event.id)
      assert.deepStrictEqual(ids, ids.map((_, i) => i + 1), "no gap and no repeat across the reconnect")
      assert.deepStrictEqual(result.received.map((r) => r.lastEventId), ids.map(String))
      assert.strictEqual(result.reconnect.headers["last-event-id"], "2")
      assert.deepStrictEqual(result.received.map((r) => r.event.type), ["delta", "citation", "citation", "citation", "retraction", "done"])
      // The POST's SSE body carries the same events, in SSE framing, after the retry hint.
      assert.isTrue(result.posted.startsWith(`retry: ${StreamRoute.sseRetryMs}\n\nid: 1\ndata: {"id":1,"type":"delta"`))
      assert.strictEqual(result.posted.split("\n\n").filter((block) => block.startsWith("id: ")).length, 6)

      // A late reader resumes after any id it names, here with the EventSource-style query parameter.
      const late = yield* Effect.promise(async () => {
        const response = await fetch(s.url(`/v1/stream/answer/${result.id}?lastEventId=4`), { headers: bearer(READER) })
        return (await response.text()).trim().split("\n").map(AnswerStream.decodeEvent)
      })
      assert.deepStrictEqual(late.map((e) => [e.id, e.type]), [[5, "retraction"], [6, "done"]])
    }))

  it.scoped("resuming before the oldest retained event is 410 StreamGone", () =>
    Effect.gen(function*() {
      const s = yield* serve({ retention: { maxEvents: 3 } })
      const id = yield* Effect.promise(async () => {
        const response = await fetch(s.url("/v1/stream/answer?run=run-1"), {
          method: "POST",
          headers: bearer(READER),
          body: sample(s.manifest.digest).split("\n").map((l) => line(`${l}\n`)).join("")
        })
        await response.text()
        return response.headers.get(StreamRoute.streamIdHeader)!
      })
      const resumed = yield* Effect.promise(async () => {
        const old = await fetch(s.url(`/v1/stream/answer/${id}`), { headers: { ...bearer(READER), "last-event-id": "1" } })
        const ok = await fetch(s.url(`/v1/stream/answer/${id}`), { headers: { ...bearer(READER), "last-event-id": "6" } })
        const other = await fetch(s.url(`/v1/stream/answer/${id}`), { headers: { ...bearer(OTHER), "last-event-id": "6" } })
        return { old: [old.status, await old.json()], ok: [ok.status, await ok.text()], other: other.status }
      })
      assert.strictEqual(resumed.old[0], 410)
      assert.deepStrictEqual(resumed.old[1], { _tag: "StreamGone", streamId: id, reason: "not-retained", oldestRetained: 6 })
      assert.strictEqual(resumed.ok[0], 200)
      assert.deepStrictEqual((resumed.ok[1] as string).trim().split("\n").map((t) => AnswerStream.decodeEvent(t).type), ["citation", "done"])
      assert.strictEqual(resumed.other, 403)
    }))

  it.scoped("a client that disconnects mid-stream frees its socket, its file descriptors and its stream", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      // Settle: no connection open, the descriptor count steady.
      yield* waitUntil(() => s.server.listening, "listening")
      const before = { fds: yield* steadyFds(), connections: yield* Effect.promise(s.connections), live: s.route.liveStreams() }
      assert.deepStrictEqual([before.connections, before.live], [0, 0])

      const during = yield* Effect.promise(() =>
        new Promise<{ readonly connections: number; readonly live: number; readonly fds: number }>((resolve, reject) => {
          const request = Http.request({
            host: "127.0.0.1",
            port: s.port,
            method: "POST",
            path: "/v1/stream/answer?run=run-1",
            headers: { ...bearer(READER), "content-type": "application/x-ndjson" },
            agent: false
          })
          request.on("error", () => {})
          request.on("response", (response) => {
            response.once("data", async () => {
              // One event arrived while the body is still open: the stream is live. Now vanish.
              const state = { connections: await s.connections(), live: s.route.liveStreams(), fds: openFds() }
              request.destroy()
              resolve(state)
            })
            response.on("error", () => {})
          })
          request.on("timeout", () => reject(new Error("no response")))
          request.write(line(sampleBody))
        })
      )
      assert.deepStrictEqual([during.connections, during.live], [1, 1])
      assert.isAbove(during.fds, before.fds)
      yield* waitUntil(() => s.route.liveStreams() === 0, "the stream ended on the server")
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 3_000
        while ((await s.connections()) !== 0 || openFds() !== before.fds) {
          if (Date.now() > deadline) throw new Error(`still open: ${await s.connections()} connections, ${openFds()} fds (before ${before.fds})`)
          await new Promise((r) => setTimeout(r, 10))
        }
      })
      assert.strictEqual(openFds(), before.fds)
      assert.strictEqual(yield* Effect.promise(s.connections), 0)
    }))

  it.scoped("a line past the line limit is a typed error event, then done, then the response ends", () =>
    Effect.gen(function*() {
      const s = yield* serve({ limits: { maxLineBytes: 256 } })
      const events = yield* Effect.promise(async () => {
        const response = await fetch(s.url("/v1/stream/answer?run=run-1"), {
          method: "POST",
          headers: bearer(READER),
          body: line("Short.") + line("x".repeat(300))
        })
        return (await response.text()).trim().split("\n").map(AnswerStream.decodeEvent)
      })
      assert.deepStrictEqual(events.map((e) => e.type), ["delta", "error", "done"])
      const error = events[1] as Extract<Event, { type: "error" }>
      assert.deepStrictEqual(JSON.parse(AnswerStream.encodeEvent(error)), { id: 2, type: "error", error: { _tag: "StreamLimitExceeded", limit: "line-length", max: 256, received: 326 } })
    }))
})
