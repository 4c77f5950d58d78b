/**
 * The audit and grown numbers: an old excerpt found verbatim in the new text only inside a longer
 * number (`4,210` in `4,210,000`, `1,180` in `11,180`, `37` in `370`) is `changed`, with the whole
 * number as candidate and the material flag, never `unchanged` or `relocated`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Audit from "../src/audit/Audit.js"
import { insideToken } from "../src/audit/Boundaries.js"
import { AuditResult, type Finding } from "../src/audit/Records.js"
import type { PipelineConfig } from "../src/Config.js"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt } from "./support.js"

const source = "https://reports.northwind.test/q3.txt" as SourceUrl

/** Audits one cited excerpt of `oldText` against `newText` (memory stores); the finding and the result. */
const audit = (oldText: string, newText: string, snippet: string) =>
  Effect.gen(function*() {
    const old = makeCaptureRecord({ source, text: oldText, accessedAt, contentType: "text/plain" })
    const now = makeCaptureRecord({ source, text: newText, accessedAt, contentType: "text/plain" })
    const config = { sources: [source], labels: ["x"] } as unknown as PipelineConfig
    const oldStore = MemoryStore.layer({ records: [old] }).pipe(Layer.orDie)
    const report = yield* Effect.flatMap(Gate.Gate, (gate) =>
      gate.check({ facts: [{ state: "cited", label: "x", source, captureSha256: old.sha256, snippet }] })).pipe(
        Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(oldStore), Layer.orDie))
      )
    const result = yield* Effect.flatMap(Audit.Audit, (a) => a.auditReport(report)).pipe(
      Effect.provide(Audit.layer.pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Audit.fromStore(MemoryStore.layer({ records: [now] }).pipe(Layer.orDie))),
        Layer.provide(oldStore),
        Layer.provide(Policy.layer(config))
      ))
    )
    Schema.decodeUnknownSync(AuditResult, decodeOptions)(JSON.parse(JSON.stringify(result)))
    return { finding: result.findings[0]!, result }
  })

const grown = (finding: Finding) => {
  assert.strictEqual(finding.status, "changed")
  if (finding.status !== "changed") throw new Error("not changed")
  return finding
}

describe("audit: a number that grew around the excerpt", () => {
  it.effect("4,210 -> 4,210,000 at the old position: changed, the whole number as candidate, flagged", () =>
    Effect.gen(function*() {
      const { finding, result } = yield* audit(
        "Q3 2026\nNet sales were 4,210 units.\n",
        "Q3 2026\nNet sales were 4,210,000 units.\n",
        "Net sales were 4,210"
      )
      const changed = grown(finding)
      assert.strictEqual(changed.candidate.text, "Net sales were 4,210,000")
      assert.strictEqual(changed.candidate.method, Audit.grownMethod)
      assert.deepStrictEqual(changed.candidate.span, { start: 8, end: 32 })
      assert.deepStrictEqual(changed.material, [{ kind: "numbers", oldTokens: ["4,210"], newTokens: ["4,210,000"] }])
      assert.strictEqual(result.outcome, "drifted")
      assert.strictEqual(result.summary.material, 1)
    }))

  it.effect("1,180 -> 11,180 (the match starts inside the number) and 37 -> 370 (it ends inside), both relocated text", () =>
    Effect.gen(function*() {
      const a = grown((yield* audit("Riders: 1,180 trips logged.\n", "Header line.\nRiders: 11,180 trips logged.\n", "1,180 trips")).finding)
      assert.strictEqual(a.candidate.text, "11,180 trips")
      assert.deepStrictEqual(a.material, [{ kind: "numbers", oldTokens: ["1,180"], newTokens: ["11,180"] }])
      const b = grown((yield* audit("Staff rose by 37 people.\n", "Intro.\nStaff rose by 370 people.\n", "Staff rose by 37")).finding)
      assert.strictEqual(b.candidate.text, "Staff rose by 370")
      assert.deepStrictEqual(b.material, [{ kind: "numbers", oldTokens: ["37"], newTokens: ["370"] }])
    }))

  it.effect("a sign, a decimal or a percent that joined the number is a change too", () =>
    Effect.gen(function*() {
      for (
        const [before, after, snippet, candidate] of [
          ["Margin was 5 points.\n", "Margin was −5 points.\n", "5 points", "−5 points"],
          ["The rate is 4 now.\n", "The rate is 4.5 now.\n", "The rate is 4", "The rate is 4.5"],
          ["Share of 30 units.\n", "Share of 30% units.\n", "Share of 30", "Share of 30%"]
        ] as const
      ) {
        const changed = grown((yield* audit(before, after, snippet)).finding)
        assert.strictEqual(changed.candidate.text, candidate, before)
        assert.isAbove(changed.material.length, 0, before)
      }
    }))

  it.effect("another occurrence that keeps its boundaries is relocated; an unchanged text is unchanged", () =>
    Effect.gen(function*() {
      const moved = (yield* audit("Net 4,210.\n", "Total 4,210,000 first. Net 4,210.\n", "4,210")).finding
      assert.strictEqual(moved.status, "relocated")
      if (moved.status !== "relocated") return
      assert.deepStrictEqual(moved.new.span, { start: 27, end: 32 })
      assert.strictEqual((yield* audit("Net 4,210.\n", "Net 4,210.\n", "4,210")).finding.status, "unchanged")
      // An excerpt that already cut the number in the old text is judged as it was verified: unchanged.
      assert.strictEqual((yield* audit("Net 4,210,000.\n", "Net 4,210,000.\n", "4,210")).finding.status, "unchanged")
    }))

  it("insideToken: numbers, separators, signs, words; never past either end", () => {
    assert.isTrue(insideToken("4,210,000", 5))
    assert.isTrue(insideToken("4,210,000", 6))
    assert.isFalse(insideToken("4,210, then", 5))
    assert.isTrue(insideToken("370", 2))
    assert.isTrue(insideToken("$30", 1))
    assert.isFalse(insideToken("3-5", 2))
    assert.isTrue(insideToken(" -5", 2))
    assert.isTrue(insideToken("impossible", 2))
    assert.isFalse(insideToken("a b", 1))
    assert.isFalse(insideToken("ab", 0))
    assert.isFalse(insideToken("ab", 2))
  })
})
