import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as zlib from "node:zlib"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type * as Dispatcher from "../src/capture/Dispatcher.js"
import { sha256Of, type SourceUrl } from "../src/Domain.js"
import {
  AddressRejected,
  AmbiguousHeader,
  CaptureExists,
  ConnectionFailed,
  InvalidBudget,
  InvalidEncoding,
  NotApproved,
  RedirectRejected,
  Timeout,
  TooLarge,
  TruncatedBody,
  UnexpectedStatus,
  UnsupportedContentEncoding,
  UnsupportedContentType
} from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import { version } from "../src/version.js"
import { plainText, type ServerState, testServer, waitUntil } from "./httpServer.js"
import { fixtureText, recordPath, snapshotDirectory, tempDirectory } from "./support.js"

/**
 * Every connection the server accepted is closed, and the request was sent once. (After an
 * abort, undici may open one idle replacement connection, which carries no request.)
 */
const socketsClosed = (server: ServerState, timeoutMs = 3_000) =>
  Effect.zipRight(
    waitUntil(() => server.connections >= 1 && server.closed === server.connections, "every socket is closed", timeoutMs),
    Effect.sync(() => assert.strictEqual(server.requests.length, 1))
  )

/** The Capture service over a fresh run directory, its dispatcher alive for the test's scope. */
const captureService = (options: Capture.CaptureOptions, directory?: string) =>
  Effect.gen(function*() {
    const runDirectory = directory ?? (yield* tempDirectory)
    const context = yield* Layer.build(
      Capture.layer(options).pipe(Layer.provide(CaptureStore.layerFileSystem({ directory: runDirectory })))
    )
    return { capture: Context.get(context, Capture.Capture), directory: runDirectory }
  }).pipe(Effect.orDie)

/** Test mode capture of the given approved sources. */
const loopback = (approved: ReadonlyArray<string>, extra: Partial<Capture.CaptureOptions> = {}) =>
  captureService({ approved, allowLoopbackHttp: true, timeoutMs: 5_000, ...extra })

const captureFailure = (options: Capture.CaptureOptions, source: string) =>
  Effect.gen(function*() {
    const { capture, directory } = yield* captureService(options)
    const error = yield* Effect.flip(capture.capture(source))
    // A failed capture writes nothing and leaves no temporary file behind.
    assert.deepStrictEqual(yield* snapshotDirectory(directory), [], "run directory must stay empty")
    return error
  })

const failureFrom = (server: ServerState, path = "/source.txt", extra: Partial<Capture.CaptureOptions> = {}) =>
  captureFailure({ approved: [server.url(path)], allowLoopbackHttp: true, timeoutMs: 5_000, ...extra }, server.url(path))

describe("Capture: success", () => {
  it.scopedLive("captures approved plain text, and the Verifier accepts an excerpt of it end to end", () =>
    Effect.gen(function*() {
      const text = fixtureText("q3-sales.txt")
      const server = yield* testServer(plainText(text))
      const source = server.url("/q3-sales.txt")
      const { capture, directory } = yield* loopback([source])
      const ref = yield* capture.capture(source)
      assert.strictEqual(ref.sha256, sha256Of(Buffer.from(text, "utf8")))
      assert.strictEqual(ref.byteLength, Buffer.byteLength(text))
      const headers = server.requests[0]!.headers
      assert.strictEqual(headers["user-agent"], `citegate/${version}`)
      assert.strictEqual(headers["accept-encoding"], "identity")
      assert.isUndefined(headers["traceparent"])
      assert.isUndefined(headers["b3"])
      assert.isUndefined(headers["cookie"])

      const gate = yield* Effect.provide(
        Gate.Gate,
        Gate.layer({ runDirectory: directory, config: { sources: [source], labels: ["q3_net_sales"] } })
      )
      const report = yield* gate.check({
        facts: [{
          state: "cited",
          label: "q3_net_sales",
          source,
          captureSha256: ref.sha256,
          snippet: "Net sales for Q3 2026 were 4,210 units"
        }]
      })
      assert.strictEqual(report.outcome, "grounded")
    }))

  it.scopedLive("keeps a BOM in the text so the digest is the digest of the body bytes", () =>
    Effect.gen(function*() {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("café\n", "utf8")])
      const server = yield* testServer(plainText(body, "text/plain"))
      const source = server.url("/bom.txt")
      const { capture, directory } = yield* loopback([source])
      const ref = yield* capture.capture(source)
      assert.strictEqual(ref.sha256, sha256Of(body))
      const record = JSON.parse(yield* Effect.promise(() => fsp.readFile(recordPath(directory, source), "utf8")))
      assert.strictEqual(record.text, "\uFEFFcafé\n")
      assert.strictEqual(record.contentType, "text/plain")
      assert.strictEqual(Buffer.from(record.text, "utf8").equals(body), true)
    }))

  it.scopedLive("decodes a character split across chunks", () =>
    Effect.gen(function*() {
      const bytes = Buffer.from("price: 5 €", "utf8")
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write(bytes.subarray(0, bytes.length - 2))
        setTimeout(() => res.end(bytes.subarray(bytes.length - 2)), 50)
      })
      const source = server.url("/split.txt")
      const { capture } = yield* loopback([source])
      const ref = yield* capture.capture(source)
      assert.strictEqual(ref.sha256, sha256Of(bytes))
    }))

  it.scopedLive("accepts text/plain with charset utf-8 in any case, quoted or not", () =>
    Effect.gen(function*() {
      for (const contentType of ["TEXT/PLAIN; Charset=\"UTF-8\"", "text/plain;charset=utf-8", "text/plain"]) {
        const server = yield* testServer(plainText("ok", contentType))
        const source = server.url("/ok.txt")
        const { capture } = yield* loopback([source])
        yield* capture.capture(source)
      }
    }))

  it.scopedLive("captureAll gives every source its own result and reports progress; failures lose nothing", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        if (req.url === "/missing.txt") {
          res.writeHead(404, { "content-type": "text/plain" })
          return res.end("no")
        }
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(`body of ${req.url}`)
      })
      const sources = ["/a.txt", "/missing.txt", "/b.txt", "/c.txt"].map(server.url)
      const { capture, directory } = yield* loopback(sources, { concurrency: 2 })
      const events: Array<string> = []
      const results = yield* capture.captureAll([...sources, "https://not-approved.test/x"], {
        onEvent: (event) => Effect.sync(() => events.push(`${event._tag} ${event.source}`))
      })
      assert.deepStrictEqual(results.map((r) => r.source), [...sources, "https://not-approved.test/x"])
      assert.deepStrictEqual(results.map((r) => Either.isRight(r.result)), [true, false, true, true, false])
      const failed = results[1]!.result
      assert.isTrue(Either.isLeft(failed) && failed.left instanceof UnexpectedStatus)
      assert.strictEqual((yield* snapshotDirectory(directory)).length, 3)
      assert.strictEqual(events.filter((e) => e.startsWith("Started")).length, 5)
      assert.strictEqual(events.filter((e) => e.startsWith("Captured")).length, 3)
      assert.strictEqual(events.filter((e) => e.startsWith("Failed")).length, 2)
    }))
})

describe("Capture: URL policy, before any connection", () => {
  it.scopedLive("NotApproved: a URL outside the approved set", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("x"))
      const error = yield* captureFailure({ approved: [server.url("/a")], allowLoopbackHttp: true }, server.url("/b"))
      assert.instanceOf(error, NotApproved)
      assert.strictEqual(error.reason, "not-in-approved-set")
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("NotApproved: non-canonical forms are rejected, not normalised, even when listed as approved", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("x"))
      const p = server.port
      const forms = [
        `HTTP://127.0.0.1:${p}/a`,
        `http://127.0.0.1:${p}/a/../b`,
        `http://127.0.0.1:${p}/a\tb`,
        `http:\\\\127.0.0.1:${p}\\a`,
        `http://127.0.0.1:80/a`,
        `http://127.0.0.1:${p}`,
        ` http://127.0.0.1:${p}/a`,
        `http://0x7f.0.0.1:${p}/a`
      ]
      for (const form of forms) {
        const error = yield* captureFailure({ approved: [form], allowLoopbackHttp: true }, form)
        assert.instanceOf(error, NotApproved, form)
        assert.strictEqual(error.reason, "not-canonical", form)
      }
      const https = `HTTPS://example.test:443/a`
      const httpsError = yield* captureFailure({ approved: [https] }, https)
      assert.instanceOf(httpsError, NotApproved)
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("NotApproved: userinfo in any form", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("x"))
      for (const form of [`http://user:pw@127.0.0.1:${server.port}/a`, `http://user@127.0.0.1:${server.port}/a`, `http://@127.0.0.1:${server.port}/a`]) {
        const error = yield* captureFailure({ approved: [form], allowLoopbackHttp: true }, form)
        assert.instanceOf(error, NotApproved, form)
        assert.strictEqual(error.reason, "userinfo", form)
      }
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("NotApproved: a fragment in any form", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("x"))
      for (const form of [server.url("/a#section"), server.url("/a#")]) {
        const error = yield* captureFailure({ approved: [form], allowLoopbackHttp: true }, form)
        assert.instanceOf(error, NotApproved, form)
        assert.strictEqual(error.reason, "fragment", form)
      }
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("NotApproved: plain http without test mode, and in test mode to any host but 127.0.0.1", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("x"))
      const source = server.url("/a")
      const error = yield* captureFailure({ approved: [source] }, source)
      assert.instanceOf(error, NotApproved)
      assert.strictEqual(error.reason, "scheme-not-allowed")
      const named = `http://localhost:${server.port}/a`
      const namedError = yield* captureFailure({ approved: [named], allowLoopbackHttp: true }, named)
      assert.instanceOf(namedError, NotApproved)
      assert.strictEqual(namedError.reason, "scheme-not-allowed")
      assert.strictEqual(server.connections, 0)
    }))

  it.effect("InvalidBudget: budgets must be positive integers within bounds", () =>
    Effect.gen(function*() {
      for (const budgets of [{ timeoutMs: 0 }, { maxBytes: 1.5 }, { concurrency: 1_000 }, { maxBytes: -1 }]) {
        const error = yield* Effect.flip(Capture.validateBudgets(budgets))
        assert.instanceOf(error, InvalidBudget)
        assert.strictEqual(error.budget, Object.keys(budgets)[0])
      }
    }))
})

describe("Capture: address policy, at connect time", () => {
  /** A canary on 127.0.0.1 that must never see a connection. */
  const canary = testServer(plainText("canary"))

  const resolvingTo = (...answers: Array<ReadonlyArray<string>>) => {
    const calls: Array<string> = []
    const resolver: Dispatcher.Resolver = async (hostname) => {
      calls.push(hostname)
      const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!
      return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
    }
    return { resolver, calls }
  }

  it.scopedLive("AddressRejected: a host resolving to 127.0.0.1 outside test mode", () =>
    Effect.gen(function*() {
      const server = yield* canary
      const source = `https://canary.test:${server.port}/x`
      const { resolver, calls } = resolvingTo(["127.0.0.1"])
      const error = yield* captureFailure({ approved: [source], resolver }, source)
      assert.instanceOf(error, AddressRejected)
      assert.strictEqual(error.address, "127.0.0.1")
      assert.strictEqual(error.host, "canary.test")
      assert.deepStrictEqual(calls, ["canary.test"])
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("AddressRejected: any disallowed address among the answers, [public, 10.0.0.1]", () =>
    Effect.gen(function*() {
      const server = yield* canary
      const source = `https://canary.test:${server.port}/x`
      const { resolver } = resolvingTo(["93.184.215.14", "10.0.0.1"])
      const error = yield* captureFailure({ approved: [source], resolver }, source)
      assert.instanceOf(error, AddressRejected)
      assert.strictEqual(error.address, "10.0.0.1")
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("AddressRejected: literal IP hosts are checked too", () =>
    Effect.gen(function*() {
      const server = yield* canary
      const { resolver, calls } = resolvingTo(["93.184.215.14"])
      for (const source of [`https://127.0.0.1:${server.port}/x`, `https://[::ffff:7f00:1]:${server.port}/x`]) {
        const error = yield* captureFailure({ approved: [source], resolver }, source)
        assert.instanceOf(error, AddressRejected, source)
      }
      assert.deepStrictEqual(calls, [])
      assert.strictEqual(server.connections, 0)
    }))

  it.scopedLive("a rebinding answer cannot redirect the socket: it goes to the address that was checked", () =>
    Effect.gen(function*() {
      const server = yield* canary
      const source = `https://rebind.test:${server.port}/x`
      // First answer public, every later answer the canary: a check-then-lookup-again client would hit it.
      const { resolver, calls } = resolvingTo(["93.184.215.14"], ["127.0.0.1"])
      // Fault injection: the network is unreachable, so no packet ever leaves this machine.
      const attempted: Array<string> = []
      const socketConnector: Dispatcher.Connector = (options, callback) => {
        attempted.push(options.hostname)
        callback(Object.assign(new Error("connect ENETUNREACH"), { code: "ENETUNREACH" }), null)
      }
      const error = yield* captureFailure({ approved: [source], resolver, socketConnector }, source)
      assert.instanceOf(error, ConnectionFailed)
      assert.match(error.detail, /ENETUNREACH/)
      assert.deepStrictEqual(calls, ["rebind.test"])
      assert.deepStrictEqual(attempted, ["93.184.215.14"])
      assert.strictEqual(server.connections, 0)
    }))
})

describe("Capture: response policy", () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it.scopedLive(`RedirectRejected: ${status} is not followed`, () =>
      Effect.gen(function*() {
        const target = yield* testServer(plainText("target"))
        const server = yield* testServer((_req, res) => {
          res.writeHead(status, { location: target.url("/moved.txt"), "content-type": "text/plain" })
          res.end("moved")
        })
        const error = yield* failureFrom(server)
        assert.instanceOf(error, RedirectRejected)
        assert.strictEqual(error.status, status)
        assert.strictEqual(error.location, target.url("/moved.txt"))
        assert.strictEqual(target.connections, 0)
      }))
  }

  it.scopedLive("UnexpectedStatus: anything but 200", () =>
    Effect.gen(function*() {
      for (const status of [204, 404, 500]) {
        const server = yield* testServer((_req, res) => {
          res.writeHead(status, { "content-type": "text/plain" })
          res.end()
        })
        const error = yield* failureFrom(server)
        assert.instanceOf(error, UnexpectedStatus)
        assert.strictEqual(error.status, status)
      }
    }))

  it.scopedLive("UnsupportedContentType: html, another charset, extra parameters or none at all", () =>
    Effect.gen(function*() {
      for (const contentType of ["text/html", "text/plain; charset=iso-8859-1", "text/plain; format=flowed", "application/json", undefined]) {
        const server = yield* testServer((_req, res) => {
          res.writeHead(200, contentType === undefined ? {} : { "content-type": contentType })
          res.end("hello")
        })
        const error = yield* failureFrom(server)
        assert.instanceOf(error, UnsupportedContentType, String(contentType))
        assert.strictEqual(error.contentType, contentType ?? null)
      }
    }))

  for (const [what, status, contentType, tag] of [
    ["its content type", 200, "text/html", "UnsupportedContentType"],
    ["its status", 500, "text/plain", "UnexpectedStatus"],
    ["a redirect", 302, "text/plain", "RedirectRejected"]
  ] as const) {
    it.scopedLive(`a response rejected for ${what} before its body is read has its socket closed promptly`, () =>
      Effect.gen(function*() {
        const server = yield* testServer((_req, res) => {
          // An endless body: only an abort from the client ends this connection.
          res.writeHead(status, { "content-type": contentType, location: "http://127.0.0.1:1/elsewhere" })
          const timer = setInterval(() => res.write("<p>more</p>"), 50)
          res.on("close", () => clearInterval(timer))
        })
        const error = yield* failureFrom(server)
        assert.strictEqual(error._tag, tag)
        yield* socketsClosed(server, 1_000)
      }))
  }

  it.scopedLive("AmbiguousHeader: a repeated Content-Type fails closed", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.setHeader("content-type", ["text/plain", "text/plain; charset=utf-8"])
        res.end("hello")
      })
      const error = yield* failureFrom(server)
      assert.instanceOf(error, AmbiguousHeader)
      assert.strictEqual(error.header, "content-type")
    }))

  it.scopedLive("a repeated Content-Length or Content-Encoding fails closed", () =>
    Effect.gen(function*() {
      const repeated = (name: string, values: ReadonlyArray<string>) =>
        Effect.flatMap(testServer((_req, res) => {
          res.setHeader("content-type", "text/plain")
          res.setHeader(name, [...values])
          res.end("hello")
        }), (server) => failureFrom(server))
      // A repeated Content-Length is refused by the HTTP client's own framing checks, before citegate sees
      // the headers; nothing is captured (failureFrom checks the run directory stays empty).
      const length = yield* repeated("content-length", ["5", "5"])
      assert.instanceOf(length, ConnectionFailed)
      assert.match(length.detail, /content-length/i)
      const encoding = yield* repeated("content-encoding", ["identity", "identity"])
      assert.instanceOf(encoding, AmbiguousHeader)
      assert.strictEqual(encoding.header, "content-encoding")
      assert.strictEqual(encoding.value, "identity, identity")
    }))

  it.scopedLive("UnsupportedContentEncoding: gzip is rejected, never decompressed", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        res.end(zlib.gzipSync("hello"))
      })
      const error = yield* failureFrom(server)
      assert.instanceOf(error, UnsupportedContentEncoding)
      assert.strictEqual(error.contentEncoding, "gzip")
    }))

  it.scopedLive("InvalidEncoding: invalid UTF-8, and a truncated final sequence", () =>
    Effect.gen(function*() {
      for (const body of [Buffer.from([0x68, 0x69, 0xff, 0x0a]), Buffer.from([0x68, 0x69, 0xe2, 0x82])]) {
        const server = yield* testServer(plainText(body))
        const error = yield* failureFrom(server)
        assert.instanceOf(error, InvalidEncoding)
        assert.strictEqual(error.byteLength, body.length)
      }
    }))

  it.scopedLive("TruncatedBody: a body shorter than its Content-Length", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "100" })
        res.write("only fifty bytes".padEnd(50, "."))
        setTimeout(() => res.socket?.destroy(), 50)
      })
      const error = yield* failureFrom(server)
      assert.instanceOf(error, TruncatedBody)
      assert.strictEqual(error.expectedBytes, 100)
      // The connection broke mid-body; the count is not always known then.
      assert.include([null, 50], error.receivedBytes)
    }))

  it.scopedLive("CaptureExists: a second capture of the same source leaves the first untouched", () =>
    Effect.gen(function*() {
      let n = 0
      const server = yield* testServer((_req, res) => {
        n++
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(`version ${n}`)
      })
      const source = server.url("/a.txt")
      const { capture, directory } = yield* loopback([source])
      yield* capture.capture(source)
      const before = yield* snapshotDirectory(directory)
      const error = yield* Effect.flip(capture.capture(source))
      assert.instanceOf(error, CaptureExists)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before)
    }))
})

describe("Capture: size and time budgets", () => {
  it.scopedLive("TooLarge: an announced Content-Length over the cap fails before the body is read", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(10 * 1024 * 1024) })
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        const pump = () => {
          while (server.bytesWritten < 10 * 1024 * 1024) {
            server.bytesWritten += chunk.length
            if (!res.write(chunk)) return res.once("drain", pump)
          }
          res.end()
        }
        pump()
      })
      const error = yield* failureFrom(server, "/big.txt", { maxBytes: 1024 })
      assert.instanceOf(error, TooLarge)
      assert.strictEqual(error.declaredBytes, 10 * 1024 * 1024)
      assert.strictEqual(error.receivedBytes, 0)
      yield* socketsClosed(server)
      assert.isBelow(server.bytesWritten, 10 * 1024 * 1024)
    }))

  it.scopedLive("TooLarge: an endless chunked body is aborted as soon as it passes the cap", () =>
    Effect.gen(function*() {
      const limit = 256 * 1024 * 1024
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        const chunk = Buffer.alloc(16 * 1024, 0x61)
        const pump = () => {
          // Bounded: a server that is never stopped still gives up at 256 MiB.
          while (!res.destroyed && server.bytesWritten < limit) {
            server.bytesWritten += chunk.length
            if (!res.write(chunk)) return res.once("drain", pump)
          }
          res.end()
        }
        res.on("close", () => undefined)
        pump()
      })
      const maxBytes = 1024 * 1024
      const error = yield* failureFrom(server, "/endless.txt", { maxBytes })
      assert.instanceOf(error, TooLarge)
      assert.isNull(error.declaredBytes)
      assert.isAbove(error.receivedBytes, maxBytes)
      assert.isBelow(error.receivedBytes, maxBytes + 128 * 1024)
      yield* socketsClosed(server)
      // Socket buffers hold a few MiB at most; the 256 MiB body was never sent.
      assert.isBelow(server.bytesWritten, 32 * 1024 * 1024)
    }))

  it.scopedLive("Timeout: a server that never answers fails at the budget and its socket is closed", () =>
    Effect.gen(function*() {
      const server = yield* testServer(() => {
        // Never answers.
      })
      const started = Date.now()
      const error = yield* failureFrom(server, "/silent.txt", { timeoutMs: 500 })
      const elapsed = Date.now() - started
      assert.instanceOf(error, Timeout)
      assert.strictEqual(error.timeoutMs, 500)
      assert.isAtLeast(elapsed, 490)
      assert.isBelow(elapsed, 500 + 400)
      yield* socketsClosed(server, 1_000)
    }))

  it.scopedLive("Timeout: a slow-drip body fails at the budget, however steadily bytes arrive", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        const timer = setInterval(() => res.write("a"), 200)
        res.on("close", () => clearInterval(timer))
      })
      const started = Date.now()
      const error = yield* failureFrom(server, "/drip.txt", { timeoutMs: 1_000 })
      const elapsed = Date.now() - started
      assert.instanceOf(error, Timeout)
      assert.isAtLeast(elapsed, 990)
      assert.isBelow(elapsed, 1_000 + 400)
      yield* socketsClosed(server, 1_000)
    }))

  it.scopedLive("a caller interrupting the capture aborts the socket", () =>
    Effect.gen(function*() {
      const server = yield* testServer(() => {
        // Never answers.
      })
      const source = server.url("/silent.txt")
      const { capture, directory } = yield* loopback([source], { timeoutMs: 60_000 })
      const fiber = yield* Effect.fork(capture.capture(source))
      yield* waitUntil(() => server.connections === 1, "the request arrives")
      yield* Fiber.interrupt(fiber)
      yield* socketsClosed(server, 1_000)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
    }))
})

export type { SourceUrl }
