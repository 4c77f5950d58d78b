/**
 * The two span helpers the service's report route uses per request (internal/Spans.ts): they do
 * what `Effect.annotateCurrentSpan` and `Effect.annotateSpans` do wherever a span can be read, and
 * nothing where none can (no span; Effect's in-process tracer).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Spans from "../src/internal/Spans.js"
import { exportingTracer } from "./support/spans.js"

describe("span helpers", () => {
  it.effect("annotateCurrentSpanIfAny annotates the current span, as annotateCurrentSpan does", () =>
    Effect.gen(function*() {
      const { spans, tracer } = exportingTracer()
      yield* Spans.annotateCurrentSpanIfAny({ "citegate.outcome": "verified", "citegate.run_id": "r1" }).pipe(
        Effect.withSpan("request"),
        Effect.withTracer(tracer)
      )
      assert.strictEqual(spans.length, 1)
      assert.strictEqual(spans[0]!.attributes.get("citegate.outcome"), "verified")
      assert.strictEqual(spans[0]!.attributes.get("citegate.run_id"), "r1")
    }))

  it.effect("annotateCurrentSpanIfAny without a span succeeds, as annotateCurrentSpan does", () =>
    Effect.gen(function*() {
      const { spans, tracer } = exportingTracer()
      const exit = yield* Effect.exit(Spans.annotateCurrentSpanIfAny({ "citegate.outcome": "verified" }).pipe(Effect.withTracer(tracer)))
      assert.isTrue(exit._tag === "Success")
      assert.strictEqual(spans.length, 0)
    }))

  it.effect("annotateSpansExported annotates spans made inside under an exporting tracer, and leaves the in-process ones alone", () =>
    Effect.gen(function*() {
      const { spans, tracer } = exportingTracer()
      yield* Effect.void.pipe(Effect.withSpan("inner"), Spans.annotateSpansExported("citegate.run_id", "r1"), Effect.withTracer(tracer))
      assert.strictEqual(spans.length, 1)
      assert.strictEqual(spans[0]!.attributes.get("citegate.run_id"), "r1")
      const span = yield* Effect.currentSpan.pipe(Effect.withSpan("inner"), Spans.annotateSpansExported("citegate.run_id", "r1"))
      assert.isFalse(span.attributes.has("citegate.run_id"))
    }))
})
