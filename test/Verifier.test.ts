import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, sha256Of, type SourceUrl } from "../src/Domain.js"
import {
  CorruptCapture,
  DigestMismatch,
  DuplicateLabel,
  InvalidReport,
  LegacyCapture,
  MissingCapture,
  NotApproved,
  ReportRejected,
  SnippetAbsent,
  UnknownLabel
} from "../src/Errors.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import {
  accessedAt,
  cited,
  gateFor,
  INVENTORY,
  inventoryRecord,
  pipelineConfig,
  recordPath,
  runDirectoryWith,
  SALES,
  salesRecord,
  snapshotDirectory,
  unavailable
} from "./support.js"

const salesFact = cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")

/** Verifies with the Gate in reject mode and returns the rejection (the test fails if it passes). */
const rejection = (directory: string, report: unknown) =>
  Effect.flatMap(gateFor(directory), (gate) => Effect.flip(gate.check(report)))

const onlyFailure = (error: unknown) => {
  assert.instanceOf(error, ReportRejected)
  assert.strictEqual(error.failures.length, 1)
  return error.failures[0]!
}

describe("Verifier: accepted reports", () => {
  it.scoped("accepts an excerpt that occurs verbatim and reports its span and occurrences", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const gate = yield* gateFor(directory)
      const report = yield* gate.check({
        facts: [
          salesFact,
          cited("q3_inventory", inventoryRecord, "1,180 units"),
          unavailable("q4_forecast", "No Q4 figure was published in the approved sources.")
        ]
      })
      assert.strictEqual(report.outcome, "grounded")
      assert.strictEqual(report.proves, "provenance-only")
      assert.strictEqual(report.semanticReview, "not-performed")
      assert.strictEqual(report.facts.length, 3)
      const first = report.facts[0]!
      assert.strictEqual(first.fact.state, "cited")
      // The fact is passed on exactly as the report gave it (compared with the input, not with itself).
      assert.deepStrictEqual<unknown>({ ...first.fact }, salesFact)
      if (!("evidence" in first)) return assert.fail("expected evidence")
      const start = salesRecord.text.indexOf(salesFact.snippet)
      // The anchoring fields (offsets, selector, method, ambiguous) are pinned in test/anchor.*.test.ts.
      const { accessedAt: at, occurrences, span } = first.evidence
      assert.deepStrictEqual({ span, occurrences, accessedAt: at }, {
        span: { start, end: start + salesFact.snippet.length },
        occurrences: 1,
        accessedAt
      })
      assert.strictEqual(salesRecord.text.slice(first.evidence.span.start, first.evidence.span.end), salesFact.snippet)
      assert.strictEqual(report.facts[2]!.fact.state, "unavailable")
    }))

  it.scoped("counts occurrences up to two (ambiguity needs no more) and points at the first", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory)
      const report = yield* gate.check({ facts: [cited("q3_net_sales", salesRecord, "Q3 2026")] })
      const entry = report.facts[0]!
      if (!("evidence" in entry)) return assert.fail("expected evidence")
      assert.strictEqual(entry.evidence.span.start, salesRecord.text.indexOf("Q3 2026"))
      assert.isAbove(salesRecord.text.split("Q3 2026").length - 1, 2)
      assert.strictEqual(entry.evidence.occurrences, 2)
    }))

  it.scoped("a report of only unavailable facts is no_evidence", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      const gate = yield* gateFor(directory)
      const report = yield* gate.check({ facts: [unavailable("q4_forecast", "not published")] })
      assert.strictEqual(report.outcome, "no_evidence")
    }))

  it.scoped(
    "boundary: a real excerpt under the wrong label passes, because citegate proves provenance, not meaning",
    () =>
      Effect.gen(function*() {
        // The inventory count is cited as "sales". The excerpt does occur verbatim in the
        // exact capture named, which is all citegate proves. Whether the number is the
        // right metric for the label is semantic review, a separate outcome that the
        // VerifiedReport marks as not performed.
        const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
        const gate = yield* gateFor(directory)
        const report = yield* gate.check({
          facts: [cited("q3_net_sales", inventoryRecord, "Inventory on hand at 30 September 2026 was 1,180 units")]
        })
        assert.strictEqual(report.outcome, "grounded")
        assert.strictEqual(report.semanticReview, "not-performed")
      })
  )
})

describe("Verifier: one test per failure tag", () => {
  it.scoped("NotApproved: a source outside the approved set", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const failure = onlyFailure(
        yield* rejection(directory, {
          facts: [{ ...salesFact, source: "https://reports.northwind.test/q3-sales.txt?rev=2" }]
        })
      )
      assert.instanceOf(failure.error, NotApproved)
      assert.strictEqual(failure.error.reason, "not-in-approved-set")
      assert.strictEqual(failure.index, 0)
      assert.strictEqual(failure.label, "q3_net_sales")
    }))

  it.scoped("NotApproved: a non-canonical spelling of an approved source is not that source", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const failure = onlyFailure(
        yield* rejection(directory, { facts: [{ ...salesFact, source: "HTTPS://reports.northwind.test/q3-sales.txt" }] })
      )
      assert.instanceOf(failure.error, NotApproved)
      assert.strictEqual(failure.error.reason, "not-canonical")
    }))

  it.scoped("UnknownLabel", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const failure = onlyFailure(yield* rejection(directory, { facts: [{ ...salesFact, label: "q3_profit" }] }))
      assert.instanceOf(failure.error, UnknownLabel)
      assert.strictEqual(failure.error.label, "q3_profit")
    }))

  it.scoped("DuplicateLabel: the second use of a label, pointing at the first", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const failure = onlyFailure(
        yield* rejection(directory, { facts: [salesFact, unavailable("q3_net_sales", "second opinion")] })
      )
      assert.instanceOf(failure.error, DuplicateLabel)
      assert.strictEqual(failure.index, 1)
      assert.strictEqual(failure.error.firstIndex, 0)
    }))

  it.scoped("MissingCapture: the exact source has no capture, although another source does (no fallback)", () =>
    Effect.gen(function*() {
      // Only the inventory source was captured; the same sentence would not help either.
      const directory = yield* runDirectoryWith([inventoryRecord])
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, MissingCapture)
      assert.strictEqual(failure.error.source, SALES)
    }))

  it.scoped("MissingCapture: a snippet present in another capture is not accepted for this source", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([inventoryRecord])
      const failure = onlyFailure(
        yield* rejection(directory, { facts: [{ ...cited("q3_inventory", inventoryRecord, "1,180 units"), source: SALES }] })
      )
      assert.instanceOf(failure.error, MissingCapture)
    }))

  it.scoped("DigestMismatch (report): the report names a different capture of the source", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const otherDigest = inventoryRecord.sha256
      const failure = onlyFailure(yield* rejection(directory, { facts: [{ ...salesFact, captureSha256: otherDigest }] }))
      assert.instanceOf(failure.error, DigestMismatch)
      assert.strictEqual(failure.error.kind, "report")
      assert.strictEqual(failure.error.reported, otherDigest)
      assert.strictEqual(failure.error.stored, salesRecord.sha256)
      assert.strictEqual(failure.error.computed, salesRecord.sha256)
    }))

  it.scoped("DigestMismatch (stored): the capture text was altered after capture", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const file = recordPath(directory, SALES)
      const tampered = (yield* Effect.promise(() => fsp.readFile(file, "utf8"))).replace("4,210", "9,210")
      yield* Effect.promise(async () => {
        await fsp.rm(file)
        await fsp.writeFile(file, tampered)
      })
      const failure = onlyFailure(
        yield* rejection(directory, { facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 9,210")] })
      )
      assert.instanceOf(failure.error, DigestMismatch)
      assert.strictEqual(failure.error.kind, "stored")
      assert.strictEqual(failure.error.reported, salesRecord.sha256)
      assert.strictEqual(failure.error.stored, salesRecord.sha256)
      assert.strictEqual(failure.error.computed, sha256Of(JSON.parse(tampered).text))
    }))

  it.scoped("SnippetAbsent: no normalisation of case, whitespace or punctuation", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const near = [
        "net sales for Q3 2026 were 4,210 units",
        "Net sales for Q3 2026 were  4,210 units",
        "Net sales for Q3 2026 were 4210 units",
        " Net sales for Q3 2026 were 4,210 units,"
      ]
      for (const snippet of near) {
        const failure = onlyFailure(yield* rejection(directory, { facts: [{ ...salesFact, snippet }] }))
        assert.instanceOf(failure.error, SnippetAbsent)
        assert.strictEqual(failure.error.snippet, snippet)
        assert.strictEqual(failure.error.captureSha256, salesRecord.sha256)
      }
    }))

  it.scoped("CorruptCapture: a record copied under another source's file name", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([inventoryRecord])
      yield* Effect.promise(() => fsp.copyFile(recordPath(directory, INVENTORY), recordPath(directory, SALES)))
      const failure = onlyFailure(
        yield* rejection(directory, {
          facts: [{ ...cited("q3_inventory", inventoryRecord, "1,180 units"), source: SALES }]
        })
      )
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "source-mismatch")
    }))

  it.scoped("CorruptCapture: a record whose stored source was rewritten", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const file = recordPath(directory, SALES)
      const record = JSON.parse(yield* Effect.promise(() => fsp.readFile(file, "utf8")))
      yield* Effect.promise(async () => {
        await fsp.rm(file)
        await fsp.writeFile(file, JSON.stringify({ ...record, source: INVENTORY }))
      })
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "source-mismatch")
    }))

  it.scoped("LegacyCapture: an older record format is never accepted as is", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      yield* Effect.promise(() =>
        fsp.writeFile(
          recordPath(directory, SALES),
          JSON.stringify({ source: SALES, text: salesRecord.text, sha256: salesRecord.sha256, accessedAt })
        )
      )
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, LegacyCapture)
      assert.strictEqual(failure.error.source, SALES)
    }))

  it.scoped("InvalidReport: every schema issue with its path", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const error = yield* rejection(directory, {
        facts: [
          { ...salesFact, captureSha256: "ABC" },
          { ...salesFact, label: "q3_online_share", snippet: "   " }
        ]
      })
      assert.instanceOf(error, InvalidReport)
      const paths = error.issues.map((issue) => issue.path.join("."))
      assert.include(paths, "facts.0.captureSha256")
      assert.include(paths, "facts.1.snippet")
    }))

  it.scoped("ReportRejected carries every failure of every fact, in report order", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const error = yield* rejection(directory, {
        facts: [
          { ...salesFact, label: "nope" },
          cited("q3_online_share", salesRecord, "not in there"),
          cited("q3_inventory", inventoryRecord, "1,180 units"),
          unavailable("nope", "twice unknown")
        ]
      })
      assert.instanceOf(error, ReportRejected)
      assert.deepStrictEqual(
        error.failures.map((f) => [f.index, f.error._tag]),
        [[0, "UnknownLabel"], [1, "SnippetAbsent"], [2, "MissingCapture"], [3, "UnknownLabel"], [3, "DuplicateLabel"]]
      )
    }))
})

describe("Verifier: strict decoding", () => {
  const invalid = (directory: string, report: unknown) =>
    Effect.map(rejection(directory, report), (error) => {
      assert.instanceOf(error, InvalidReport)
      return error.issues
    })

  for (const extra of ["source", "snippet", "captureSha256", "value"] as const) {
    it.scoped(`an unavailable fact carrying ${extra} is rejected (no partial citation)`, () =>
      Effect.gen(function*() {
        const directory = yield* runDirectoryWith([salesRecord])
        const values = { source: SALES, snippet: "4,210 units", captureSha256: salesRecord.sha256, value: "4210" }
        const issues = yield* invalid(directory, {
          facts: [{ ...unavailable("q3_net_sales", "not sure"), [extra]: values[extra] }]
        })
        assert.isTrue(issues.some((issue) => issue.path.join(".") === `facts.0.${extra}`), JSON.stringify(issues))
      }))
  }

  it.scoped("an extra key on a cited fact is rejected, not stripped", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const issues = yield* invalid(directory, { facts: [{ ...salesFact, confidence: 0.99 }] })
      assert.deepStrictEqual(issues.map((i) => i.path.join(".")), ["facts.0.confidence"])
    }))

  it.scoped("a cited fact missing its digest is rejected", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const { captureSha256: _, ...partial } = salesFact
      const issues = yield* invalid(directory, { facts: [partial] })
      assert.deepStrictEqual(issues.map((i) => i.path.join(".")), ["facts.0.captureSha256"])
    }))

  it.scoped("an extra top-level key is rejected", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const issues = yield* invalid(directory, { facts: [salesFact], summary: "all good" })
      assert.deepStrictEqual(issues.map((i) => i.path.join(".")), ["summary"])
    }))

  it.scoped("more facts than maxFacts is rejected", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const config = { ...(pipelineConfig as object), verify: { maxFacts: 1 } }
      const gate = yield* gateFor(directory, config)
      const error = yield* Effect.flip(gate.check({ facts: [salesFact, unavailable("q4_forecast", "n/a")] }))
      assert.instanceOf(error, InvalidReport)
      assert.match(error.message, /at most 1 facts/)
    }))

  it.scoped("report JSON with a repeated key is rejected: last-key-wins must not decide", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory)
      const text = `{"facts":[{"state":"cited","label":"q3_net_sales","source":"${SALES}","source":"${SALES}",` +
        `"captureSha256":"${salesRecord.sha256}","snippet":"4,210 units"}]}`
      const error = yield* Effect.flip(gate.checkJson(text))
      assert.instanceOf(error, InvalidReport)
      assert.match(error.message, /repeated key "source"/)
    }))

  it.scoped("report JSON with a __proto__ key is rejected", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory)
      const error = yield* Effect.flip(gate.checkJson(`{"facts":[],"__proto__":{"admin":true}}`))
      assert.instanceOf(error, InvalidReport)
      assert.match(error.message, /forbidden key "__proto__"/)
    }))
})

describe("Verifier: reads captures only, once each", () => {
  it.scoped("each distinct capture is read once per verification, however many facts cite it", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const reads: Array<string> = []
      const CountingStore = Layer.effect(
        CaptureStore.CaptureStore,
        Effect.map(CaptureStore.makeFileSystem({ directory }), (store) => ({
          ...store,
          read: (source: SourceUrl) => Effect.zipRight(Effect.sync(() => reads.push(source)), store.read(source))
        }))
      )
      const verifier = yield* Effect.provide(
        Verifier.Verifier,
        Verifier.layer.pipe(
          Layer.provide(CountingStore),
          Layer.provide(Policy.layerConfig(pipelineConfig))
        )
      )
      const lines = ["Net sales", "Online orders", "Returns were", "4,210 units", "61%"]
      const labels = ["q3_net_sales", "q3_online_share", "q3_returns", "q4_forecast", "q3_inventory"]
      yield* verifier.verify({
        facts: lines.map((line, i) => cited(labels[i]!, salesRecord, line))
      })
      assert.deepStrictEqual(reads, [SALES])
      reads.length = 0
      yield* Effect.flip(verifier.verify({
        facts: [...lines.slice(0, 4).map((line, i) => cited(labels[i]!, salesRecord, line)), cited("q3_inventory", inventoryRecord, "nope")]
      }))
      assert.deepStrictEqual(reads.sort(), [INVENTORY, SALES].sort())
    }).pipe(Effect.orDie))

  it.scoped("verification leaves every file in the run directory unchanged, legacy and tampered records included", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const legacySource = "https://reports.northwind.test/2025-note.txt" as SourceUrl
      yield* Effect.promise(async () => {
        await fsp.writeFile(
          recordPath(directory, legacySource),
          JSON.stringify({ source: legacySource, text: "old", sha256: "0".repeat(64), accessedAt }),
          { mode: 0o644 }
        )
        await fsp.writeFile(`${directory}/notes.txt`, "operator notes", { mode: 0o600 })
      })
      const config = { ...(pipelineConfig as object), sources: [SALES, INVENTORY, legacySource] }
      const before = yield* snapshotDirectory(directory)
      const gate = yield* gateFor(directory, config)
      yield* gate.check({ facts: [salesFact, cited("q3_inventory", inventoryRecord, "1,180 units")] })
      yield* Effect.flip(gate.check({
        facts: [cited("q3_online_share", { ...salesRecord, source: legacySource } as typeof salesRecord, "old")]
      }))
      const after = yield* snapshotDirectory(directory)
      assert.deepStrictEqual(after, before)
      assert.isTrue(before.some((f) => f.mode === (0o100444)))
    }))
})

describe("Verifier: refuses unsafe record files", () => {
  it.scoped("CorruptCapture: a symlinked record is refused, not followed", () =>
    Effect.gen(function*() {
      const elsewhere = yield* runDirectoryWith([salesRecord])
      const directory = yield* runDirectoryWith([])
      yield* Effect.promise(() => fsp.symlink(recordPath(elsewhere, SALES), recordPath(directory, SALES)))
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "symlink")
    }))

  it.scoped("a hard-linked record (a cp -al snapshot) is accepted: same bytes, same digest", () =>
    Effect.gen(function*() {
      const elsewhere = yield* runDirectoryWith([salesRecord])
      const directory = yield* runDirectoryWith([])
      yield* Effect.promise(() => fsp.link(recordPath(elsewhere, SALES), recordPath(directory, SALES)))
      const report = yield* Effect.flatMap(gateFor(directory), (gate) => gate.check({ facts: [salesFact] }))
      assert.strictEqual(report.outcome, "grounded")
      assert.strictEqual(report.facts.length, 1)
    }))

  it.scoped("CorruptCapture: a FIFO in place of a record is refused without hanging", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      execFileSync("mkfifo", [recordPath(directory, SALES)])
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "not-a-regular-file")
    }))

  it.scoped("CorruptCapture: a record that is not valid UTF-8 is refused", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      yield* Effect.promise(() => fsp.writeFile(recordPath(directory, SALES), Buffer.from([0x7b, 0xff, 0x7d])))
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "invalid-utf8")
    }))

  it.scoped("CorruptCapture: a record with a repeated key is refused", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      const good = JSON.stringify({ ...salesRecord })
      const doubled = good.replace(`"text":`, `"text":"Net sales for Q3 2026 were 4,210 units","text":`)
      yield* Effect.promise(() => fsp.writeFile(recordPath(directory, SALES), doubled))
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "invalid-json")
    }))

  it.scoped("CorruptCapture: a record with an unknown key is refused", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      const withExtra = JSON.stringify({ ...salesRecord, trusted: true })
      yield* Effect.promise(() => fsp.writeFile(recordPath(directory, SALES), withExtra))
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "not-a-v1-record")
      assert.match(failure.error.detail, /trusted/)
    }))

  it.scoped("CorruptCapture: a record whose byteLength disagrees with its text", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      const wrong = makeCaptureRecord({ ...salesRecord })
      yield* Effect.promise(() =>
        fsp.writeFile(recordPath(directory, SALES), JSON.stringify({ ...wrong, byteLength: wrong.byteLength + 1 }))
      )
      const failure = onlyFailure(yield* rejection(directory, { facts: [salesFact] }))
      assert.instanceOf(failure.error, CorruptCapture)
      assert.strictEqual(failure.error.reason, "byte-length-mismatch")
    }))
})
