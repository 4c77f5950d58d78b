/**
 * The drift audit over two real runs: sources served by a loopback server in
 * two revisions, captured by Capture into two run directories, a report (and
 * an answer) verified against the old run, then audited against the new one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Answer from "../src/answer/Answer.js"
import * as Audit from "../src/audit/Audit.js"
import { AuditResult, auditNote, type Finding, limits } from "../src/audit/Records.js"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { PipelineConfig } from "../src/Config.js"
import { accessedAt } from "./support.js"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as MemoryStore from "../src/store/Memory.js"
import { AuditBaselineRejected, DigestMismatch, MissingCapture } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import type { VerifiedReport } from "../src/verify/VerifiedReport.js"
import { testServer } from "./httpServer.js"
import { makePdf } from "./pdfWriter.js"
import { fixturePath, tempDirectory } from "./support.js"

const policyV1 = fs.readFileSync(fixturePath("audit", "policy-v1.md"))
const policyV2 = fs.readFileSync(fixturePath("audit", "policy-v2.md"))

/** Each path's body in revision 1 and 2 (`undefined`: 404), with its content type. */
const revisions: Record<string, { readonly type: string; readonly bodies: readonly [Buffer | string, Buffer | string | undefined] }> = {
  "/policy.md": { type: "text/markdown; charset=utf-8", bodies: [policyV1, policyV2] },
  "/fleet.txt": {
    type: "text/plain; charset=utf-8",
    bodies: [
      "Fleet notes.\nThe 🚲 fleet grew to 42 bikes in Q3 🚲.\nRiders logged 1,200 trips.\n",
      "Fleet notes 😀😀.\nThe 🚲 fleet grew to 42 bikes in Q3 🚲.\nRiders logged 1,150 trips.\n"
    ]
  },
  "/deposit.txt": {
    type: "text/plain; charset=utf-8",
    bodies: [
      "Deposit notice.\nThe deposit is 500 euros.\nIt is refundable.\n",
      "Deposit notice.\r\nThe deposit is 500 euros.\r\nIt is refundable.\r\n"
    ]
  },
  "/gone.txt": { type: "text/plain; charset=utf-8", bodies: ["This page will not be served again.\n", undefined] },
  "/manual.pdf": {
    type: "application/pdf",
    bodies: [makePdf([["Install the unit within 2 metres of the outlet."]]), Buffer.from("%PDF-1.4\nthis is not a PDF body\n%%EOF\n")]
  }
}

const quotes = {
  scope: "This policy applies to every account on the Acme Cloud platform, including trial accounts and sandbox projects.",
  limit: "Each account may send at most 30 requests per second to the public API.",
  exception: "Accounts on the Enterprise plan are exempt from the rate limit when they hold a signed traffic agreement.",
  retention: "Deleted projects are kept for 14 days before they are purged, so that an owner can restore them.",
  refund: "refunded in full within the first 30 days",
  fleet: "The 🚲 fleet grew to 42 bikes in Q3 🚲.",
  trips: "Riders logged 1,200 trips.",
  deposit: "The deposit is 500 euros.",
  depositLines: "Deposit notice.\nThe deposit is 500 euros.",
  gone: "This page will not be served again.",
  manual: "Install the unit within 2 metres of the outlet."
} as const

type Key = keyof typeof quotes
const sourceOf: Record<Key, string> = {
  scope: "/policy.md",
  limit: "/policy.md",
  exception: "/policy.md",
  retention: "/policy.md",
  refund: "/policy.md",
  fleet: "/fleet.txt",
  trips: "/fleet.txt",
  deposit: "/deposit.txt",
  depositLines: "/deposit.txt",
  gone: "/gone.txt",
  manual: "/manual.pdf"
}
const keys = Object.keys(quotes) as Array<Key>

/** Captures every path into a fresh run directory; the failures by source. */
const captureRun = (sources: ReadonlyArray<SourceUrl>) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const failures = new Map<string, { tag: string; detail: string }>()
    yield* Effect.gen(function*() {
      const capture = yield* Capture.Capture
      for (const source of sources) {
        const result = yield* Effect.either(capture.capture(source))
        if (Either.isLeft(result)) failures.set(source, { tag: result.left._tag, detail: result.left.message })
      }
    }).pipe(Effect.provide(Layer.provideMerge(
      Capture.layer({
        approved: sources,
        allowLoopbackHttp: true,
        contentTypes: ["text/plain", "text/markdown", "application/pdf"]
      }),
      CaptureStore.layerFileSystem({ directory })
    )))
    return { directory, failures }
  })

/** Two runs of the same sources (revision 1, then 2), and a report citing every quote, verified against the old run. */
const twoRuns = Effect.gen(function*() {
  let revision: 0 | 1 = 0
  const server = yield* testServer((req, res) => {
    const entry = revisions[req.url ?? ""]
    const body = entry?.bodies[revision]
    if (entry === undefined || body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("not found")
      return
    }
    res.writeHead(200, { "content-type": entry.type })
    res.end(body)
  })
  const urlOf = (p: string) => server.url(p) as SourceUrl
  const sources = Object.keys(revisions).map(urlOf)
  const oldRun = yield* captureRun(sources)
  assert.strictEqual(oldRun.failures.size, 0, JSON.stringify([...oldRun.failures]))
  revision = 1
  const newRun = yield* captureRun(sources)
  const config = { sources, labels: [...keys, "refundSentence"] } as unknown as PipelineConfig

  const oldStore = yield* CaptureStore.makeFileSystem({ directory: oldRun.directory })
  const facts: Array<Record<string, unknown>> = []
  for (const key of keys) {
    const record = yield* oldStore.read(urlOf(sourceOf[key]))
    facts.push({ state: "cited" as const, label: key, source: record.source, captureSha256: record.sha256, snippet: quotes[key] })
  }
  const report: VerifiedReport = yield* Effect.flatMap(Gate.Gate, (gate) => gate.check({ facts })).pipe(
    Effect.provide(Gate.layer({ runDirectory: oldRun.directory, config }))
  )
  return { urlOf, config, oldRun, newRun, report, facts }
})

/** The Audit service over an old and a new run directory. */
const auditLayer = (config: PipelineConfig, oldDirectory: string, newDirectory: string) =>
  Audit.layer.pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Audit.fromStore(CaptureStore.layerFileSystem({ directory: newDirectory }))),
    Layer.provide(CaptureStore.layerFileSystem({ directory: oldDirectory })),
    Layer.provideMerge(Policy.layer(config))
  )

const auditReport = (
  runs: Effect.Effect.Success<typeof twoRuns>,
  options?: Audit.AuditOptions,
  report: VerifiedReport = runs.report
) =>
  Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(report, options)).pipe(
    Effect.provide(auditLayer(runs.config, runs.oldRun.directory, runs.newRun.directory))
  )

const findingOf = (findings: ReadonlyArray<Finding>, key: Key): Finding => {
  const found = findings.find((f) => f.subject.kind === "fact" && f.subject.label === key)
  assert.isDefined(found, key)
  return found!
}

const textOf = (directory: string, source: string) =>
  Effect.map(CaptureStore.makeFileSystem({ directory }), (store) => store.read(source as SourceUrl)).pipe(
    Effect.flatten,
    Effect.map((record) => record.text)
  )

describe("Audit over two captured runs", () => {
  it.scopedLive("one finding per citation, in report order; the outcome drifted; the result decodes with AuditResult", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const result = yield* auditReport(runs)
      assert.deepStrictEqual(result.findings.map((f) => f.subject.kind === "fact" ? f.subject.label : ""), keys)
      assert.deepStrictEqual(
        Object.fromEntries(result.findings.map((f) => [f.subject.kind === "fact" ? f.subject.label : "", f.status])),
        {
          scope: "unchanged",
          limit: "changed",
          exception: "deleted",
          retention: "relocated",
          refund: "relocated",
          fleet: "relocated",
          trips: "changed",
          deposit: "relocated",
          depositLines: "changed",
          gone: "source_missing",
          manual: "source_missing"
        }
      )
      assert.strictEqual(result.outcome, "drifted")
      assert.deepStrictEqual(result.summary, {
        citations: 11,
        unchanged: 1,
        relocated: 4,
        changed: 3,
        deleted: 1,
        source_missing: 2,
        material: 2
      })
      assert.strictEqual(result.note, auditNote)
      assert.deepStrictEqual(result.thresholds, Audit.defaultThresholds)
      // affected: the facts with a changed, deleted or source_missing citation, in report order.
      assert.deepStrictEqual(result.affected, [
        { kind: "fact", index: 1, label: "limit", status: "changed" },
        { kind: "fact", index: 2, label: "exception", status: "deleted" },
        { kind: "fact", index: 6, label: "trips", status: "changed" },
        { kind: "fact", index: 8, label: "depositLines", status: "changed" },
        { kind: "fact", index: 9, label: "gone", status: "source_missing" },
        { kind: "fact", index: 10, label: "manual", status: "source_missing" }
      ])
      // A JSON rendering decodes with the Schema, strictly; an unknown key does not.
      const decoded = Schema.decodeUnknownSync(AuditResult, decodeOptions)(JSON.parse(JSON.stringify(result)))
      assert.deepStrictEqual(decoded, result)
      assert.throws(() => Schema.decodeUnknownSync(AuditResult, decodeOptions)({ ...JSON.parse(JSON.stringify(result)), extra: 1 }))
    }))

  it.scopedLive("unchanged: the excerpt is at the same span of the new capture, whose digest differs", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const finding = findingOf((yield* auditReport(runs)).findings, "scope")
      assert.strictEqual(finding.status, "unchanged")
      if (finding.status !== "unchanged") return
      const oldText = yield* textOf(runs.oldRun.directory, runs.urlOf("/policy.md"))
      const newText = yield* textOf(runs.newRun.directory, runs.urlOf("/policy.md"))
      const start = oldText.indexOf(quotes.scope)
      assert.deepStrictEqual(finding.old.span, { start, end: start + quotes.scope.length })
      assert.deepStrictEqual(finding.new.span, finding.old.span)
      assert.strictEqual(newText.slice(finding.new.span.start, finding.new.span.end), quotes.scope)
      assert.notStrictEqual(finding.new.captureSha256, finding.old.captureSha256)
      assert.deepStrictEqual(finding.old.heading, ["Acme Cloud Acceptable Use Policy", "Scope"])
      assert.deepStrictEqual(finding.new.heading, ["Acme Cloud Acceptable Use Policy", "Scope"])
    }))

  it.scopedLive("relocated: a moved section's excerpt, with its new span and heading", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const finding = findingOf((yield* auditReport(runs)).findings, "retention")
      assert.strictEqual(finding.status, "relocated")
      if (finding.status !== "relocated") return
      const newText = yield* textOf(runs.newRun.directory, runs.urlOf("/policy.md"))
      const start = newText.indexOf(quotes.retention)
      assert.deepStrictEqual(finding.new.span, { start, end: start + quotes.retention.length })
      assert.notDeepEqual(finding.new.span, finding.old.span)
      assert.deepStrictEqual(finding.new.heading, ["Acme Cloud Acceptable Use Policy", "Data retention"])
    }))

  it.scopedLive("changed: the limit 30 → 20, with its candidate, similarity, anchor scope and a numbers flag", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const finding = findingOf((yield* auditReport(runs)).findings, "limit")
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      const newText = yield* textOf(runs.newRun.directory, runs.urlOf("/policy.md"))
      assert.include(finding.candidate.text, "at most 20 requests per second")
      assert.strictEqual(newText.slice(finding.candidate.span.start, finding.candidate.span.end), finding.candidate.text)
      assert.strictEqual(finding.candidate.scope, "anchor")
      assert.deepStrictEqual(finding.candidate.heading, ["Acme Cloud Acceptable Use Policy", "Rate limits"])
      assert.isAtLeast(finding.candidate.similarity, finding.candidate.threshold)
      assert.isBelow(finding.candidate.similarity, 1)
      assert.deepStrictEqual(finding.material, [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }])
    }))

  it.scopedLive("deleted: a removed section's excerpt; the nearest passage is reported below its threshold", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const finding = findingOf((yield* auditReport(runs)).findings, "exception")
      assert.strictEqual(finding.status, "deleted")
      if (finding.status !== "deleted") return
      assert.isDefined(finding.nearest)
      assert.isBelow(finding.nearest!.similarity, finding.nearest!.threshold)
      const store = yield* CaptureStore.makeFileSystem({ directory: runs.newRun.directory })
      assert.strictEqual(finding.new.captureSha256, (yield* store.read(runs.urlOf("/policy.md"))).sha256)
      assert.notInclude(finding.nearest!.text, "Enterprise")
    }))

  it.scopedLive("thresholds are the caller's to raise (kept within [0, 1]): above the limit's similarity it is deleted", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const result = yield* auditReport(runs, { thresholds: { anchor: 0.999, document: 2 } })
      assert.deepStrictEqual(result.thresholds, { anchor: 0.999, document: 1 })
      const finding = findingOf(result.findings, "limit")
      assert.strictEqual(finding.status, "deleted")
      if (finding.status !== "deleted") return
      assert.include(finding.nearest!.text, "at most 20 requests")
      assert.deepStrictEqual([finding.nearest!.scope, finding.nearest!.threshold], ["anchor", 0.999])
      Schema.decodeUnknownSync(AuditResult, decodeOptions)(JSON.parse(JSON.stringify(result)))
    }))

  it.scopedLive("a quote that survives while its sentence reverses: relocated, not drifted (the audit is lexical)", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const finding = findingOf((yield* auditReport(runs)).findings, "refund")
      assert.strictEqual(finding.status, "relocated")
      const newText = yield* textOf(runs.newRun.directory, runs.urlOf("/policy.md"))
      assert.include(newText, `can no longer be ${quotes.refund}`)
    }))

  it.scopedLive("quoting the whole sentence instead: changed, with a negation flag naming the new `no`", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const oldStore = yield* CaptureStore.makeFileSystem({ directory: runs.oldRun.directory })
      const record = yield* oldStore.read(runs.urlOf("/policy.md"))
      const sentence = "Annual plans may be refunded in full within the first 30 days of the subscription term."
      const report = yield* Effect.flatMap(Gate.Gate, (gate) =>
        gate.check({
          facts: [{ state: "cited", label: "refundSentence", source: record.source, captureSha256: record.sha256, snippet: sentence }]
        })).pipe(Effect.provide(Gate.layer({ runDirectory: runs.oldRun.directory, config: runs.config })))
      const finding = (yield* auditReport(runs, undefined, report)).findings[0]!
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      assert.include(finding.candidate.text, "can no longer be refunded")
      assert.strictEqual(finding.candidate.scope, "anchor")
      assert.deepStrictEqual(finding.material, [{ kind: "negation", oldTokens: [], newTokens: ["no"] }])
    }))

  it.scopedLive("non-BMP text: spans in UTF-16 code units, shifted by the emoji; a candidate never splits a pair", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const result = yield* auditReport(runs)
      const fleet = findingOf(result.findings, "fleet")
      assert.strictEqual(fleet.status, "relocated")
      if (fleet.status !== "relocated") return
      // " 😀😀" was inserted before it: one space and two surrogate pairs.
      assert.strictEqual(fleet.new.span.start - fleet.old.span.start, 5)
      const trips = findingOf(result.findings, "trips")
      assert.strictEqual(trips.status, "changed")
      if (trips.status !== "changed") return
      assert.isTrue(trips.candidate.text.isWellFormed())
      assert.include(trips.candidate.text, "1,150")
      assert.deepStrictEqual(trips.material, [{ kind: "numbers", oldTokens: ["1,200"], newTokens: ["1,150"] }])
      assert.strictEqual(trips.candidate.scope, "document") // a text/plain capture has no anchors
    }))

  it.scopedLive("LF → CRLF: a one-line excerpt is relocated; one across a line break is changed with no material flag", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const result = yield* auditReport(runs)
      const deposit = findingOf(result.findings, "deposit")
      assert.strictEqual(deposit.status, "relocated")
      if (deposit.status !== "relocated") return
      assert.strictEqual(deposit.new.span.start - deposit.old.span.start, 1)
      const lines = findingOf(result.findings, "depositLines")
      assert.strictEqual(lines.status, "changed")
      if (lines.status !== "changed") return
      assert.deepStrictEqual(lines.material, [])
      // Only line endings differ: the normalised excerpt occurs as is.
      assert.deepStrictEqual([lines.candidate.method, lines.candidate.similarity], ["normalized/1", 1])
      assert.strictEqual(lines.candidate.text, "Deposit notice.\r\nThe deposit is 500 euros.")
    }))

  it.scopedLive("source_missing: a source the new run could not fetch (404) is not-captured; with the recapture's failures, capture-failed", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const plain = findingOf((yield* auditReport(runs)).findings, "gone")
      assert.strictEqual(plain.status, "source_missing")
      if (plain.status !== "source_missing") return
      assert.deepStrictEqual([plain.reason, plain.errorTag], ["not-captured", "MissingCapture"])
      assert.strictEqual(plain.detail, new MissingCapture({ source: runs.urlOf("/gone.txt") }).message)
      const informed = findingOf((yield* auditReport(runs, { captureFailures: runs.newRun.failures })).findings, "gone")
      assert.strictEqual(informed.status, "source_missing")
      if (informed.status !== "source_missing") return
      assert.deepStrictEqual([informed.reason, informed.errorTag], ["capture-failed", "UnexpectedStatus"])
    }))

  it.scopedLive("source_missing: a new body that fails extraction writes no capture; the recapture's ExtractionFailed is named", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      assert.strictEqual(runs.newRun.failures.get(runs.urlOf("/manual.pdf"))?.tag, "ExtractionFailed")
      const finding = findingOf((yield* auditReport(runs, { captureFailures: runs.newRun.failures })).findings, "manual")
      assert.strictEqual(finding.status, "source_missing")
      if (finding.status !== "source_missing") return
      assert.deepStrictEqual([finding.reason, finding.errorTag], ["capture-failed", "ExtractionFailed"])
      assert.include(finding.detail, "pdf")
      assert.strictEqual(finding.old.page, 1)
    }))

  it.scopedLive("source_missing: a new capture whose stored body was altered is unreadable (CorruptCapture body-mismatch)", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const store = yield* CaptureStore.makeFileSystem({ directory: runs.newRun.directory })
      const record = yield* store.read(runs.urlOf("/policy.md"))
      assert.strictEqual(record.format, "citegate.capture/2")
      if (record.format !== "citegate.capture/2") return
      const body = path.join(runs.newRun.directory, CaptureStore.bodyFileName(record.body.sha256))
      yield* Effect.promise(async () => {
        await fsp.chmod(body, 0o600)
        await fsp.writeFile(body, policyV1)
      })
      const result = yield* auditReport(runs)
      for (const key of ["scope", "limit", "exception", "retention", "refund"] as const) {
        const finding = findingOf(result.findings, key)
        assert.strictEqual(finding.status, "source_missing", key)
        if (finding.status !== "source_missing") return
        assert.deepStrictEqual([finding.reason, finding.errorTag], ["unreadable", "CorruptCapture"])
        assert.include(finding.detail, "body-mismatch")
      }
    }))

  it.scopedLive("the baseline is re-verified: an old capture altered since verification fails with AuditBaselineRejected", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      // Someone replaces the old run's fleet record with the new one: the report no longer verifies there.
      const file = CaptureStore.recordFileName(runs.urlOf("/fleet.txt"))
      yield* Effect.promise(async () => {
        await fsp.rm(path.join(runs.oldRun.directory, file), { force: true })
        await fsp.copyFile(path.join(runs.newRun.directory, file), path.join(runs.oldRun.directory, file))
      })
      const error = yield* Effect.flip(auditReport(runs))
      assert.instanceOf(error, AuditBaselineRejected)
      if (!(error instanceof AuditBaselineRejected)) return
      assert.deepStrictEqual(error.failures.map((f) => f.citation), ['fact 5 "fleet"', 'fact 6 "trips"'])
      assert.instanceOf(error.failures[0].error, DigestMismatch)
    }))

  it.scopedLive("a new run identical to the old: every citation unchanged, outcome stable, nothing affected", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const result = yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(runs.report)).pipe(
        Effect.provide(auditLayer(runs.config, runs.oldRun.directory, runs.oldRun.directory))
      )
      assert.strictEqual(result.outcome, "stable")
      assert.deepStrictEqual(result.affected, [])
      assert.isTrue(result.findings.every((f) => f.status === "unchanged"))
      assert.strictEqual(result.summary.unchanged, 11)
    }))
})

describe("Audit of a verified answer", () => {
  it.scopedLive("findings name claim and citation; affected groups a claim's drifted citations", () =>
    Effect.gen(function*() {
      const runs = yield* twoRuns
      const oldStore = yield* CaptureStore.makeFileSystem({ directory: runs.oldRun.directory })
      const policy = yield* oldStore.read(runs.urlOf("/policy.md"))
      const cite = (quote: string) => ({ source: policy.source, captureSha256: policy.sha256, quote })
      const checked = yield* Effect.flatMap(Answer.Answers, (answers) =>
        answers.verify({
          manifest: null,
          claims: [
            { id: "c-scope", text: "The policy covers trial accounts.", citations: [cite(quotes.scope)] },
            { id: "c-limits", text: "The API allows 30 requests per second, with no exceptions.", citations: [cite(quotes.limit), cite(quotes.retention), cite(quotes.exception)] }
          ],
          uncited: []
        })).pipe(
          Effect.provide(Answer.layer({ mode: "reject", uncited: "report" }).pipe(
            Layer.provide(Verifier.layer),
            Layer.provide(Policy.layer(runs.config)),
            Layer.provide(CaptureStore.layerFileSystem({ directory: runs.oldRun.directory }))
          ))
        )
      const result = yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditAnswer(checked.answer)).pipe(
        Effect.provide(auditLayer(runs.config, runs.oldRun.directory, runs.newRun.directory))
      )
      assert.strictEqual(result.of, "answer")
      assert.deepStrictEqual(
        result.findings.map((f) => [f.subject, f.status]),
        [
          [{ kind: "claim", claimIndex: 0, claimId: "c-scope", citationIndex: 0 }, "unchanged"],
          [{ kind: "claim", claimIndex: 1, claimId: "c-limits", citationIndex: 0 }, "changed"],
          [{ kind: "claim", claimIndex: 1, claimId: "c-limits", citationIndex: 1 }, "relocated"],
          [{ kind: "claim", claimIndex: 1, claimId: "c-limits", citationIndex: 2 }, "deleted"]
        ]
      )
      assert.deepStrictEqual(result.affected, [
        {
          kind: "claim",
          claimIndex: 1,
          claimId: "c-limits",
          citations: [{ citationIndex: 0, status: "changed" }, { citationIndex: 2, status: "deleted" }]
        }
      ])
      assert.strictEqual(result.outcome, "drifted")
      Schema.decodeUnknownSync(AuditResult, decodeOptions)(JSON.parse(JSON.stringify(result)))
    }))
})

/** Audits one cited excerpt of an old text against a new text, both held in memory stores. */
const auditInMemory = (oldText: string, newText: string, snippet: string) =>
  Effect.gen(function*() {
    const source = "https://policies.acme.test/terms.txt" as SourceUrl
    const old = makeCaptureRecord({ source, text: oldText, accessedAt, contentType: "text/plain" })
    const now = makeCaptureRecord({ source, text: newText, accessedAt, contentType: "text/plain" })
    const config = { sources: [source], labels: ["terms"] } as unknown as PipelineConfig
    const oldStore = MemoryStore.layer({ records: [old] }).pipe(Layer.orDie)
    const report = yield* Effect.flatMap(Gate.Gate, (gate) =>
      gate.check({ facts: [{ state: "cited", label: "terms", source, captureSha256: old.sha256, snippet }] })).pipe(
        Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(oldStore), Layer.orDie))
      )
    const result = yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(report)).pipe(
      Effect.provide(Audit.layer.pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Audit.fromStore(MemoryStore.layer({ records: [now] }).pipe(Layer.orDie))),
        Layer.provide(oldStore),
        Layer.provide(Policy.layer(config))
      ))
    )
    return result.findings[0]!
  })

const filler = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `Filler line ${from + i} says little of note.\n`).join("")

describe("Candidate search near the old position", () => {
  const sentence = "Each account may send at most 30 requests per second to the public API."
  const oldText = filler(0, 3000) + sentence + "\n" + filler(3000, 6000)

  it.effect("an edited passage near its old position is the candidate, even when a closer match lies far away", () =>
    Effect.gen(function*() {
      const near = "Each account may send at most 25 requests per minute to the public API."
      const far = "Each account may send at most 20 requests per second to the public API."
      const finding = yield* auditInMemory(oldText, filler(0, 3000) + near + "\n" + filler(3000, 6000) + far + "\n", sentence)
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      assert.strictEqual(finding.candidate.scope, "document")
      assert.include(finding.candidate.text, "25 requests per minute")
      assert.isBelow(Math.abs(finding.candidate.span.start - finding.old.span.start), Audit.nearbyRadius)
      assert.deepStrictEqual(finding.material, [{ kind: "numbers", oldTokens: ["30"], newTokens: ["25"] }])
    }))

  it.effect("an edited passage moved far away is found by the whole-text search", () =>
    Effect.gen(function*() {
      const far = "Each account may send at most 20 requests per second to the public API."
      const finding = yield* auditInMemory(oldText, filler(0, 6000) + far + "\n", sentence)
      assert.strictEqual(finding.status, "changed")
      if (finding.status !== "changed") return
      assert.include(finding.candidate.text, "20 requests per second")
      assert.isAbove(finding.candidate.span.start - finding.old.span.start, Audit.nearbyRadius)
    }))
})

describe("Audit bounds", () => {
  it.effect("an absent excerpt longer than limits.maxCandidateExcerpt is deleted, marked unsearched, without a candidate search", () =>
    Effect.gen(function*() {
      const source = "https://policies.acme.test/terms.txt" as SourceUrl
      const paragraph = Array.from({ length: 300 }, (_, i) => `Clause ${i} text goes on. `).join("")
      const long = paragraph.slice(0, limits.maxCandidateExcerpt + 1)
      const old = makeCaptureRecord({ source, text: `${paragraph}\n`, accessedAt, contentType: "text/plain" })
      // The first word changed: a candidate search would find the rest at once.
      const now = makeCaptureRecord({ source, text: `Article${paragraph.slice(6)}\n`, accessedAt, contentType: "text/plain" })
      const config = { sources: [source], labels: ["terms"] } as unknown as PipelineConfig
      const oldStore = MemoryStore.layer({ records: [old] }).pipe(Layer.orDie)
      const report = yield* Effect.flatMap(Gate.Gate, (gate) =>
        gate.check({ facts: [{ state: "cited", label: "terms", source, captureSha256: old.sha256, snippet: long }] })).pipe(
          Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(oldStore), Layer.orDie))
        )
      const result = yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(report)).pipe(
        Effect.provide(Audit.layer.pipe(
          Layer.provide(Verifier.layer),
          Layer.provide(Audit.fromStore(MemoryStore.layer({ records: [now] }).pipe(Layer.orDie))),
          Layer.provide(oldStore),
          Layer.provide(Policy.layer(config))
        ))
      )
      const finding = result.findings[0]!
      assert.strictEqual(finding.status, "deleted")
      if (finding.status !== "deleted") return
      assert.strictEqual(finding.unsearched, "excerpt-too-long")
      assert.isUndefined(finding.nearest)
      assert.strictEqual(finding.new.captureSha256, now.sha256)
      // One code unit shorter, the same excerpt is searched and found changed.
      const shorter = long.slice(0, limits.maxCandidateExcerpt)
      const report2 = yield* Effect.flatMap(Gate.Gate, (gate) =>
        gate.check({ facts: [{ state: "cited", label: "terms", source, captureSha256: old.sha256, snippet: shorter }] })).pipe(
          Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(oldStore), Layer.orDie))
        )
      const result2 = yield* Effect.flatMap(Audit.Audit, (audit) => audit.auditReport(report2)).pipe(
        Effect.provide(Audit.layer.pipe(
          Layer.provide(Verifier.layer),
          Layer.provide(Audit.fromStore(MemoryStore.layer({ records: [now] }).pipe(Layer.orDie))),
          Layer.provide(oldStore),
          Layer.provide(Policy.layer(config))
        ))
      )
      assert.strictEqual(result2.findings[0]!.status, "changed")
    }))
})
