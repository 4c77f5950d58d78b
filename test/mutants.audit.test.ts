/**
 * Follow-up tests for the mutation run of `src/audit/Audit.ts` (docs/testing.md): `summarise` on
 * hand-built findings (every count, the material count, claims grouped in order of first drift,
 * the outcome), the thresholds' defaults and clamping (NaN, below 0), and a recapture failure that
 * names a source whose new capture is stored but unreadable (the stored capture's error wins).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Audit from "../src/audit/Audit.js"
import { AuditResult, auditNote, type Finding } from "../src/audit/Records.js"
import type { PipelineConfig } from "../src/Config.js"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt } from "./support.js"

const digest = (c: string) => c.repeat(64)
const at = "2026-11-30T09:00:00.000Z"
const location = { captureSha256: digest("a"), accessedAt: at, span: { start: 0, end: 4 } }
const fresh = { captureSha256: digest("b"), accessedAt: at }
const candidate = { text: "text", span: { start: 0, end: 4 }, similarity: 0.9, method: "m", scope: "document", threshold: 0.6 }
const claim = (claimIndex: number, citationIndex: number) => ({ kind: "claim", claimIndex, claimId: `c${claimIndex}`, citationIndex })
const fact = (index: number) => ({ kind: "fact", index, label: `f${index}` })
const head = (subject: unknown) => ({ subject, source: "https://x.test/a", snippet: "text", old: location })

const findings = Schema.decodeUnknownSync(Schema.Array(AuditResult.fields.findings.value), decodeOptions)([
  { status: "changed", ...head(claim(1, 0)), new: fresh, candidate, material: [] },
  { status: "unchanged", ...head(claim(0, 0)), new: location },
  { status: "deleted", ...head(claim(0, 1)), new: fresh },
  { status: "changed", ...head(fact(7)), new: fresh, candidate, material: [{ kind: "numbers", oldTokens: ["1"], newTokens: [] }] },
  { status: "source_missing", ...head(claim(1, 2)), reason: "not-captured", errorTag: "MissingCapture", detail: "none" },
  { status: "relocated", ...head(claim(1, 1)), new: location },
  { status: "changed", ...head(claim(2, 0)), new: fresh, candidate, material: [{ kind: "dates", oldTokens: [], newTokens: ["May 2026"] }] },
  { status: "relocated", ...head(fact(8)), new: location }
]) as ReadonlyArray<Finding>

describe("summarise", () => {
  it("counts every status and the changed findings with a material flag; groups each claim's drifted citations in order", () => {
    const thresholds = { anchor: 0.3, document: 0.7 }
    const result = Audit.summarise("answer", thresholds, findings)
    assert.deepStrictEqual(result, {
      format: "citegate.audit/1",
      of: "answer",
      outcome: "drifted",
      thresholds,
      summary: { citations: 8, unchanged: 1, relocated: 2, changed: 3, deleted: 1, source_missing: 1, material: 2 },
      findings,
      affected: [
        { kind: "claim", claimIndex: 1, claimId: "c1", citations: [{ citationIndex: 0, status: "changed" }, { citationIndex: 2, status: "source_missing" }] },
        { kind: "claim", claimIndex: 0, claimId: "c0", citations: [{ citationIndex: 1, status: "deleted" }] },
        { kind: "fact", index: 7, label: "f7", status: "changed" },
        { kind: "claim", claimIndex: 2, claimId: "c2", citations: [{ citationIndex: 0, status: "changed" }] }
      ],
      note: auditNote
    })
    Schema.decodeUnknownSync(AuditResult, decodeOptions)(Schema.encodeSync(AuditResult)(result))
  })

  it("only unchanged and relocated findings: stable, nothing affected; no findings at all: stable too", () => {
    const calm = findings.filter((f) => f.status === "unchanged" || f.status === "relocated")
    const result = Audit.summarise("report", Audit.defaultThresholds, calm)
    assert.strictEqual(result.outcome, "stable")
    assert.strictEqual(result.of, "report")
    assert.deepStrictEqual(result.affected, [])
    assert.deepStrictEqual(result.summary, { citations: 3, unchanged: 1, relocated: 2, changed: 0, deleted: 0, source_missing: 0, material: 0 })
    const empty = Audit.summarise("report", Audit.defaultThresholds, [])
    assert.deepStrictEqual([empty.outcome, empty.summary.citations, empty.affected], ["stable", 0, []])
  })

  it("each affected fact or claim citation carries its finding's status", () => {
    const drifted = findings.filter((f) => f.subject.kind === "fact" || f.status === "deleted" || f.status === "source_missing")
    assert.deepStrictEqual(Audit.summarise("report", Audit.defaultThresholds, drifted).affected.map((a) => a.kind === "fact" ? a.status : a.citations.map((c) => c.status).join()), [
      "deleted",
      "changed",
      "source_missing"
    ])
  })
})

const source = "https://policies.acme.test/terms.txt" as SourceUrl
const config = { sources: [source], labels: ["terms"] } as unknown as PipelineConfig

/** Audits one cited excerpt of an old text against a new record, both held in memory stores. */
const auditOne = (oldText: string, newRecords: ReadonlyArray<ReturnType<typeof makeCaptureRecord>>, snippet: string, options?: Audit.AuditOptions) =>
  Effect.gen(function*() {
    const old = makeCaptureRecord({ source, text: oldText, accessedAt, contentType: "text/plain" })
    const oldStore = MemoryStore.layer({ records: [old] }).pipe(Layer.orDie)
    const report = yield* Effect.flatMap(Gate.Gate, (gate) =>
      gate.check({ facts: [{ state: "cited", label: "terms", source, captureSha256: old.sha256, snippet }] })).pipe(
        Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(oldStore), Layer.orDie))
      )
    return yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(report, options)).pipe(
      Effect.provide(Audit.layer.pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Audit.fromStore(MemoryStore.layer({ records: newRecords }).pipe(Layer.orDie))),
        Layer.provide(oldStore),
        Layer.provide(Policy.layer(config))
      ))
    )
  })

const oldText = "Refunds are paid within 30 days of the request.\n"
const snippet = "Refunds are paid within 30 days of the request."
const newRecord = (text: string) => makeCaptureRecord({ source, text, accessedAt, contentType: "text/plain" })

describe("Audit thresholds and missing sources", () => {
  it("the default thresholds are 0.45 under the old anchor and 0.6 anywhere", () => {
    assert.deepStrictEqual(Audit.defaultThresholds, { anchor: 0.45, document: 0.6 })
  })

  it.effect("a threshold that is not a number takes the default; one below 0 is 0 (so any passage passes)", () =>
    Effect.gen(function*() {
      const result = yield* auditOne(oldText, [newRecord("Something else entirely, about cats.\n")], snippet, {
        thresholds: { anchor: Number.NaN, document: -0.5 }
      })
      assert.deepStrictEqual(result.thresholds, { anchor: 0.45, document: 0 })
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "changed")
      // With the defaults, the same passage is far below the threshold: deleted.
      const strict = yield* auditOne(oldText, [newRecord("Something else entirely, about cats.\n")], snippet, {
        thresholds: {}
      })
      assert.deepStrictEqual(strict.thresholds, { anchor: 0.45, document: 0.6 })
      assert.strictEqual(strict.findings[0]!.status, "deleted")
      if (strict.findings[0]!.status !== "deleted") return
      assert.strictEqual(strict.findings[0]!.nearest?.threshold, 0.6)
    }))

  it.effect("a recapture failure is named only when no capture is stored; a stored capture that cannot be read says why", () =>
    Effect.gen(function*() {
      const failures = new Map([[source as string, { tag: "UnexpectedStatus", detail: "HTTP 503" }]])
      // Nothing stored, a failure known: capture-failed with the failure's tag and detail.
      const none = (yield* auditOne(oldText, [], snippet, { captureFailures: failures })).findings[0]!
      assert.deepStrictEqual(
        none.status === "source_missing" ? [none.reason, none.errorTag, none.detail] : none.status,
        ["capture-failed", "UnexpectedStatus", "HTTP 503"]
      )
      // A stored capture, intact: the failure listed for the source changes nothing.
      const intact = (yield* auditOne(oldText, [newRecord(oldText)], snippet, { captureFailures: failures })).findings[0]!
      assert.strictEqual(intact.status, "unchanged")
      // A stored capture whose digest does not match its text: unreadable, with the store's error, not the failure.
      const tampered = { ...newRecord(oldText), sha256: digest("0") } as ReturnType<typeof makeCaptureRecord>
      const corrupt = (yield* auditOne(oldText, [tampered], snippet, { captureFailures: failures })).findings[0]!
      assert.strictEqual(corrupt.status, "source_missing")
      if (corrupt.status !== "source_missing") return
      assert.strictEqual(corrupt.reason, "unreadable")
      // (The store returns it; the new run's Verifier finds the digest does not match.)
      assert.strictEqual(corrupt.errorTag, "DigestMismatch")
      assert.match(corrupt.detail, /^The capture of https:\/\/policies\.acme\.test\/terms\.txt was altered: its text hashes to [0-9a-f]{12}…, not its recorded 000000000000…$/)
      // A stored record the store itself refuses (not a timestamp): unreadable, with the store's error.
      const malformed = { ...newRecord(oldText), accessedAt: "yesterday" } as unknown as ReturnType<typeof makeCaptureRecord>
      const refused = (yield* auditOne(oldText, [malformed], snippet, { captureFailures: failures })).findings[0]!
      assert.strictEqual(refused.status, "source_missing")
      if (refused.status !== "source_missing") return
      assert.deepStrictEqual([refused.reason, refused.errorTag, refused.detail], [
        "unreadable",
        "CorruptCapture",
        "The capture of https://policies.acme.test/terms.txt is corrupt (not-a-v1-record): not a citegate.capture/1 or " +
        "citegate.capture/2 record: accessedAt: must be an RFC 3339 UTC timestamp such as 2026-01-31T12:00:00.000Z"
      ])
    }))
})
