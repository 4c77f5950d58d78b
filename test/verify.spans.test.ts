/**
 * What a verification costs per capture in spans. Under Effect's default in-process tracer (the
 * CLI, the library, the service without telemetry) nothing reads a span, so a verification makes
 * the same few spans however many captures it reads: none per capture. With a tracer that exports
 * (the service's telemetry, an embedding program's own), each capture read gets its `Verifier.read`
 * span and each capture searched its `Verifier.search` span, with the source and the error tag of a
 * failed read. The signature step, off by default, reads no attestation. Counted, not timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Tracer from "effect/Tracer"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { countingInProcess, exportingTracer } from "./support/spans.js"

const accessedAt = "2026-11-30T00:00:00.000Z" as Rfc3339Utc
const sourceOf = (i: number) => `https://spans.example.com/source-${i}.txt` as SourceUrl
const textOf = (i: number) => `Capture ${i}: net sales rose by ${i * 7} units in the north region.\n`

/** A store of `stored` captures that counts attestation reads and notes the span each read runs in. */
const countingStore = (stored: number) =>
  Effect.gen(function*() {
    const records = Array.from({ length: stored }, (_, i) => makeCaptureRecord({ source: sourceOf(i), text: textOf(i), accessedAt, contentType: "text/plain" }))
    const inner = yield* MemoryStore.make({ records })
    const seen = { attestations: 0, readSpans: [] as Array<string> }
    const store: CaptureStore.CaptureStoreShape = {
      ...inner,
      read: (source) =>
        Effect.zipRight(
          Effect.catchAll(Effect.map(Effect.currentSpan, (span) => seen.readSpans.push(span.name)), () => Effect.void),
          inner.read(source)
        ),
      readAttestation: (source) => {
        seen.attestations++
        return inner.readAttestation === undefined ? Effect.succeed(undefined) : inner.readAttestation(source)
      }
    }
    return { records, store, seen }
  })

/** One verification of a fact per capture (`captures` of them, plus one cited capture that is not stored). */
const verifyAll = (captures: number) =>
  Effect.gen(function*() {
    const { records, seen, store } = yield* countingStore(captures)
    const missing = sourceOf(captures)
    const sources = [...records.map((r) => r.source), missing]
    const labels = sources.map((_, i) => `fact_${i}`)
    const facts = [
      ...records.map((r, i) => ({ state: "cited", label: labels[i], source: r.source, captureSha256: r.sha256, snippet: r.text.slice(0, 24) })),
      { state: "cited", label: labels[captures], source: missing, captureSha256: records[0]!.sha256, snippet: "net sales" }
    ]
    const verifier = yield* Effect.provide(
      Verifier.make,
      Layer.merge(Policy.layer({ sources, labels, verify: { maxFacts: 1000, mode: "drop" } } as never), Layer.succeed(CaptureStore.CaptureStore, store))
    )
    const verification = yield* verifier.check({ facts })
    assert.strictEqual(verification.entries.length, captures)
    assert.deepStrictEqual(verification.rejections.map((r) => r.error._tag), ["MissingCapture"])
    return seen
  })

describe("Verifier spans", () => {
  it.effect("under the in-process tracer: no span at all, per capture or per verification (1 capture and 40 alike)", () =>
    Effect.gen(function*() {
      const probe = yield* countingInProcess(Effect.withSpan(Effect.void, "probe"))
      assert.deepStrictEqual(probe.names, ["probe"], "the in-process tracer is counted")
      const one = yield* countingInProcess(verifyAll(1))
      const forty = yield* countingInProcess(verifyAll(40))
      // Nothing reads an in-process span: none for the verification (Verifier.check) or its steps; the
      // one span is the test's own store being made.
      assert.deepStrictEqual(one.names, ["MemoryStore.make"])
      assert.deepStrictEqual(forty.names, ["MemoryStore.make"])
      // Each capture read runs in no span of its own (nor of the verification's).
      assert.strictEqual(forty.value.readSpans.length, 0)
    }))

  it.effect("with an exporting tracer: one Verifier.read per capture read and one Verifier.search per capture searched", () =>
    Effect.gen(function*() {
      const { spans, tracer } = exportingTracer()
      const seen = yield* Effect.withTracer(verifyAll(3), tracer)
      const named = (name: string) => spans.filter((s) => s.name === name)
      // The verification's own span, as `Effect.fn` made it.
      assert.strictEqual(named("Verifier.check").length, 1)
      const source = (span: Tracer.Span) => span.attributes.get("citegate.source")
      assert.sameMembers(named("Verifier.read").map(source), [0, 1, 2, 3].map(sourceOf))
      assert.sameMembers(named("Verifier.search").map(source), [0, 1, 2].map(sourceOf))
      for (const span of named("Verifier.search")) assert.strictEqual(span.attributes.get("citegate.citations"), 1)
      const tags = named("Verifier.read").map((s) => [source(s), s.attributes.get("citegate.error_tag")])
      assert.sameDeepMembers(tags, [[sourceOf(0), undefined], [sourceOf(1), undefined], [sourceOf(2), undefined], [sourceOf(3), "MissingCapture"]])
      // Each read runs inside its own span.
      assert.deepStrictEqual(seen.readSpans, ["Verifier.read", "Verifier.read", "Verifier.read", "Verifier.read"])
    }))

  it.effect("verify.signatures off (the default): no attestation is read", () =>
    Effect.gen(function*() {
      const seen = yield* verifyAll(40)
      assert.strictEqual(seen.attestations, 0)
    }))
})
