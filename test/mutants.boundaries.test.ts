/**
 * Limits hold exactly at their value: a body of exactly maxBytes is captured
 * (announced by Content-Length or chunked), one byte more is refused; a report
 * of exactly maxFacts facts is accepted, one more is refused; captureAll never
 * has more requests in flight than its concurrency budget, and uses all of it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { InvalidReport, TooLarge } from "../src/Errors.js"
import { testServer } from "./httpServer.js"
import { failureOf } from "./mutants.support.js"
import { gateFor, runDirectoryWith, snapshotDirectory, tempDirectory } from "./support.js"

const captureService = (options: Capture.CaptureOptions) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ allowLoopbackHttp: true, timeoutMs: 5_000, ...options }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    )
    return { capture: Context.get(context, Capture.Capture), directory }
  }).pipe(Effect.orDie)

const maxBytes = 1_000

/** A body of `size` bytes ("a".."z" repeating), sent with a Content-Length or chunked in 100-byte writes. */
const bodyServer = (framing: "content-length" | "chunked") =>
  testServer((req, res) => {
    const size = Number(req.url!.slice(1))
    const body = Buffer.alloc(size, "abcdefghijklmnopqrstuvwxyz")
    if (framing === "content-length") {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(size) })
      res.end(body)
      return
    }
    res.writeHead(200, { "content-type": "text/plain" })
    for (let at = 0; at < size; at += 100) res.write(body.subarray(at, at + 100))
    res.end()
  })

describe("Capture: the byte cap is exact", () => {
  for (const framing of ["content-length", "chunked"] as const) {
    it.scopedLive(`${framing}: exactly maxBytes is captured, maxBytes + 1 is TooLarge and writes nothing`, () =>
      Effect.gen(function*() {
        const server = yield* bodyServer(framing)
        const exact = server.url(`/${maxBytes}`)
        const over = server.url(`/${maxBytes + 1}`)
        const { capture, directory } = yield* captureService({ approved: [exact, over], maxBytes })
        const ref = yield* capture.capture(exact)
        assert.strictEqual(ref.byteLength, maxBytes)
        const error = yield* failureOf(capture.capture(over))
        assert.instanceOf(error, TooLarge)
        assert.strictEqual(error.source, over)
        assert.strictEqual(error.maxBytes, maxBytes)
        if (framing === "content-length") {
          // Refused on the announced length, before the body is read.
          assert.strictEqual(error.declaredBytes, maxBytes + 1)
          assert.strictEqual(error.receivedBytes, 0)
        } else {
          assert.isNull(error.declaredBytes)
          assert.strictEqual(error.receivedBytes, maxBytes + 1)
        }
        // Only the capture of exactly maxBytes was written.
        assert.strictEqual((yield* snapshotDirectory(directory)).length, 1)
      }))
  }
})

describe("Capture: captureAll keeps to its concurrency budget", () => {
  for (const concurrency of [1, 3]) {
    it.scopedLive(`concurrency ${concurrency}: at most ${concurrency} requests in flight, and ${concurrency} reached`, () =>
      Effect.gen(function*() {
        let inFlight = 0
        let maxInFlight = 0
        const server = yield* testServer((_req, res) => {
          inFlight++
          maxInFlight = Math.max(maxInFlight, inFlight)
          // Each answer waits long enough for every allowed request to be in flight at once.
          setTimeout(() => {
            inFlight--
            res.writeHead(200, { "content-type": "text/plain" })
            res.end("ok")
          }, 150)
        })
        const sources = Array.from({ length: 7 }, (_, i) => server.url(`/s${i}.txt`))
        const { capture } = yield* captureService({ approved: sources, concurrency })
        const results = yield* capture.captureAll(sources)
        assert.deepStrictEqual(results.map((r) => [r.source, Either.isRight(r.result)]), sources.map((s) => [s, true]))
        assert.strictEqual(server.requests.length, sources.length)
        assert.strictEqual(maxInFlight, concurrency)
      }))
  }
})

describe("Verifier: the fact limit is exact", () => {
  const labels = Array.from({ length: 101 }, (_, i) => `label_${i}`)
  const facts = (n: number) => labels.slice(0, n).map((label) => ({ state: "unavailable", label, reason: "not published" }))
  const config = (maxFacts?: number) => ({
    sources: ["https://reports.northwind.test/q3-sales.txt"],
    labels,
    ...(maxFacts === undefined ? {} : { verify: { maxFacts } })
  })

  for (const [limit, maxFacts] of [[3, 3], [100, undefined]] as const) {
    it.scoped(`maxFacts ${limit}${maxFacts === undefined ? " (the default)" : ""}: ${limit} facts accepted, ${limit + 1} refused`, () =>
      Effect.gen(function*() {
        const directory = yield* runDirectoryWith([])
        const gate = yield* gateFor(directory, config(maxFacts))
        const report = yield* gate.check({ facts: facts(limit) })
        assert.strictEqual(report.facts.length, limit)
        const error = yield* failureOf(gate.check({ facts: facts(limit + 1) }))
        assert.instanceOf(error, InvalidReport)
        assert.deepStrictEqual(error.issues.map((i) => [i.path.join("."), i.message]), [
          ["facts", `must hold at most ${limit} facts, got ${limit + 1}`]
        ])
      }))
  }
})
