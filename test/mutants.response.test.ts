/**
 * The response policy (capture/Response.ts), decision by decision: every
 * status class edge, each framing header, the content-type rules and the
 * announced length against the cap. The responses are real platform responses
 * (`HttpClientResponse.fromWeb`), so each check runs on the same object shape
 * a capture sees, without a socket; the whitespace cases go over a raw socket
 * on 127.0.0.1, because web headers trim their values.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as net from "node:net"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { checkResponse, headerValue, isAllowedContentType, isPlainTextUtf8 } from "../src/capture/Response.js"
import type { SourceUrl } from "../src/Domain.js"
import { failureOf } from "./mutants.support.js"
import { tempDirectory } from "./support.js"

const source = "https://reports.northwind.test/q3.txt" as SourceUrl

const response = (status: number, headers: ReadonlyArray<readonly [string, string]>) =>
  HttpClientResponse.fromWeb(
    HttpClientRequest.get(source),
    new Response(status === 204 || status === 304 ? null : new Uint8Array(0), {
      status,
      headers: headers.map(([name, value]) => [name, value] as [string, string])
    })
  )

const policy = { maxBytes: 100, contentTypes: ["text/plain", "text/html"] }

const check = (status: number, headers: ReadonlyArray<readonly [string, string]>) =>
  checkResponse(source, response(status, headers), policy)

/** The failure as plain data: its tag and fields. */
const refusal = (status: number, headers: ReadonlyArray<readonly [string, string]>) =>
  Effect.map(failureOf(check(status, headers)), (error): Record<string, unknown> => ({ ...error }))

const text = ["content-type", "text/plain"] as const

describe("checkResponse: status", () => {
  it.effect("200 passes; 2xx others, 4xx, 5xx are UnexpectedStatus; 3xx (300 to 399) is RedirectRejected", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* check(200, [text]), { contentType: "text/plain", declared: null })
      for (const status of [201, 299, 400, 404, 500, 599]) {
        assert.deepStrictEqual(yield* refusal(status, [text]), { _tag: "UnexpectedStatus", source, status }, String(status))
      }
      for (const status of [300, 302, 399]) {
        assert.deepStrictEqual(yield* refusal(status, [text, ["location", "https://elsewhere.test/"]]), {
          _tag: "RedirectRejected",
          source,
          status,
          location: "https://elsewhere.test/"
        })
      }
      assert.deepStrictEqual(yield* refusal(301, [text]), { _tag: "RedirectRejected", source, status: 301, location: null })
    }))
})

describe("checkResponse: framing and coding headers", () => {
  it.effect("a comma in Content-Type, Content-Length or Content-Encoding is AmbiguousHeader with the joined value", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal(200, [["content-type", "text/plain, text/html"]]), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-type",
        value: "text/plain, text/html"
      })
      assert.deepStrictEqual(yield* refusal(200, [text, ["content-length", "5, 5"]]), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-length",
        value: "5, 5"
      })
      assert.deepStrictEqual(yield* refusal(200, [text, ["content-encoding", "identity"], ["content-encoding", "identity"]]), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-encoding",
        value: "identity, identity"
      })
    }))

  it.effect("Transfer-Encoding: only chunked, in any case", () =>
    Effect.gen(function*() {
      for (const value of ["chunked", "CHUNKED", "Chunked"]) {
        assert.deepStrictEqual(yield* check(200, [text, ["transfer-encoding", value]]), { contentType: "text/plain", declared: null })
      }
      for (const value of ["gzip", "gzip, chunked", "identity"]) {
        assert.deepStrictEqual(yield* refusal(200, [text, ["transfer-encoding", value]]), {
          _tag: "UnsupportedTransferEncoding",
          source,
          transferEncoding: value
        })
      }
    }))

  it.effect("Content-Encoding: identity in any case passes; any other is refused with its value", () =>
    Effect.gen(function*() {
      for (const value of ["identity", "IDENTITY"]) {
        assert.deepStrictEqual(yield* check(200, [text, ["content-encoding", value]]), { contentType: "text/plain", declared: null })
      }
      for (const value of ["gzip", "br", "identityx"]) {
        assert.deepStrictEqual(yield* refusal(200, [text, ["content-encoding", value]]), {
          _tag: "UnsupportedContentEncoding",
          source,
          contentEncoding: value
        })
      }
    }))

  it.effect("the checks run in order: status, repeated headers, transfer coding, content coding, type, length", () =>
    Effect.gen(function*() {
      const all = [
        ["content-type", "text/html, text/plain"],
        ["transfer-encoding", "gzip"],
        ["content-encoding", "gzip"],
        ["content-length", "1000"]
      ] as const
      assert.strictEqual((yield* refusal(500, all))._tag, "UnexpectedStatus")
      assert.strictEqual((yield* refusal(200, all))._tag, "AmbiguousHeader")
      assert.strictEqual((yield* refusal(200, [["content-type", "image/png"], ...all.slice(1)]))._tag, "UnsupportedTransferEncoding")
      assert.strictEqual((yield* refusal(200, [["content-type", "image/png"], ...all.slice(2)]))._tag, "UnsupportedContentEncoding")
      assert.strictEqual((yield* refusal(200, [["content-type", "image/png"], ...all.slice(3)]))._tag, "UnsupportedContentType")
      assert.strictEqual((yield* refusal(200, [text, ...all.slice(3)]))._tag, "TooLarge")
      // A repeated Content-Length is refused as repeated, before the codings are looked at.
      assert.deepStrictEqual(yield* refusal(200, [text, ["content-length", "5, 5"], ["content-encoding", "gzip"]]), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-length",
        value: "5, 5"
      })
    }))
})

describe("checkResponse: content type and length", () => {
  it.effect("no Content-Type, or one not allowed, is UnsupportedContentType with the value", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal(200, []), { _tag: "UnsupportedContentType", source, contentType: null })
      assert.deepStrictEqual(yield* refusal(200, [["content-type", "application/pdf"]]), {
        _tag: "UnsupportedContentType",
        source,
        contentType: "application/pdf"
      })
      // An allowed type keeps its parameters in the record.
      assert.deepStrictEqual(yield* check(200, [["content-type", "text/html; charset=windows-1252"]]), {
        contentType: "text/html; charset=windows-1252",
        declared: null
      })
    }))

  it.effect("Content-Length: digits only; up to the cap passes with its value, one more is TooLarge", () =>
    Effect.gen(function*() {
      for (const [value, declared] of [["0", 0], ["7", 7], ["100", 100], ["0100", 100]] as const) {
        assert.deepStrictEqual(yield* check(200, [text, ["content-length", value]]), { contentType: "text/plain", declared })
      }
      assert.deepStrictEqual(yield* refusal(200, [text, ["content-length", "101"]]), {
        _tag: "TooLarge",
        source,
        maxBytes: 100,
        declaredBytes: 101,
        receivedBytes: 0
      })
      for (const value of ["-1", "+5", "5a", "a5", "0x10", "1e2", "1.0", "5 5"]) {
        assert.deepStrictEqual(yield* refusal(200, [text, ["content-length", value]]), {
          _tag: "AmbiguousHeader",
          source,
          header: "content-length",
          value
        }, value)
      }
    }))

  it.effect("headerValue: the value, or null when absent", () =>
    Effect.sync(() => {
      const r = response(200, [text])
      assert.strictEqual(headerValue(r, "content-type"), "text/plain")
      assert.isNull(headerValue(r, "content-length"))
    }))
})

describe("isPlainTextUtf8", () => {
  const accepted = [
    "text/plain",
    "TEXT/PLAIN",
    " text/plain ",
    "text/plain;",
    "text/plain; ",
    "text/plain;charset=utf-8",
    "text/plain; charset=UTF-8",
    "text/plain; charset = utf-8",
    "text/plain; CHARSET=\"utf-8\"",
    "text/plain; charset=utf-8;"
  ]
  const refused = [
    "text/html",
    "text/plainx",
    "xtext/plain",
    "text/plain; charset=utf-16",
    "text/plain; charset=utf-8x",
    "text/plain; xcharset=utf-8",
    "text/plain; charset=\"utf-8",
    "text/plain; charset=utf-8; format=flowed",
    "text/plain; format=flowed",
    "text/plain; charset=utf8",
    ""
  ]
  it("accepts text/plain with at most a UTF-8 charset", () => {
    for (const value of accepted) assert.isTrue(isPlainTextUtf8(value), value)
  })
  it("refuses anything else", () => {
    for (const value of refused) assert.isFalse(isPlainTextUtf8(value), value)
  })
})

describe("isAllowedContentType", () => {
  it("the media type (any case, trimmed) must be listed; text/plain keeps its stricter rule", () => {
    const allowed = ["text/plain", "text/html"]
    assert.isTrue(isAllowedContentType("text/html", allowed))
    assert.isTrue(isAllowedContentType(" TEXT/HTML ; charset=iso-8859-1", allowed))
    assert.isTrue(isAllowedContentType("text/plain; charset=utf-8", allowed))
    assert.isFalse(isAllowedContentType("text/plain; charset=iso-8859-1", allowed))
    assert.isFalse(isAllowedContentType("text/plain; format=flowed", allowed))
    assert.isFalse(isAllowedContentType("text/markdown", allowed))
    assert.isFalse(isAllowedContentType("text/html", ["text/plain"]))
    assert.isTrue(isAllowedContentType("text/markdown; variant=GFM", ["text/markdown"]))
  })
})

/** A raw TCP server on 127.0.0.1 answering every request with the given bytes (node:http would normalise them). */
const rawServer = (answer: string) =>
  Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const server = net.createServer((socket) => {
        socket.on("error", () => undefined)
        let request = ""
        socket.on("data", (data) => {
          request += data.toString("latin1")
          if (request.includes("\r\n\r\n")) socket.end(Buffer.from(answer, "latin1"))
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => (server.address() as net.AddressInfo).port))

const captureRaw = (head: string, body: string) =>
  Effect.gen(function*() {
    const port = yield* rawServer(`HTTP/1.1 200 OK\r\n${head}connection: close\r\n\r\n${body}`)
    const directory = yield* tempDirectory
    const url = `http://127.0.0.1:${port}/a.txt`
    const context = yield* Layer.build(
      Capture.layer({ approved: [url], allowLoopbackHttp: true, timeoutMs: 5_000, maxBytes: 100 }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    ).pipe(Effect.orDie)
    return yield* Effect.either(Context.get(context, Capture.Capture).capture(url))
  })

describe("checkResponse over a socket: values with trailing blanks (the HTTP parser keeps them)", () => {
  it.scopedLive("Content-Type and Content-Encoding with trailing blanks are read as meant", () =>
    Effect.gen(function*() {
      const result = yield* captureRaw("content-type: text/plain \t\r\ncontent-encoding: identity \t\r\n", "hello")
      assert.strictEqual(result._tag, "Right", JSON.stringify(result))
      if (result._tag === "Right") assert.strictEqual(result.right.byteLength, 5)
    }))

  it.scopedLive("`chunked` with a trailing blank is refused: the parser does not decode it, so the framing would be captured", () =>
    Effect.gen(function*() {
      const result = yield* captureRaw("content-type: text/plain\r\ntransfer-encoding: chunked \t\r\n", "5\r\nhello\r\n0\r\n\r\n")
      assert.strictEqual(result._tag, "Left", JSON.stringify(result))
      if (result._tag === "Left") {
        assert.deepStrictEqual({ ...result.left } as Record<string, unknown>, {
          _tag: "UnsupportedTransferEncoding",
          source: result.left.source,
          transferEncoding: "chunked \t"
        })
      }
    }))
})
