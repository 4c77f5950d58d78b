/**
 * A stage that accepts `text/plain` only fetches, checks, decodes and keeps its
 * deadline in one asynchronous step (capture/Fetch.ts `fetchPlainTextWithin`);
 * a stage that accepts more types goes through the general path (the deadline's
 * fiber over `fetchBody` and the extraction runner). Every source below, good
 * and hostile, must give both the same result: the same typed error with the
 * same fields, or a record of the same bytes (but its time), and the same files.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { testServer } from "./httpServer.js"
import { tempDirectory } from "./support.js"

const maxBytes = 4096

/** Each route's answer; `slow` routes are captured under a short deadline. */
const routes: Record<string, (res: import("node:http").ServerResponse) => void> = {
  "/ok.txt": (res) => {
    const body = Buffer.from("net sales rose \"3%\" \\ in Q3\n\tper region\u0001 é 𝄞 ✓\r\n")
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": String(body.length) })
    res.end(body)
  },
  "/chunked.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.write("first part, ")
    res.end("second part\n")
  },
  "/bom.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("after the BOM")]))
  },
  "/empty.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": "0" })
    res.end()
  },
  "/invalid-utf8.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end(Buffer.from([0x61, 0xc3, 0x28, 0x62]))
  },
  "/lone-surrogate.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end(Buffer.from([0x61, 0xed, 0xa0, 0x80]))
  },
  "/missing.txt": (res) => void res.writeHead(404, { "content-type": "text/plain" }).end("no"),
  "/moved.txt": (res) => void res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end(),
  "/gzip.txt": (res) => void res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end("x"),
  "/latin1.txt": (res) => void res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end("x"),
  "/html.txt": (res) => void res.writeHead(200, { "content-type": "text/html" }).end("<p>x</p>"),
  "/no-type.txt": (res) => void res.writeHead(200).end("x"),
  "/two-types.txt": (res) => {
    res.setHeader("content-type", ["text/plain", "text/plain"])
    res.writeHead(200)
    res.end("abc")
  },
  "/declared-too-large.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(maxBytes + 1) })
    res.end("x".repeat(maxBytes + 1))
  },
  "/streamed-too-large.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.write("x".repeat(maxBytes))
    res.end("y")
  },
  "/truncated.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" })
    res.write("x".repeat(500), () => res.destroy())
  },
  "/reset.txt": (res) => void res.socket?.destroy(),
  "/slow-headers.txt": () => undefined,
  "/slow-body.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    const timer = setInterval(() => res.write("more "), 20)
    res.on("close", () => clearInterval(timer))
  }
}

const outcome = (result: Capture.CaptureResult["result"]) =>
  result._tag === "Right"
    ? { ok: { ...result.right, accessedAt: "" } }
    : { error: { ...result.left, tag: result.left._tag } }

/** Every route through a stage accepting `contentTypes`; the results and the files written (time blanked). */
const captureEach = (url: (p: string) => string, contentTypes: ReadonlyArray<"text/plain" | "text/markdown">) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const stage = (timeoutMs: number) =>
      Effect.map(
        Layer.build(
          Capture.layer({ approved: Object.keys(routes).map(url), allowLoopbackHttp: true, maxBytes, timeoutMs, contentTypes })
            .pipe(Layer.provide(CaptureStore.layerFileSystem({ directory })))
        ),
        Context.get(Capture.Capture)
      ).pipe(Effect.orDie)
    const patient = yield* stage(20_000)
    const hasty = yield* stage(300)
    const results: Record<string, unknown> = {}
    for (const route of Object.keys(routes)) {
      const stageFor = route.startsWith("/slow") ? hasty : patient
      const [result] = yield* stageFor.captureAll([url(route)])
      results[route] = outcome(result!.result)
    }
    results["not approved"] = outcome((yield* patient.captureAll([url("/other.txt")]))[0]!.result)
    const files: Record<string, string> = {}
    for (const name of (yield* Effect.promise(() => fsp.readdir(directory))).sort()) {
      const text = yield* Effect.promise(() => fsp.readFile(path.join(directory, name), "utf8"))
      files[name] = text.replace(/"accessedAt":"[^"]*"/, "\"accessedAt\":\"\"")
    }
    return { results, files }
  })

describe("Capture: the text/plain-only path and the general path", () => {
  it.scopedLive("give the same result for every good and hostile source, and write the same bytes", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        const route = routes[req.url!]
        if (route === undefined) res.writeHead(404).end()
        else route(res)
      })
      const fast = yield* captureEach(server.url, ["text/plain"])
      const general = yield* captureEach(server.url, ["text/plain", "text/markdown"])
      assert.deepStrictEqual(fast.results, general.results)
      assert.deepStrictEqual(fast.files, general.files)
      // What the sources were meant to exercise, so that the comparison is not of two identical failures.
      const tags = Object.fromEntries(
        Object.entries(fast.results).map(([route, r]) => [route, "ok" in (r as object) ? "ok" : (r as { error: { tag: string } }).error.tag])
      )
      assert.deepStrictEqual(tags, {
        "/ok.txt": "ok",
        "/chunked.txt": "ok",
        "/bom.txt": "ok",
        "/empty.txt": "ok",
        "/invalid-utf8.txt": "InvalidEncoding",
        "/lone-surrogate.txt": "InvalidEncoding",
        "/missing.txt": "UnexpectedStatus",
        "/moved.txt": "RedirectRejected",
        "/gzip.txt": "UnsupportedContentEncoding",
        "/latin1.txt": "UnsupportedContentType",
        "/html.txt": "UnsupportedContentType",
        "/no-type.txt": "UnsupportedContentType",
        "/two-types.txt": "AmbiguousHeader",
        "/declared-too-large.txt": "TooLarge",
        "/streamed-too-large.txt": "TooLarge",
        "/truncated.txt": "TruncatedBody",
        "/reset.txt": "ConnectionFailed",
        "/slow-headers.txt": "Timeout",
        "/slow-body.txt": "Timeout",
        "not approved": "NotApproved"
      })
      assert.strictEqual(Object.keys(fast.files).filter((name) => name.endsWith(".json")).length, 4)
      assert.deepStrictEqual(Object.keys(fast.files).filter((name) => !name.endsWith(".json")), [], "no temporary file is left")
    }), 30_000)
})
