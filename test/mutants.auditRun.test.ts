/**
 * Follow-up tests for the mutation run of `src/audit/Audit.ts` (docs/testing.md): whole audits over
 * two in-memory runs (v1 records and v2 records with heading and page anchors), pinned to exact
 * findings: spans from `indexOf`, heading paths and pages written out, candidates compared with the
 * nearest-passage search called here on the section the audit should search. Fast (no HTTP, no
 * files), so a mutant costs little.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Answer from "../src/answer/Answer.js"
import { nearestIn, prepare } from "../src/anchor/Nearest.js"
import * as Audit from "../src/audit/Audit.js"
import { type Finding, limits } from "../src/audit/Records.js"
import { CaptureStore, type CaptureStoreShape } from "../src/store/CaptureStore.js"
import type { PipelineConfig } from "../src/Config.js"
import {
  type CaptureRecord,
  captureFormatV2,
  type CaptureRecordV2,
  type HeadingAnchor,
  makeCaptureRecord,
  type PageAnchor,
  sha256Of,
  type SourceUrl
} from "../src/Domain.js"
import { AuditBaselineRejected, DigestMismatch } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import type { VerifiedReport } from "../src/verify/VerifiedReport.js"
import { failureOf, spanNames } from "./mutants.support.js"
import { accessedAt } from "./support.js"

const source = (name: string) => `https://docs.acme.test/${name}` as SourceUrl
const MD = source("policy.md")
const TXT = source("notes.txt")
const PDF = source("manual.pdf")
const GONE = source("gone.txt")
const FAILED = source("failed.txt")
const sources = [MD, TXT, PDF, GONE, FAILED]
const config = { sources, labels: ["a", "b", "c", "d", "e", "f", "g", "h"] } as unknown as PipelineConfig

const v1 = (src: SourceUrl, text: string) => makeCaptureRecord({ source: src, text, accessedAt, contentType: "text/plain" })

/** A Markdown-like text whose lines starting with `# ` are level-1 headings, each section to the next heading. */
const withHeadings = (src: SourceUrl, text: string): { record: CaptureRecordV2; body: Uint8Array } => {
  const starts: Array<{ start: number; title: string }> = []
  let at = 0
  for (const line of text.split("\n")) {
    if (line.startsWith("# ")) starts.push({ start: at, title: line.slice(2) })
    at += line.length + 1
  }
  const headings: Array<HeadingAnchor> = starts.map((h, i) => ({
    level: 1,
    text: h.title,
    path: [h.title],
    start: h.start,
    end: i + 1 < starts.length ? starts[i + 1]!.start : text.length
  }))
  return v2(src, text, "markdown/1", { headings })
}

/** A text of pages (joined by a form feed), one page anchor each. */
const withPages = (src: SourceUrl, pageTexts: ReadonlyArray<string>): { record: CaptureRecordV2; body: Uint8Array } => {
  const pages: Array<PageAnchor> = []
  let at = 0
  pageTexts.forEach((t, i) => {
    pages.push({ number: i + 1, start: at, end: at + t.length })
    at += t.length + 1
  })
  return v2(src, pageTexts.join("\f"), "pdf/1", { pages })
}

const v2 = (
  src: SourceUrl,
  text: string,
  extraction: CaptureRecordV2["extraction"],
  anchors: { headings?: ReadonlyArray<HeadingAnchor>; pages?: ReadonlyArray<PageAnchor> }
) => {
  const body = new TextEncoder().encode(`body of ${text}`)
  const record: CaptureRecordV2 = {
    format: captureFormatV2,
    source: src,
    sha256: sha256Of(text),
    accessedAt,
    extraction,
    body: { sha256: sha256Of(body), byteLength: body.byteLength, contentType: "application/octet-stream" },
    ...anchors,
    text
  }
  return { record, body }
}

type Stored = CaptureRecord | { readonly record: CaptureRecordV2; readonly body: Uint8Array }
const isWithBody = (entry: Stored): entry is { readonly record: CaptureRecordV2; readonly body: Uint8Array } => "body" in entry && entry.body instanceof Uint8Array

/** A memory store holding these records, and a count of reads per source. */
const storeOf = (entries: ReadonlyArray<Stored>) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.make()
    for (const entry of entries) {
      if (isWithBody(entry)) yield* store.write(entry.record, entry.body)
      else yield* store.write(entry)
    }
    const reads = new Map<string, number>()
    const counting: CaptureStoreShape = {
      ...store,
      read: (src) => {
        reads.set(src, (reads.get(src) ?? 0) + 1)
        return store.read(src)
      }
    }
    return { store: counting, reads }
  })

const verify = (oldStore: CaptureStoreShape, facts: ReadonlyArray<Record<string, unknown>>) =>
  Effect.flatMap(Gate.Gate, (gate) => gate.check({ facts })).pipe(
    Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(Layer.succeed(CaptureStore, oldStore)), Layer.orDie))
  )

const auditWith = <A, E>(
  oldStore: CaptureStoreShape,
  newStore: CaptureStoreShape,
  f: (audit: Audit.AuditShape) => Effect.Effect<A, E>
) =>
  Effect.flatMap(Audit.Audit, f).pipe(
    Effect.provide(Audit.layer.pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Audit.fromStore(Layer.succeed(CaptureStore, newStore))),
      Layer.provide(Layer.succeed(CaptureStore, oldStore)),
      Layer.provide(Policy.layer(config))
    ))
  )

const cited = (label: string, src: SourceUrl, record: CaptureRecord, snippet: string, anchor: Record<string, unknown> = {}) => ({
  state: "cited",
  label,
  source: src,
  captureSha256: record.sha256,
  snippet,
  ...anchor
})

const span = (text: string, snippet: string, from = 0) => {
  const start = text.indexOf(snippet, from)
  assert.isAtLeast(start, 0, snippet)
  return { start, end: start + snippet.length }
}

/** The candidate the audit should report: the nearest passage of `[from, to)`, located, with its threshold. */
const expectedCandidate = (
  record: CaptureRecord,
  snippet: string,
  range: { from: number; to: number },
  scope: "anchor" | "document",
  threshold: number,
  where: Record<string, unknown>
) => {
  const found = nearestIn(prepare(record.text, range), snippet, { minScore: 0 })!
  return { text: found.text, span: { ...found.span }, similarity: found.score, method: found.method, scope, threshold, ...where }
}

// ---------------------------------------------------------------------------------------------------------------------

const oldMd = withHeadings(
  MD,
  "# Limits\nEach account may send at most 30 requests per second.\nBursts of 50 are allowed.\n" +
    "# Retention\nDeleted projects are kept for 14 days.\n" +
    "# Support\nSupport answers within two working days.\n"
)
const newMd = withHeadings(
  MD,
  "# Retention\nDeleted projects are kept for 14 days.\n" +
    "# Limits\nEach account may send at most 20 requests per second.\nBursts of 50 are allowed.\n" +
    "# Support\nSupport answers within two working days.\n"
)
const oldTxt = v1(TXT, "Fleet notes.\nThe fleet grew to 42 bikes in Q3.\nRiders logged 1,200 trips.\n")
const newTxt = v1(TXT, "Fleet notes.\nThe fleet grew to 42 bikes in Q3.\nRiders logged 1,150 trips.\n")
const oldPdf = withPages(PDF, ["Install the unit within 2 metres of the outlet.", "Keep the manual."])
const newPdf = withPages(PDF, ["Cover page.", "Install the unit within 3 metres of the outlet.", "Keep the manual."])
const oldGone = v1(GONE, "This page will not be served again.\n")
const oldFailed = v1(FAILED, "This page failed to load again.\n")

const q = {
  limit: "Each account may send at most 30 requests per second.",
  bursts: "Bursts of 50 are allowed.",
  retention: "Deleted projects are kept for 14 days.",
  support: "Support answers within two working days.",
  fleet: "The fleet grew to 42 bikes in Q3.",
  trips: "Riders logged 1,200 trips.",
  install: "Install the unit within 2 metres of the outlet.",
  gone: "This page will not be served again.",
  failed: "This page failed to load again."
}

describe("Audit over two in-memory runs", () => {
  it.effect("every status, with exact spans, anchors, candidates and flags; each source read once", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([oldMd, oldTxt, oldPdf, oldGone, oldFailed])
      const now = yield* storeOf([newMd, newTxt, newPdf])
      const facts = [
        cited("a", MD, oldMd.record, q.limit, { heading: ["Limits"] }),
        { state: "unavailable", label: "b", reason: "not stated anywhere" },
        cited("c", MD, oldMd.record, q.retention, { heading: ["Retention"] }),
        cited("d", MD, oldMd.record, q.support),
        cited("e", TXT, oldTxt, q.trips),
        cited("f", PDF, oldPdf.record, q.install, { page: 1 }),
        cited("g", GONE, oldGone, q.gone),
        cited("h", FAILED, oldFailed, q.failed)
      ]
      const report = yield* verify(old.store, facts)
      const failures = new Map([[FAILED as string, { tag: "UnexpectedStatus", detail: "HTTP 503" }]])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { captureFailures: failures }))

      const oldT = oldMd.record.text
      const newT = newMd.record.text
      const oldLoc = (record: CaptureRecord, snippet: string, where: Record<string, unknown>) => ({
        captureSha256: record.sha256,
        accessedAt,
        span: span(record.text, snippet),
        ...where
      })
      const fresh = (record: CaptureRecord) => ({ captureSha256: record.sha256, accessedAt })
      const limitsSection = newMd.record.headings!.find((h) => h.text === "Limits")!
      const page2 = newPdf.record.pages![1]!
      const expected: ReadonlyArray<unknown> = [
        {
          status: "changed",
          subject: { kind: "fact", index: 0, label: "a" },
          source: MD,
          snippet: q.limit,
          old: oldLoc(oldMd.record, q.limit, { heading: ["Limits"] }),
          new: fresh(newMd.record),
          candidate: expectedCandidate(newMd.record, q.limit, { from: limitsSection.start, to: limitsSection.end }, "anchor", 0.45, {
            heading: ["Limits"]
          }),
          material: [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }]
        },
        {
          status: "relocated",
          subject: { kind: "fact", index: 2, label: "c" },
          source: MD,
          snippet: q.retention,
          old: oldLoc(oldMd.record, q.retention, { heading: ["Retention"] }),
          new: { ...fresh(newMd.record), span: span(newT, q.retention), heading: ["Retention"] }
        },
        {
          status: "unchanged",
          subject: { kind: "fact", index: 3, label: "d" },
          source: MD,
          snippet: q.support,
          old: oldLoc(oldMd.record, q.support, { heading: ["Support"] }),
          new: { ...fresh(newMd.record), span: span(oldT, q.support), heading: ["Support"] }
        },
        {
          status: "changed",
          subject: { kind: "fact", index: 4, label: "e" },
          source: TXT,
          snippet: q.trips,
          old: oldLoc(oldTxt, q.trips, {}),
          new: fresh(newTxt),
          candidate: expectedCandidate(newTxt, q.trips, { from: 0, to: newTxt.text.length }, "document", 0.6, {}),
          material: [{ kind: "numbers", oldTokens: ["1,200"], newTokens: ["1,150"] }]
        },
        {
          status: "changed",
          subject: { kind: "fact", index: 5, label: "f" },
          source: PDF,
          snippet: q.install,
          old: oldLoc(oldPdf.record, q.install, { page: 1 }),
          new: fresh(newPdf.record),
          // Page 1 of the new text holds only the cover: the whole text is searched, and the passage is on page 2.
          candidate: expectedCandidate(newPdf.record, q.install, { from: 0, to: newPdf.record.text.length }, "document", 0.6, {
            page: 2
          }),
          material: [{ kind: "numbers", oldTokens: ["2"], newTokens: ["3"] }]
        },
        {
          status: "source_missing",
          subject: { kind: "fact", index: 6, label: "g" },
          source: GONE,
          snippet: q.gone,
          old: oldLoc(oldGone, q.gone, {}),
          reason: "not-captured",
          errorTag: "MissingCapture",
          detail: `No capture of ${GONE} exists in this run`
        },
        {
          status: "source_missing",
          subject: { kind: "fact", index: 7, label: "h" },
          source: FAILED,
          snippet: q.failed,
          old: oldLoc(oldFailed, q.failed, {}),
          reason: "capture-failed",
          errorTag: "UnexpectedStatus",
          detail: "HTTP 503"
        }
      ]
      assert.deepStrictEqual(result.findings, expected as ReadonlyArray<Finding>)
      // The page-2 candidate lies on page 2 of the new text.
      const pdfFinding = result.findings[4]!
      if (pdfFinding.status === "changed") assert.isAtLeast(pdfFinding.candidate.span.start, page2.start)
      assert.deepStrictEqual(result.summary, { citations: 7, unchanged: 1, relocated: 1, changed: 3, deleted: 0, source_missing: 2, material: 3 })
      assert.strictEqual(result.outcome, "drifted")
      assert.strictEqual(result.of, "report")
      assert.deepStrictEqual(result.thresholds, { anchor: 0.45, document: 0.6 })
      // Each source of the new run is read once by the audit, however many citations name it (and once more
      // by the new run's Verifier when it was there).
      assert.deepStrictEqual(Object.fromEntries(now.reads), { [MD]: 2, [TXT]: 2, [PDF]: 2, [GONE]: 1, [FAILED]: 1 })
    }))

  it.effect("an excerpt gone from its old heading is searched again anywhere: relocated under its new heading", () =>
    Effect.gen(function*() {
      const before = withHeadings(MD, "# Limits\nBursts of 50 are allowed.\n# Support\nSupport answers within two working days.\n")
      const after = withHeadings(MD, "# Limits\nNo bursts.\n# Support\nSupport answers within two working days.\nBursts of 50 are allowed.\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, q.bursts, { heading: ["Limits"] })])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      assert.deepStrictEqual(result.findings, [{
        status: "relocated",
        subject: { kind: "fact", index: 0, label: "a" },
        source: MD,
        snippet: q.bursts,
        old: { captureSha256: before.record.sha256, accessedAt, span: span(before.record.text, q.bursts), heading: ["Limits"] },
        new: { captureSha256: after.record.sha256, accessedAt, span: span(after.record.text, q.bursts), heading: ["Support"] }
      }] as ReadonlyArray<Finding>)
      assert.deepStrictEqual(result.affected, [])
      assert.strictEqual(result.outcome, "stable")
    }))

  it.effect("an excerpt found twice in the new text: the occurrence under its old heading is its new span", () =>
    Effect.gen(function*() {
      const before = withHeadings(MD, `# Intro\nHello.\n# Limits\n${q.bursts}\n`)
      // The first occurrence now lies under another heading; the one under "Limits" moved further down.
      const after = withHeadings(MD, `# Intro\n${q.bursts}\nHello.\n# Limits\nNew line.\n${q.bursts}\n`)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, q.bursts, { heading: ["Limits"] })])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const limitsStart = after.record.text.indexOf("# Limits")
      assert.deepStrictEqual(result.findings, [{
        status: "relocated",
        subject: { kind: "fact", index: 0, label: "a" },
        source: MD,
        snippet: q.bursts,
        old: { captureSha256: before.record.sha256, accessedAt, span: span(before.record.text, q.bursts), heading: ["Limits"] },
        new: { captureSha256: after.record.sha256, accessedAt, span: span(after.record.text, q.bursts, limitsStart), heading: ["Limits"] }
      }] as ReadonlyArray<Finding>)
    }))

  it.effect("deleted without a nearest passage when none can be searched (an excerpt too short for the fuzzy search)", () =>
    Effect.gen(function*() {
      const before = v1(TXT, "Prices: cheap.\n")
      const after = v1(TXT, "Prices: dear.\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, "cheap")])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      assert.deepStrictEqual(result.findings, [{
        status: "deleted",
        subject: { kind: "fact", index: 0, label: "a" },
        source: TXT,
        snippet: "cheap",
        old: { captureSha256: before.sha256, accessedAt, span: span(before.text, "cheap") },
        new: { captureSha256: after.sha256, accessedAt }
      }] as ReadonlyArray<Finding>)
      assert.notProperty(result.findings[0]!, "nearest")
    }))

  it.effect("the candidate search of each citation uses its own section, even for two sections of one text", () =>
    Effect.gen(function*() {
      const before = withHeadings(
        MD,
        "# One\nThe first rule says apples cost 3 euros.\n# Two\nThe second rule says pears cost 4 euros.\n"
      )
      const after = withHeadings(
        MD,
        "# One\nThe first rule says apples cost 5 euros.\n# Two\nThe second rule says pears cost 6 euros.\n"
      )
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const one = "The first rule says apples cost 3 euros."
      const two = "The second rule says pears cost 4 euros."
      const report = yield* verify(old.store, [
        cited("a", MD, before.record, one, { heading: ["One"] }),
        cited("b", MD, before.record, two, { heading: ["Two"] })
      ])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const [h1, h2] = after.record.headings!
      assert.deepStrictEqual(
        result.findings.map((f) => f.status === "changed" ? f.candidate : f.status),
        [
          expectedCandidate(after.record, one, { from: h1!.start, to: h1!.end }, "anchor", 0.45, { heading: ["One"] }),
          expectedCandidate(after.record, two, { from: h2!.start, to: h2!.end }, "anchor", 0.45, { heading: ["Two"] })
        ]
      )
      assert.deepStrictEqual(result.findings.map((f) => f.status === "changed" ? f.candidate.text : ""), [
        "The first rule says apples cost 5 euros.",
        "The second rule says pears cost 6 euros."
      ])
    }))

  it.effect("deleted: the nearest passage is the better of the anchored one and the one anywhere, each with its threshold", () =>
    Effect.gen(function*() {
      const snippet = "Support answers within two working days."
      // Under the old heading only a weak match; elsewhere a closer (but still failing) one.
      const before = withHeadings(MD, `# Help\n${snippet}\n# Other\nNothing here.\n`)
      const after = withHeadings(MD, "# Help\nWe close on Sundays.\n# Other\nSupport answers in two days.\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, snippet, { heading: ["Help"] })])
      const high = { thresholds: { anchor: 0.9, document: 0.9 } }
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, high))
      const [support] = after.record.headings!
      const anchored = expectedCandidate(after.record, snippet, { from: support!.start, to: support!.end }, "anchor", 0.9, { heading: ["Help"] })
      const anywhere = expectedCandidate(after.record, snippet, { from: 0, to: after.record.text.length }, "document", 0.9, {
        heading: ["Other"]
      })
      // The fixture is what the test says: neither passes, and the one anywhere is the better.
      assert.isBelow(anchored.similarity, 0.9)
      assert.isBelow(anywhere.similarity, 0.9)
      assert.isAbove(anywhere.similarity, anchored.similarity)
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding, {
        status: "deleted",
        subject: { kind: "fact", index: 0, label: "a" },
        source: MD,
        snippet,
        old: { captureSha256: before.record.sha256, accessedAt, span: span(before.record.text, snippet), heading: ["Help"] },
        new: { captureSha256: after.record.sha256, accessedAt },
        nearest: anywhere
      } as Finding)

      // The reverse: the anchored passage is the better one (and still fails its threshold).
      const after2 = withHeadings(MD, "# Help\nSupport answers within ten days.\n# Other\nWe close on Sundays.\n")
      const now2 = yield* storeOf([after2])
      const strict = { thresholds: { anchor: 0.99, document: 0.99 } }
      const result2 = yield* auditWith(old.store, now2.store, (audit) => audit.auditReport(report, strict))
      const [support2] = after2.record.headings!
      const anchored2 = expectedCandidate(after2.record, snippet, { from: support2!.start, to: support2!.end }, "anchor", 0.99, {
        heading: ["Help"]
      })
      const anywhere2 = nearestIn(prepare(after2.record.text), snippet, { minScore: 0 })!
      assert.isAtMost(anywhere2.score, anchored2.similarity)
      const finding2 = result2.findings[0]!
      assert.strictEqual(finding2.status, "deleted")
      if (finding2.status === "deleted") assert.deepStrictEqual(finding2.nearest, anchored2)
      assert.deepStrictEqual(result2.thresholds, { anchor: 0.99, document: 0.99 })
    }))

  it.effect("a candidate exactly at its threshold passes, under the old heading, in the window and in the whole text", () =>
    Effect.gen(function*() {
      // Under the old heading: the anchor threshold set to the candidate's own similarity.
      const old = yield* storeOf([oldMd])
      const now = yield* storeOf([newMd])
      const report = yield* verify(old.store, [cited("a", MD, oldMd.record, q.limit, { heading: ["Limits"] })])
      const section = newMd.record.headings!.find((h) => h.text === "Limits")!
      const own = expectedCandidate(newMd.record, q.limit, { from: section.start, to: section.end }, "anchor", 0, {}).similarity
      assert.isBelow(own, 1)
      const exact = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { anchor: own, document: 1 } }))
      assert.deepStrictEqual(exact.findings.map((f) => f.status === "changed" ? [f.candidate.scope, f.candidate.similarity] : f.status), [["anchor", own]])

      // The whole text (a v1 record): the document threshold set to the candidate's own similarity.
      const oldT = yield* storeOf([oldTxt])
      const nowT = yield* storeOf([newTxt])
      const reportT = yield* verify(oldT.store, [cited("a", TXT, oldTxt, q.trips)])
      const ownT = nearestIn(prepare(newTxt.text), q.trips, { minScore: 0 })!.score
      const exactT = yield* auditWith(oldT.store, nowT.store, (audit) => audit.auditReport(reportT, { thresholds: { document: ownT } }))
      assert.deepStrictEqual(exactT.findings.map((f) => f.status === "changed" ? [f.candidate.scope, f.candidate.similarity] : f.status), [["document", ownT]])
    }))

  it.effect("several sections under the same heading path: the first of equally near passages is the candidate", () =>
    Effect.gen(function*() {
      const rule = "Each account may send at most 30 requests per second."
      const edited = "Each account may send at most 20 requests per second."
      const before = withHeadings(MD, `# Rules\n${rule}\n# Other\nNothing.\n`)
      const after = withHeadings(MD, `# Rules\n${edited}\n# Other\nNothing.\n# Rules\n${edited}\n`)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, rule, { heading: ["Rules"] })])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "changed")
      if (finding.status === "changed") assert.deepStrictEqual(finding.candidate.span, span(after.record.text, edited))
    }))

  it.effect("thresholds above 1 are 1; values inside [0, 1] are kept as given", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([oldTxt])
      const now = yield* storeOf([newTxt])
      const report = yield* verify(old.store, [cited("a", TXT, oldTxt, q.trips)])
      const high = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { anchor: 7, document: 1.5 } }))
      assert.deepStrictEqual(high.thresholds, { anchor: 1, document: 1 })
      const finding = high.findings[0]!
      assert.strictEqual(finding.status, "deleted")
      if (finding.status === "deleted") assert.strictEqual(finding.nearest?.threshold, 1)
      const given = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { anchor: 0.3, document: 0.7 } }))
      assert.deepStrictEqual(given.thresholds, { anchor: 0.3, document: 0.7 })
      const one = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { anchor: 0, document: 1 } }))
      assert.deepStrictEqual(one.thresholds, { anchor: 0, document: 1 })
    }))

  it.effect("an excerpt of exactly limits.maxCandidateExcerpt code units is searched; one more is not", () =>
    Effect.gen(function*() {
      const paragraph = Array.from({ length: 120 }, (_, i) => `Clause ${i} text goes on. `).join("")
      const before = v1(TXT, `${paragraph}\n`)
      const after = v1(TXT, `Article${paragraph.slice(6)}\n`)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const atLimit = paragraph.slice(0, limits.maxCandidateExcerpt)
      const over = paragraph.slice(0, limits.maxCandidateExcerpt + 1)
      const report = yield* verify(old.store, [cited("a", TXT, before, atLimit), cited("b", TXT, before, over)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      assert.deepStrictEqual(result.findings.map((f) => f.status), ["changed", "deleted"])
      const second = result.findings[1]!
      assert.deepStrictEqual(second.status === "deleted" ? [second.unsearched, second.nearest, second.new] : [], [
        "excerpt-too-long",
        undefined,
        { captureSha256: after.sha256, accessedAt }
      ])
      assert.notProperty(second, "nearest")
    }))

  it.effect("a verified report whose recorded span does not hold its excerpt: the span verification finds is used", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([oldTxt])
      const now = yield* storeOf([oldTxt])
      const report = yield* verify(old.store, [cited("a", TXT, oldTxt, q.fleet)])
      const entry = report.facts[0]!
      assert.isTrue("evidence" in entry)
      const right = span(oldTxt.text, q.fleet)
      const shifted = { ...report, facts: [{ ...entry, evidence: { ...(entry as { evidence: object }).evidence, span: { start: right.start + 1, end: right.end + 1 } } }] } as unknown as VerifiedReport
      // A span of the right length at the wrong place, and one at the right place of the wrong length.
      const shorter = { ...report, facts: [{ ...entry, evidence: { ...(entry as { evidence: object }).evidence, span: { start: right.start, end: right.end - 1 } } }] } as unknown as VerifiedReport
      for (const r of [shifted, shorter]) {
        const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(r))
        assert.deepStrictEqual(result.findings.map((f) => [f.status, f.old.span, f.status === "unchanged" ? f.new.span : undefined]), [
          ["unchanged", right, right]
        ])
      }
    }))

  it.effect("the operations' span names", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([oldTxt])
      const now = yield* storeOf([oldTxt])
      const report = yield* verify(old.store, [cited("a", TXT, oldTxt, q.fleet)])
      const names = yield* spanNames(auditWith(old.store, now.store, (audit) => audit.auditReport(report)))
      assert.include(names, "Audit.auditReport")
      const answerNames = yield* spanNames(auditWith(old.store, now.store, (audit) => audit.auditAnswer({ claims: [] } as never)))
      assert.include(answerNames, "Audit.auditAnswer")
    }))
})

const filler = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `Filler line ${from + i} says little of note.\n`).join("")

describe("the candidate search near the old position", () => {
  const sentence = "Each account may send at most 30 requests per second to the public API."
  const before = v1(TXT, filler(0, 3000) + sentence + "\n" + filler(3000, 6000))
  const near = "Each account may send at most 25 requests per minute to the public API."
  const far = "Each account may send at most 20 requests per second to the public API."

  /** The window the audit searches first: 16 KiB (or 16 excerpt lengths) each side of the old start scaled to the new length. */
  const windowOf = (newLength: number) => {
    const radius = Math.max(16 * 1024, 16 * sentence.length)
    const center = Math.round(before.text.indexOf(sentence) * (newLength / before.text.length))
    return { from: Math.max(0, center - radius), to: Math.min(newLength, center + sentence.length + radius) }
  }

  it.effect("a passage inside the window passes before the whole text is searched, although a closer match lies outside", () =>
    Effect.gen(function*() {
      assert.strictEqual(Audit.nearbyRadius, 16 * 1024)
      const after = v1(TXT, filler(0, 2990) + near + "\n" + filler(2990, 6000) + far + "\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      const window = windowOf(after.text.length)
      assert.isAbove(window.from, 0)
      assert.isBelow(window.to, after.text.indexOf(far))
      assert.deepStrictEqual(finding.candidate, expectedCandidate(after, sentence, window, "document", 0.6, {}))
      assert.strictEqual(finding.candidate.text, near)
      // The whole text's nearest is the far one: the window decided.
      assert.strictEqual(nearestIn(prepare(after.text), sentence, { minScore: 0 })!.text, far)
    }))

  it.effect("a passage in the window exactly at the document threshold passes there (the far one is not taken)", () =>
    Effect.gen(function*() {
      const after = v1(TXT, filler(0, 2990) + near + "\n" + filler(2990, 6000) + far + "\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const own = nearestIn(prepare(after.text, windowOf(after.text.length)), sentence, { minScore: 0 })!.score
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { document: own } }))
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding.status === "changed" ? [finding.candidate.text, finding.candidate.similarity] : finding.status, [near, own])
    }))

  it.effect("a passage moved out of the window is found by the whole-text search", () =>
    Effect.gen(function*() {
      const after = v1(TXT, filler(0, 6000) + far + "\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      assert.deepStrictEqual(finding.candidate, expectedCandidate(after, sentence, { from: 0, to: after.text.length }, "document", 0.6, {}))
      assert.strictEqual(finding.candidate.text, far)
    }))
})

describe("interruption between candidate searches", () => {
  it.live("an audit whose candidate searches take long yields between them: a timeout lands before the audit ends", () =>
    Effect.gen(function*() {
      const sentences = Array.from({ length: 8 }, (_, i) => `Clause ${i} of the tariff sets a fee of ${100 + i} euros per request.`)
      const before = v1(TXT, filler(0, 6000) + sentences.join("\n") + "\n" + filler(6000, 12000))
      const after = v1(TXT, filler(0, 12000))
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, sentences.map((s, i) => cited(["a", "b", "c", "d", "e", "f", "g", "h"][i]!, TXT, before, s)))
      // Without the timeout the audit finishes: every clause deleted.
      const started = Date.now()
      const whole = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const took = Date.now() - started
      assert.deepStrictEqual(whole.summary.deleted, 8)
      // The searches take several yield slices (20 ms each), so a 1 ms timeout can land at the first yield.
      assert.isAbove(took, 60, "the fixture is too small to need yields on this machine")
      const timed = yield* Effect.either(auditWith(old.store, now.store, (audit) => audit.auditReport(report)).pipe(Effect.timeout("1 millis")))
      assert.isTrue(timed._tag === "Left" && timed.left._tag === "TimeoutException", JSON.stringify(timed._tag))
    }))
})

describe("the window's size and ends", () => {
  const sentence = "Each account may send at most 30 requests per second to the public API."
  const near = "Each account may send at most 25 requests per minute to the public API."
  const far = "Each account may send at most 20 requests per second to the public API."
  const r = 16 * 1024
  const L = sentence.length
  const pad = (n: number) => {
    if (n === 0) return ""
    const line = "Filler line says little of note.\n"
    return line.repeat(Math.ceil(n / line.length)).slice(0, n - 1) + "\n"
  }

  /** Old and new texts of the same length: the old sentence at `p`, the near passage at `nearAt`, the far one at `farAt`. */
  const texts = (length: number, p: number, nearAt: number, farAt: number) => {
    const build = (parts: ReadonlyArray<readonly [number, string]>) => {
      let text = ""
      for (const [at, piece] of [...parts].sort((x, y) => x[0] - y[0])) text += pad(at - text.length) + piece
      return text + pad(length - text.length)
    }
    const oldText = build([[p, sentence], [farAt, "x".repeat(L)]])
    const newText = build([[nearAt, near], [farAt, far]])
    assert.strictEqual(oldText.length, length)
    assert.strictEqual(newText.length, length)
    return { before: v1(TXT, oldText), after: v1(TXT, newText) }
  }

  const candidateText = (before: CaptureRecord, after: CaptureRecord) =>
    Effect.gen(function*() {
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      return finding.status === "changed" ? finding.candidate.text : finding.status
    })

  it.effect("a window of half the text or more is not searched on its own: the whole text is", () =>
    Effect.gen(function*() {
      // 2r + L is exactly half the text: the whole text is searched and the better, far passage wins.
      const half = texts(2 * (2 * r + L), 1000, 1000, 40_000)
      assert.strictEqual(yield* candidateText(half.before, half.after), far)
      // Two code units longer: the window is searched first and the near passage passes.
      const longer = texts(2 * (2 * r + L) + 2, 1000, 1000, 40_000)
      assert.strictEqual(yield* candidateText(longer.before, longer.after), near)
    }))

  it.effect("the window ends one excerpt length after the old position's radius, and starts a radius before it", () =>
    Effect.gen(function*() {
      const length = 200_000
      const p = 100_000
      // The near passage ends exactly at the window's end: searched in the window, it passes.
      const atEnd = texts(length, p, p + r, 150_000)
      assert.strictEqual(yield* candidateText(atEnd.before, atEnd.after), near)
      // It starts exactly at the window's start.
      const atStart = texts(length, p, p - r, 20_000)
      assert.strictEqual(yield* candidateText(atStart.before, atStart.after), near)
      // Just outside either end: the window misses it, so the whole text decides (the far passage).
      const pastEnd = texts(length, p, p + r + L, 150_000)
      assert.strictEqual(yield* candidateText(pastEnd.before, pastEnd.after), far)
      const beforeStart = texts(length, p, p - r - L, 20_000)
      assert.strictEqual(yield* candidateText(beforeStart.before, beforeStart.after), far)
    }))
})

describe("edges of the candidate search", () => {
  it.effect("options without capture failures: a source missing from the new run is not-captured", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([oldGone])
      const now = yield* storeOf([])
      const report = yield* verify(old.store, [cited("a", GONE, oldGone, q.gone)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: {} }))
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding.status === "source_missing" ? [finding.reason, finding.errorTag] : finding.status, ["not-captured", "MissingCapture"])
    }))

  it.effect("a weak passage under the old heading (below the search's default floor) is still the nearest, with the anchor scope", () =>
    Effect.gen(function*() {
      const snippet = "Support answers within two working days."
      const before = withHeadings(MD, `# Help\n${snippet}\n`)
      const after = withHeadings(MD, "# Help\nWe close on Sundays.\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, snippet, { heading: ["Help"] })])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const [help] = after.record.headings!
      const anchored = expectedCandidate(after.record, snippet, { from: help!.start, to: help!.end }, "anchor", 0.45, { heading: ["Help"] })
      assert.isBelow(anchored.similarity, 0.45)
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "deleted")
      if (finding.status === "deleted") assert.deepStrictEqual(finding.nearest, anchored)
    }))

  it.effect("an excerpt too short to search, under a heading and in a long text: deleted without a nearest passage", () =>
    Effect.gen(function*() {
      const before = withHeadings(MD, "# Prices\nPrices: cheap.\n")
      const after = withHeadings(MD, "# Prices\nPrices: dear.\n")
      const longBefore = v1(TXT, filler(0, 3000) + "Prices: cheap.\n" + filler(3000, 6000))
      const longAfter = v1(TXT, filler(0, 3000) + "Prices: dear.\n" + filler(3000, 6000))
      const old = yield* storeOf([before, longBefore])
      const now = yield* storeOf([after, longAfter])
      const report = yield* verify(old.store, [
        cited("a", MD, before.record, "cheap", { heading: ["Prices"] }),
        cited("b", TXT, longBefore, "cheap")
      ])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      assert.deepStrictEqual(result.findings.map((f) => [f.status, "nearest" in f]), [["deleted", false], ["deleted", false]])
    }))

  it.effect("several sections under the old heading path: the best passage of any of them, not the first", () =>
    Effect.gen(function*() {
      const rule = "Each account may send at most 30 requests per second to the public API."
      const weak = "Accounts may send requests."
      const close = "Each account may send at most 20 requests per second to the public API."
      const before = withHeadings(MD, `# Rules\n${rule}\n`)
      const after = withHeadings(MD, `# Rules\n${weak}\n# Other\nNothing.\n# Rules\n${close}\n`)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", MD, before.record, rule, { heading: ["Rules"] })])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding.status === "changed" ? [finding.candidate.text, finding.candidate.span, finding.candidate.scope] : finding.status, [
        close,
        span(after.record.text, close),
        "anchor"
      ])
    }))

  it.effect("the window's centre is the old position scaled to the new length", () =>
    Effect.gen(function*() {
      const sentence = "Each account may send at most 30 requests per second to the public API."
      const near = "Each account may send at most 25 requests per minute to the public API."
      const far = "Each account may send at most 20 requests per second to the public API."
      // Old: the sentence half-way through 200,000 code units. New: twice as long, the edited passage half-way
      // (at 200,000), the better match far from it.
      const line = "Filler line says little of note.\n"
      const fill = (n: number) => line.repeat(Math.ceil(n / line.length)).slice(0, n - 1) + "\n"
      const before = v1(TXT, fill(100_000) + sentence + fill(100_000 - sentence.length))
      const after = v1(TXT, fill(200_000) + near + fill(100_000) + far + fill(100_000 - 2 * near.length))
      assert.strictEqual(after.text.length, 2 * before.text.length)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding.status === "changed" ? finding.candidate.text : finding.status, near)
    }))

  it.effect("in the window, a passage below the search's default floor passes a lower document threshold", () =>
    Effect.gen(function*() {
      const sentence = "Each account may send at most 30 requests per second to the public API."
      const weak = "Accounts may send some requests to the API."
      const far = "Each account may send at most 20 requests per second to the public API."
      const before = v1(TXT, filler(0, 3000) + sentence + "\n" + filler(3000, 6000))
      const after = v1(TXT, filler(0, 3000) + weak + "\n" + filler(3000, 6000) + far + "\n")
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const center = Math.round(before.text.indexOf(sentence) * (after.text.length / before.text.length))
      const window = { from: center - 16 * 1024, to: center + sentence.length + 16 * 1024 }
      const expected = expectedCandidate(after, sentence, window, "document", 0.2, {})
      assert.include(expected.text, weak)
      assert.isBelow(expected.similarity, 0.6)
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report, { thresholds: { document: 0.2 } }))
      const finding = result.findings[0]!
      assert.deepStrictEqual(finding.status === "changed" ? finding.candidate : finding.status, expected)
    }))
})

describe("the window's ends never split a surrogate pair", () => {
  // An excerpt that begins and ends with surrogate pairs, and its edited passage. U+1F400 is D83D DC00 and
  // U+1F3FF is D83C DFFF: the first and last low surrogates.
  const sentence = "\u{1F400}\u{1F400} Each account may send at most 30 requests per second to the public API. \u{1F3FF}\u{1F3FF}"
  const near = "\u{1F400}\u{1F400} Each account may send at most 25 requests per minute to the public API. \u{1F3FF}\u{1F3FF}"
  const r = 16 * 1024
  const L = sentence.length
  const length = 200_000
  const p = 100_000
  const line = "Filler line says little of note.\n"
  const pad = (n: number) => line.repeat(Math.ceil(n / line.length)).slice(0, n - 1) + "\n"
  /** Old and new texts of the same length (so the window's centre is `p`), the passage at `at` in the new one. */
  const texts = (at: number) => {
    const before = v1(TXT, pad(p) + sentence + pad(length - p - L))
    const after = v1(TXT, pad(at) + near + pad(length - at - L))
    assert.strictEqual(after.text.length, length)
    return { before, after }
  }
  const candidateOf = (at: number) =>
    Effect.gen(function*() {
      const { after, before } = texts(at)
      const old = yield* storeOf([before])
      const now = yield* storeOf([after])
      const report = yield* verify(old.store, [cited("a", TXT, before, sentence)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditReport(report))
      const finding = result.findings[0]!
      return finding.status === "changed" ? [finding.candidate.text, finding.candidate.span.start - at] : finding.status
    })

  it.effect("the window's start on the second half of a pair moves back to the pair: the passage keeps its first emoji", () =>
    Effect.gen(function*() {
      // The passage's first pair starts one code unit before the window's start (p - r).
      assert.deepStrictEqual(yield* candidateOf(p - r - 1), [near, 0])
    }))

  it.effect("the window's end on the second half of a pair moves past the pair: the passage keeps its last emoji", () =>
    Effect.gen(function*() {
      // The passage's last pair ends one code unit after the window's end (p + L + r).
      assert.deepStrictEqual(yield* candidateOf(p + r + 1), [near, 0])
    }))

  it.effect("a window's end next to a whole pair stays: the pair outside is not half taken in", () =>
    Effect.gen(function*() {
      // The first pair ends exactly at the window's start: the window starts on the second pair.
      const start = yield* candidateOf(p - r - 2)
      assert.deepStrictEqual(start, [near.slice(2), 2])
      // The last pair starts exactly at the window's end: the window ends before it.
      const end = yield* candidateOf(p + r + 2)
      assert.deepStrictEqual(end, [near.slice(0, -2), 0])
    }))
})

describe("the baseline", () => {
  it.effect("a report whose old capture changed since: AuditBaselineRejected naming each failing fact", () =>
    Effect.gen(function*() {
      const verifiedAgainst = yield* storeOf([oldTxt, oldGone])
      const report = yield* verify(verifiedAgainst.store, [
        cited("a", TXT, oldTxt, q.trips),
        cited("b", GONE, oldGone, q.gone),
        cited("c", TXT, oldTxt, q.fleet)
      ])
      const altered = v1(TXT, oldTxt.text.replace("Fleet", "Fleat"))
      const changed = yield* storeOf([altered, oldGone])
      const now = yield* storeOf([])
      const error = yield* failureOf(auditWith(changed.store, now.store, (audit) => audit.auditReport(report)))
      assert.instanceOf(error, AuditBaselineRejected)
      assert.deepStrictEqual(error.failures.map((f) => [f.citation, f.error._tag]), [
        ["fact 0 \"a\"", "DigestMismatch"],
        ["fact 2 \"c\"", "DigestMismatch"]
      ])
      assert.deepStrictEqual(
        error.failures[0]!.error,
        new DigestMismatch({ source: TXT, kind: "report", reported: oldTxt.sha256, stored: altered.sha256, computed: altered.sha256 })
      )
    }))
})

describe("Audit of an answer", () => {
  const text = "Intro.\nThe deposit is 500 euros.\nMore text.\nThe deposit is 500 euros.\nEnd.\n"
  const record = v1(TXT, text)
  const quote = "The deposit is 500 euros."
  const second = text.indexOf(quote, text.indexOf(quote) + 1)

  const verifyAnswer = (store: CaptureStoreShape, claims: ReadonlyArray<unknown>) =>
    Effect.flatMap(Answer.Answers, (answers) => answers.verify({ manifest: null, claims, uncited: [] } as never)).pipe(
      Effect.provide(Answer.layer({ mode: "reject", uncited: "report" }).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(config)),
        Layer.provide(Layer.succeed(CaptureStore, store))
      ))
    )

  it.effect("findings name claim and citation; a citation's recorded later occurrence (picked by its prefix) is its old span", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([record, oldFailed])
      const cite = (extra: Record<string, unknown> = {}) => ({ source: TXT, captureSha256: record.sha256, quote, ...extra })
      const checked = yield* verifyAnswer(old.store, [
        { id: "c1", text: "A deposit is due.", citations: [cite(), cite({ prefix: "More text.\n" })] },
        { id: "c2", text: "It failed.", citations: [{ source: FAILED, captureSha256: oldFailed.sha256, quote: q.failed }] }
      ])
      // The new text keeps only the first occurrence, at the same place.
      const newText = text.slice(0, second) + "Gone.\nEnd.\n"
      const now = yield* storeOf([v1(TXT, newText)])
      const result = yield* auditWith(old.store, now.store, (audit) => audit.auditAnswer(checked.answer))
      const first = span(text, quote)
      const later = { start: second, end: second + quote.length }
      assert.deepStrictEqual(
        result.findings.map((f) => [f.subject, f.status, f.old.span, f.status === "relocated" || f.status === "unchanged" ? f.new.span : null]),
        [
          [{ kind: "claim", claimIndex: 0, claimId: "c1", citationIndex: 0 }, "unchanged", first, first],
          [{ kind: "claim", claimIndex: 0, claimId: "c1", citationIndex: 1 }, "relocated", later, first],
          [{ kind: "claim", claimIndex: 1, claimId: "c2", citationIndex: 0 }, "source_missing", span(oldFailed.text, q.failed), null]
        ]
      )
      assert.strictEqual(result.of, "answer")
      assert.deepStrictEqual(result.affected, [
        { kind: "claim", claimIndex: 1, claimId: "c2", citations: [{ citationIndex: 0, status: "source_missing" }] }
      ])
    }))

  it.effect("an answer whose old capture changed since: AuditBaselineRejected naming claim and citation", () =>
    Effect.gen(function*() {
      const old = yield* storeOf([record])
      const checked = yield* verifyAnswer(old.store, [
        { id: "c1", text: "A deposit is due.", citations: [{ source: TXT, captureSha256: record.sha256, quote }] }
      ])
      const changed = yield* storeOf([v1(TXT, text + "Appendix.\n")])
      const now = yield* storeOf([])
      const error = yield* failureOf(auditWith(changed.store, now.store, (audit) => audit.auditAnswer(checked.answer)))
      assert.instanceOf(error, AuditBaselineRejected)
      assert.deepStrictEqual(error.failures.map((f) => [f.citation, f.error._tag]), [["claim c1 citation 0", "DigestMismatch"]])
      assert.strictEqual(error._tag, "AuditBaselineRejected")
    }))
})
