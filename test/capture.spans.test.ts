/**
 * What a capture costs in spans and events. Under Effect's default in-process tracer (the CLI, the
 * library, the service without telemetry) nothing reads a span, so a run makes the same few spans
 * however many sources it captures: none per capture. With a tracer that exports (the service's
 * telemetry, an embedding program's own), each capture gets its `Capture.capture` span, with the
 * source when it is an approved one and the error tag of a failure. Events are made only for a
 * listener. Counted, not timed; a real loopback server and a real run directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as Tracer from "effect/Tracer"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { testServer } from "./httpServer.js"
import { tempDirectory } from "./support.js"
import { countingInProcess, exportingTracer } from "./support/spans.js"

/** A server of small text bodies; `/missing*` answers 404. */
const server = testServer((req, res) => {
  if (req.url!.startsWith("/missing")) return res.writeHead(404).end()
  const body = Buffer.from(`The body of ${req.url}.\n`.repeat(40))
  res.writeHead(200, { "content-type": "text/plain", "content-length": String(body.length) })
  res.end(body)
})

/** `count` good sources and one that answers 404, captured with `captureAll` by a fresh stage and run directory. */
const captureRun = (url: (path: string) => string, count: number) =>
  Effect.gen(function*() {
    const sources = [...Array.from({ length: count }, (_, i) => url(`/s${i}.txt`)), url("/missing.txt")]
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ approved: sources, allowLoopbackHttp: true, concurrency: 4, timeoutMs: 10_000 }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    ).pipe(Effect.orDie)
    const stage = Context.get(context, Capture.Capture)
    const results = yield* stage.captureAll(sources)
    assert.deepStrictEqual(results.map((r) => r.result._tag), [...sources.slice(0, count).map(() => "Right"), "Left"])
    return { stage, sources }
  })

describe("Capture spans", () => {
  it.scopedLive("under the in-process tracer: no span per capture (2 sources and 12 make the same spans)", () =>
    Effect.gen(function*() {
      const { url } = yield* server
      const two = yield* countingInProcess(captureRun(url, 2))
      const twelve = yield* countingInProcess(captureRun(url, 12))
      assert.isAbove(two.names.length, 0, "the in-process tracer was counted")
      assert.deepStrictEqual(twelve.names, two.names)
      assert.notInclude(twelve.names, "Capture.capture")
      assert.include(twelve.names, "Capture.captureAll")
    }))

  it.scopedLive("with an exporting tracer: one Capture.capture per capture, with its source and a failure's tag", () =>
    Effect.gen(function*() {
      const { url } = yield* server
      const { spans, tracer } = exportingTracer()
      const { sources, stage } = yield* Effect.withTracer(captureRun(url, 3), tracer)
      // A string outside the approved set: refused, and its span does not carry it.
      const refused = yield* Effect.flip(Effect.withTracer(stage.capture("http://127.0.0.1:1/not-approved"), tracer))
      assert.strictEqual(refused._tag, "NotApproved")
      const captures = spans.filter((s) => s.name === "Capture.capture")
      const seen = captures.map((s) => [s.attributes.get("citegate.source"), s.attributes.get("citegate.error_tag")])
      assert.sameDeepMembers(seen, [
        ...sources.slice(0, 3).map((source) => [source, undefined]),
        [sources[3], "UnexpectedStatus"],
        [undefined, "NotApproved"]
      ])
      for (const span of captures) assert.strictEqual(span.status._tag, "Ended")
      const all = spans.find((s) => s.name === "Capture.captureAll")!
      for (const span of captures.slice(0, 4)) assert.strictEqual(parentId(span), all.spanId)
    }))

  it.scopedLive("events for a listener: Started, then Captured or Failed, per source", () =>
    Effect.gen(function*() {
      const { url } = yield* server
      const sources = [url("/e0.txt"), url("/e1.txt"), url("/missing-e.txt")]
      const directory = yield* tempDirectory
      const context = yield* Layer.build(
        Capture.layer({ approved: sources, allowLoopbackHttp: true, concurrency: 1, timeoutMs: 10_000 }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      ).pipe(Effect.orDie)
      const events: Array<string> = []
      yield* Context.get(context, Capture.Capture).captureAll(sources, {
        onEvent: (event) => Effect.sync(() => events.push(`${event._tag} ${event.source}`))
      })
      assert.deepStrictEqual(events, sources.flatMap((s, i) => [`Started ${s}`, i < 2 ? `Captured ${s}` : `Failed ${s}`]))
    }))
})

/** The parent span's id, if the span has one. */
const parentId = (span: Tracer.Span): string | undefined =>
  span.parent._tag === "Some" ? span.parent.value.spanId : undefined
