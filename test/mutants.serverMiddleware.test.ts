/**
 * The service's own request handling, without a port: the middleware (`Server.middleware`) around a
 * small app, run as a web handler, and the health endpoints over the real API layer. Exact answers:
 * 413 before the body is read, 411 for a body of unknown length outside the streaming routes, 503
 * at the deadline, the platform's own 404 and 500, the request id on every answer and in the log
 * line, and readiness (draining, a run root that cannot be used).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import { Effect, HashMap, List, Logger } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import { middleware } from "../src/server/Server.js"
import { webApi } from "./serverInProcess.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface Line {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  readonly spans: ReadonlyArray<string>
}

/** The one configured token; `send` presents it unless the request names its own Authorization. */
const token = "citegate-middleware-test-token"

/** A small app behind the middleware, with limits of 100 bytes and `timeoutMs`; every log line kept. */
const served = <E>(app: HttpApp.Default<E>, timeoutMs = 30_000) =>
  Effect.gen(function*() {
    const config = yield* Config.decode({
      sources: ["http://127.0.0.1:9/unused.txt"],
      labels: ["x"],
      server: { tokens: [{ sha256: tokenDigest(token), runs: [], capture: false }], maxBodyBytes: 100, requestTimeoutMs: timeoutMs }
    })
    const lines: Array<Line> = []
    const recorder = Logger.make(({ annotations, logLevel, message, spans }) => {
      lines.push({
        level: logLevel.label,
        message,
        annotations: Object.fromEntries(HashMap.toEntries(annotations)),
        spans: List.toArray(spans).map((span) => span.label)
      })
    })
    const runtime = yield* Effect.runtime<never>().pipe(Effect.provide(Logger.replace(Logger.defaultLogger, recorder)))
    const handler = HttpApp.toWebHandlerRuntime(runtime)(middleware(Config.resolvedServer(config))(app as HttpApp.Default))
    const send = (pathname: string, init: RequestInit = {}) =>
      Effect.promise(async () => {
        const headers = new Headers(init.headers)
        if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`)
        if (headers.get("authorization") === "") headers.delete("authorization")
        const response = await handler(new Request(`http://citegate.invalid${pathname}`, { ...init, headers }))
        return { status: response.status, headers: response.headers, text: await response.text() }
      })
    return { send, lines }
  })

/** Reads the body and says how long it was. */
const reader = (calls: { count: number }) =>
  Effect.gen(function*() {
    calls.count++
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    return HttpServerResponse.text(`read ${text.length}`)
  })

/** A body with its Content-Length (a web Request leaves the header to the transport otherwise). */
const sized = (text: string): RequestInit => ({
  method: "POST",
  body: text,
  headers: { "content-length": String(Buffer.byteLength(text)) }
})

/** A body of unknown length: a stream, sent as chunked. */
const streamed = (text: string): RequestInit => ({
  method: "POST",
  body: new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text))
      controller.close()
    }
  }),
  headers: { "transfer-encoding": "chunked" },
  duplex: "half"
} as RequestInit)

describe("service middleware: the body limit", () => {
  it.live("a declared body over the limit is 413 PayloadTooLarge before the app runs; the connection closes", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const { send } = yield* served(reader(calls))
      const answer = yield* send("/v1/verify", sized("x".repeat(101)))
      assert.strictEqual(answer.status, 413)
      assert.deepStrictEqual(JSON.parse(answer.text), { _tag: "PayloadTooLarge", maxBytes: 100, declaredBytes: 101 })
      assert.strictEqual(answer.headers.get("connection"), "close")
      assert.match(answer.headers.get("x-request-id") ?? "", uuid)
      assert.strictEqual(calls.count, 0)
    }))

  it.live("a declared body of exactly the limit reaches the app, read whole", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const { send } = yield* served(reader(calls))
      const answer = yield* send("/v1/verify", sized("x".repeat(100)))
      assert.deepStrictEqual([answer.status, answer.text], [200, "read 100"])
      assert.strictEqual(answer.headers.get("connection"), null)
      assert.match(answer.headers.get("x-request-id") ?? "", uuid)
      assert.strictEqual(calls.count, 1)
    }))

  it.live("a body of unknown length is 411 LengthRequired, except on the streaming routes (query string aside)", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const { send } = yield* served(reader(calls))
      const refused = yield* send("/v1/verify", streamed("abc"))
      assert.strictEqual(refused.status, 411)
      assert.deepStrictEqual(JSON.parse(refused.text), { _tag: "LengthRequired", maxBytes: 100 })
      assert.strictEqual(refused.headers.get("connection"), "close")
      assert.strictEqual(calls.count, 0)
      // The path decides, not the query: `?/v1/stream/` does not make a route a streaming one.
      const query = yield* send("/v1/verify?next=/v1/stream/answer", streamed("abc"))
      assert.strictEqual(query.status, 411)
      const stream = yield* send("/v1/stream/answer?format=ndjson", streamed("abcd"))
      assert.deepStrictEqual([stream.status, stream.text], [200, "read 4"])
      assert.strictEqual(calls.count, 1)
    }))

  it.live("a request without a body passes", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const { send } = yield* served(reader(calls))
      const answer = yield* send("/v1/runs/x")
      assert.deepStrictEqual([answer.status, answer.text], [200, "read 0"])
    }))
})

describe("service middleware: deadline, platform answers, logging", () => {
  it.live("an app past the deadline is 503 RequestTimeout, and the connection closes", () =>
    Effect.gen(function*() {
      const { lines, send } = yield* served(Effect.never, 100)
      const answer = yield* send("/v1/verify", { method: "POST", body: "{}" })
      assert.strictEqual(answer.status, 503)
      assert.deepStrictEqual(JSON.parse(answer.text), { _tag: "RequestTimeout", timeoutMs: 100 })
      assert.strictEqual(answer.headers.get("connection"), "close")
      assert.deepStrictEqual(lines.filter((line) => line.level === "ERROR"), [])
    }))

  it.live("an unknown route is the platform's 404, not logged as an error; a defect is 500 and logged", () =>
    Effect.gen(function*() {
      const missing = yield* served(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => new HttpServerError.RouteNotFound({ request }))
      )
      const notFound = yield* missing.send("/nowhere")
      assert.strictEqual(notFound.status, 404)
      assert.match(notFound.headers.get("x-request-id") ?? "", uuid)
      assert.deepStrictEqual(missing.lines.filter((line) => line.level === "ERROR"), [])

      const broken = yield* served(Effect.die(new Error("boom")))
      const failed = yield* broken.send("/v1/verify", { method: "POST", body: "{}" })
      assert.strictEqual(failed.status, 500)
      assert.match(failed.headers.get("x-request-id") ?? "", uuid)
      const errors = broken.lines.filter((line) => line.level === "ERROR")
      assert.strictEqual(errors.length, 1)
      assert.deepStrictEqual((errors[0]!.message as Array<unknown>)[0], "request failed")
    }))

  it.live("one log line per request: method, path without the query, status, time; under the request id and span", () =>
    Effect.gen(function*() {
      const { lines, send } = yield* served(Effect.succeed(HttpServerResponse.text("ok", { status: 201 })))
      const answer = yield* send("/v1/runs?secret=1", { method: "POST", body: "" })
      assert.strictEqual(answer.status, 201)
      const requestId = answer.headers.get("x-request-id")
      assert.match(requestId ?? "", uuid)
      const info = lines.filter((line) => line.level === "INFO")
      assert.strictEqual(info.length, 1)
      const { ms, ...rest } = info[0]!.annotations
      assert.deepStrictEqual({ message: info[0]!.message, annotations: rest, spans: info[0]!.spans }, {
        message: ["request"],
        annotations: { requestId, method: "POST", path: "/v1/runs", status: 201 },
        spans: ["request"]
      })
      assert.isTrue(typeof ms === "number" && Number.isInteger(ms) && ms >= 0 && ms < 60_000, `ms: ${String(ms)}`)
      // Every request its own id.
      const again = yield* send("/v1/runs", { method: "POST", body: "" })
      assert.notStrictEqual(again.headers.get("x-request-id"), requestId)
    }))
})

describe("health endpoints", () => {
  it.scoped("healthz is ok; readyz is ok when the run root can be created and written (made: the last test)", () =>
    Effect.gen(function*() {
      const api = yield* webApi(false)
      assert.deepStrictEqual(yield* api.get("/healthz"), { status: 200, json: { status: "ok" } })
      assert.deepStrictEqual(yield* api.get("/readyz"), { status: 200, json: { status: "ok" } })
    }))

  it.scoped("readyz is 503 NotReady while draining, and when the run root cannot be made", () =>
    Effect.gen(function*() {
      const draining = yield* webApi(true)
      assert.deepStrictEqual(yield* draining.get("/readyz"), { status: 503, json: { _tag: "NotReady", reason: "draining" } })
      assert.deepStrictEqual(yield* draining.get("/healthz"), { status: 200, json: { status: "ok" } })

      // A run root under a regular file can never be created.
      const blocked = yield* webApi(false, (work) =>
        Effect.promise(async () => {
          await fsp.writeFile(path.join(work, "file"), "")
          return path.join(work, "file", "runs")
        }))
      assert.deepStrictEqual(yield* blocked.get("/readyz"), {
        status: 503,
        json: { _tag: "NotReady", reason: "run-root-unusable" }
      })
    }))

  it.scoped("readyz creates a missing run root, parents included", () =>
    Effect.gen(function*() {
      let root = ""
      const api = yield* webApi(false, (work) => Effect.sync(() => (root = path.join(work, "a", "b", "runs"))))
      assert.deepStrictEqual(yield* api.get("/readyz"), { status: 200, json: { status: "ok" } })
      const stat = yield* Effect.promise(() => fsp.stat(root))
      assert.isTrue(stat.isDirectory())
      assert.strictEqual(stat.mode & 0o777, 0o700)
    }))
})

/** A body that sends `first` and then never ends (a client that stalls mid-upload). */
const stalled = (declared: number): RequestInit => ({
  method: "POST",
  body: new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("x"))
    }
  }),
  headers: { "content-length": String(declared) },
  duplex: "half"
} as RequestInit)

describe("service middleware: the body is read within the deadline", () => {
  it.live("a stalled body is 503 at the deadline even when the route would not read it", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const ignoring = Effect.sync(() => {
        calls.count++
        return HttpServerResponse.text("not read")
      })
      const { send } = yield* served(ignoring, 200)
      const answer = yield* send("/v1/verify", stalled(10))
      assert.strictEqual(answer.status, 503)
      assert.deepStrictEqual(JSON.parse(answer.text), { _tag: "RequestTimeout", timeoutMs: 200 })
      assert.strictEqual(calls.count, 0, "the route never ran: the body came first")
    }))

  it.live("a streaming route is not held up by its body: it reads the stream itself, as it arrives", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const ignoring = Effect.sync(() => {
        calls.count++
        return HttpServerResponse.text("streaming")
      })
      const { send } = yield* served(ignoring, 200)
      const answer = yield* send("/v1/stream/answer", stalled(10))
      assert.deepStrictEqual([answer.status, answer.text, calls.count], [200, "streaming", 1])
    }))
})

describe("service middleware: authentication before the body", () => {
  it.live("a body without a configured token is 401 before a byte of it is read; a body of unknown length closes the connection", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const { send } = yield* served(reader(calls))
      for (const [authorization, reason] of [["", "missing"], ["Bearer not-configured", "unknown-token"], ["Basic eDp5", "malformed"]] as const) {
        const sizedBody = sized("x".repeat(50))
        for (const init of [sizedBody, streamed("abc")]) {
          const answer = yield* send("/v1/stream/answer", { ...init, headers: { ...init.headers as Record<string, string>, authorization } })
          assert.strictEqual(answer.status, 401)
          assert.deepStrictEqual(JSON.parse(answer.text), { _tag: "Unauthorized", reason })
          // One of declared length (at most the limit) is discarded as it arrives, so the client reads the answer.
          assert.strictEqual(answer.headers.get("connection"), init === sizedBody ? null : "close")
        }
      }
      assert.strictEqual(calls.count, 0)
      // The same body with the token is read by the route.
      assert.deepStrictEqual(yield* Effect.map(send("/v1/verify", sized("x".repeat(50))), (a) => [a.status, a.text]), [200, "read 50"])
    }))
})
