/**
 * The service's shutdown on a real listening server (127.0.0.1): releasing the layer stops
 * accepting connections, waits for open requests to end (not longer), and past the grace period
 * closes what is left with a warning. A request is held open by a client that sends its headers
 * and not yet its declared body.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Logger } from "effect"
import * as net from "node:net"
import { startService, tokens } from "./serverSupport.js"

/** A connection that sends a request's head with a declared body of 5 bytes, and not the body. */
const heldRequest = (port: number) =>
  Effect.async<net.Socket>((resume) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(
        `POST /v1/verify/report HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.admin}\r\n` +
          "Content-Type: application/json\r\nContent-Length: 5\r\n\r\n"
      )
      resume(Effect.succeed(socket))
    })
    // Read (and drop) the answer: a socket with unread data never reports its close.
    socket.resume()
  })

const closed = (socket: net.Socket) =>
  Effect.async<void>((resume) => {
    if (socket.closed) return resume(Effect.void)
    socket.once("close", () => resume(Effect.void))
  })

const connectRefused = (port: number) =>
  Effect.async<string>((resume) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed("connected"))
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code ?? "error")))
  })

const portOf = (base: string) => Number(new URL(base).port)

const recording = () => {
  const lines: Array<{ readonly level: string; readonly message: unknown }> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel.label, message })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("service shutdown", () => {
  it.live("open requests hold the shutdown, new connections are refused meanwhile, and the last one's end releases it at once", () => {
    const log = recording()
    return Effect.gen(function*() {
      const service = yield* startService({
        sources: ["http://127.0.0.1:9/unused.txt"],
        server: { shutdownGraceMs: 60_000, requestTimeoutMs: 60_000 }
      })
      const port = portOf(service.base)
      const first = yield* heldRequest(port)
      const second = yield* heldRequest(port)
      // Let the server see the requests' heads (the bodies are still to come).
      yield* Effect.sleep("1 second")
      const closing = yield* Effect.fork(service.close)
      yield* Effect.sleep("500 millis")
      assert.isNull(closing.unsafePoll(), "the shutdown waits for the open requests")
      assert.strictEqual(yield* connectRefused(port), "ECONNREFUSED", "no new connection while draining")
      // One body arrives: one request ends, the other still holds the shutdown.
      first.write("{}   ")
      yield* closed(first).pipe(Effect.timeout("10 seconds"))
      yield* Effect.sleep("500 millis")
      assert.isNull(closing.unsafePoll(), "the shutdown waits for the request still open")
      // The last body arrives: the wait ends with it (well before the 60 s grace).
      second.write("{}   ")
      const done = yield* Fiber.join(closing).pipe(Effect.timeout("10 seconds"), Effect.either)
      assert.isTrue(done._tag === "Right", "released when the last request ended")
      yield* closed(second)
      assert.deepStrictEqual(log.lines.filter((line) => line.level === "WARN"), [])
    }).pipe(Effect.provide(log.layer), Effect.scoped)
  })

  it.live("past the grace period the open connections are closed, with a warning", () => {
    const log = recording()
    return Effect.gen(function*() {
      const service = yield* startService({
        sources: ["http://127.0.0.1:9/unused.txt"],
        server: { shutdownGraceMs: 300, requestTimeoutMs: 60_000 }
      })
      const socket = yield* heldRequest(portOf(service.base))
      yield* Effect.sleep("1 second")
      yield* service.close
      yield* closed(socket).pipe(Effect.timeout("10 seconds"))
      assert.deepStrictEqual(log.lines.filter((line) => line.level === "WARN").map((line) => line.message), [
        ["shutdown grace elapsed; closing open connections"]
      ])
    }).pipe(Effect.provide(log.layer), Effect.scoped)
  })

  it.live("the OpenAPI document is served at /openapi.json", () =>
    Effect.gen(function*() {
      const service = yield* startService({ sources: ["http://127.0.0.1:9/unused.txt"] })
      const response = yield* Effect.promise(() => fetch(`${service.base}/openapi.json`))
      assert.strictEqual(response.status, 200)
      const document = yield* Effect.promise(() => response.json() as Promise<{ openapi: string; paths: Record<string, unknown> }>)
      assert.match(document.openapi, /^3\./)
      assert.deepStrictEqual(Object.keys(document.paths).sort(), [
        "/healthz",
        "/readyz",
        "/v1/runs",
        "/v1/runs/{id}",
        "/v1/runs/{id}/audits",
        "/v1/runs/{id}/captures/{sha256}/body",
        "/v1/runs/{id}/documents",
        "/v1/runs/{id}/events",
        "/v1/runs/{id}/reviews",
        "/v1/session",
        "/v1/stream/answer",
        "/v1/stream/answer/{id}",
        "/v1/verify/answer",
        "/v1/verify/report"
      ])
    }).pipe(Effect.scoped))
})

