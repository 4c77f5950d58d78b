/**
 * Matching beyond ASCII: exact UTF-16 code-unit equality with no Unicode
 * normalisation, spans in UTF-16 code units, CRLF kept, and the verified
 * snippet passed on exactly as the report gave it.
 *
 * The fixtures (fixtures/sources/unicode-nfc.txt and unicode-nfd.txt) hold the
 * same words in NFC and NFD, non-BMP characters (U+1F600, U+1D518), combining
 * marks and CRLF line ends. Every expected span below is counted by hand in
 * the comment next to it, not computed by the code under test.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { DigestMismatch, type NotApproved, ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { failureOf } from "./mutants.support.js"
import { accessedAt, fixtureText, gateFor, runDirectoryWith } from "./support.js"

const NFC = "https://reports.northwind.test/unicode-nfc.txt" as SourceUrl
const NFD = "https://reports.northwind.test/unicode-nfd.txt" as SourceUrl
const nfc = makeCaptureRecord({ source: NFC, text: fixtureText("unicode-nfc.txt"), accessedAt, contentType: "text/plain" })
const nfd = makeCaptureRecord({ source: NFD, text: fixtureText("unicode-nfd.txt"), accessedAt, contentType: "text/plain" })
const config = { sources: [NFC, NFD], labels: ["a", "b", "c", "d", "e", "f", "g"] }

// "Café" as U+00E9 (NFC) and as e + U+0301 COMBINING ACUTE ACCENT (NFD): the same word, different code units.
const cafeNfc = "Caf\u00e9"
const cafeNfd = "Cafe\u0301"

const cite = (label: string, record: typeof nfc, snippet: string) => ({
  state: "cited" as const,
  label,
  source: record.source as string,
  captureSha256: record.sha256 as string,
  snippet
})

const check = (facts: ReadonlyArray<unknown>, mode: "reject" | "drop" = "drop") =>
  Effect.gen(function*() {
    const directory = yield* runDirectoryWith([nfc, nfd])
    const gate = yield* gateFor(directory, { ...config, verify: { mode } })
    return yield* gate.checkJsonWithCaptures(JSON.stringify({ facts }))
  })

const spans = (report: { readonly facts: ReadonlyArray<unknown> }) =>
  report.facts.map((entry) => {
    const e = entry as { index: number; evidence?: { span: { start: number; end: number } } }
    return [e.index, e.evidence?.span.start, e.evidence?.span.end]
  })

describe("Verifier: text beyond ASCII", () => {
  it("the fixtures hold what the tests below assume", () => {
    assert.isTrue(nfc.text.includes(cafeNfc) && !nfc.text.includes(cafeNfd))
    assert.isTrue(nfd.text.includes(cafeNfd) && !nfd.text.includes(cafeNfc))
    assert.strictEqual(cafeNfd.normalize("NFC"), cafeNfc)
    assert.include(nfc.text, "\r\n")
  })

  it.scoped("an NFD snippet does not match NFC text, nor an NFC snippet NFD text: no normalisation", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(check([cite("a", nfc, cafeNfd), cite("b", nfd, cafeNfc)], "reject"))
      assert.instanceOf(error, ReportRejected)
      assert.deepStrictEqual(error.failures.map((f) => [f.index, f.label, f.error._tag]), [
        [0, "a", "SnippetAbsent"],
        [1, "b", "SnippetAbsent"]
      ])
      const [first, second] = error.failures
      assert.instanceOf(first!.error, SnippetAbsent)
      assert.instanceOf(second!.error, SnippetAbsent)
      // The failure names the snippet exactly as given, code unit for code unit.
      assert.strictEqual(first!.error.snippet, cafeNfd)
      assert.strictEqual(first!.error.source, NFC)
      assert.strictEqual(first!.error.captureSha256, nfc.sha256)
      assert.strictEqual(second!.error.snippet, cafeNfc)
      assert.strictEqual(second!.error.source, NFD)
    }))

  it.scoped("each form matches its own form: spans in UTF-16 code units", () =>
    Effect.gen(function*() {
      const { report } = yield* check([cite("a", nfc, cafeNfc), cite("b", nfd, cafeNfd)], "reject")
      // "Café" is 4 code units in NFC, 5 in NFD (e + U+0301).
      assert.deepStrictEqual(spans(report), [[0, 0, 4], [1, 0, 5]])
    }))

  it.scoped("spans after non-BMP characters and combining marks count UTF-16 code units, not bytes or code points", () =>
    Effect.gen(function*() {
      const { report } = yield* check([
        // NFC: "Café" 4 + " " 1 + U+1F600 2 + " sales" 6 + CRLF 2 = 15; + 26 = 41. (UTF-8 bytes: 18; code points: 14.)
        cite("a", nfc, "Net sales were 4,210 units"),
        // NFD: "Cafe" 4 + U+0301 1 + " " 1 + U+1F600 2 + " sales" 6 + CRLF 2 = 16; + 26 = 42.
        cite("b", nfd, "Net sales were 4,210 units"),
        // "Café " = 5; U+1F600 2 + " sales" 6 = 8 long: 5–13.
        cite("c", nfc, "\u{1F600} sales"),
        // Line 3 starts at 41 + CRLF 2 = 43; U+1D518 2 + "nicode " 7 = 9: 52; "résumé Ångström" is 15 long: 52–67.
        cite("d", nfc, "r\u00e9sum\u00e9 \u00c5ngstr\u00f6m"),
        // NFD line 3 starts at 42 + 2 = 44; "re" 2 + U+0301 1 + "sume" 4 + U+0301 1 + " " 1 = 9: 53;
        // A U+030A n g s t r o U+0308 m is 10 long: 53–63.
        cite("e", nfd, "A\u030angstro\u0308m"),
        // Then ", " 2: 65; U+1D518 2 + "nicode" 6 = 8 long: 65–73.
        cite("f", nfd, "\u{1D518}nicode")
      ], "reject")
      assert.deepStrictEqual(spans(report), [
        [0, 15, 41],
        [1, 16, 42],
        [2, 5, 13],
        [3, 52, 67],
        [4, 53, 63],
        [5, 65, 73]
      ])
    }))

  it.scoped("CRLF is matched as is: a snippet with LF alone does not match a CRLF line end", () =>
    Effect.gen(function*() {
      const { report } = yield* check([
        // "Café 😀 " = 4 + 1 + 2 + 1 = 8; "sales" 5 + CRLF 2 + "Net sales" 9 = 16: 8–24.
        cite("a", nfc, "sales\r\nNet sales"),
        cite("b", nfc, "sales\nNet sales"),
        cite("c", nfc, "sales\rNet sales")
      ])
      assert.deepStrictEqual(spans(report), [[0, 8, 24]])
      assert.deepStrictEqual(report.retractions.map((r) => [r.index, r.error._tag]), [[1, "SnippetAbsent"], [2, "SnippetAbsent"]])
    }))

  it.scoped("the verified entry's snippet is byte-identical to the report's, in the report and in every rendering", () =>
    Effect.gen(function*() {
      const snippets = ["Net sales were 4,210 units", "A\u030angstro\u0308m", "\u{1D518}nicode"]
      const checked = yield* check([cite("a", nfc, snippets[0]!), cite("b", nfd, snippets[1]!), cite("c", nfd, snippets[2]!)], "reject")
      const got = checked.report.facts.map((entry) => entry.fact.state === "cited" ? entry.fact.snippet : undefined)
      assert.deepStrictEqual(got.map((s) => Buffer.from(s ?? "", "utf8").toString("hex")), snippets.map((s) => Buffer.from(s, "utf8").toString("hex")))
      const json = JSON.parse(Render.render("json", Rendering.Verified(checked)))
      assert.deepStrictEqual(json.report.facts.map((e: { fact: { snippet: string } }) => e.fact.snippet), snippets)
    }))
})

describe("Verifier: failure fields and the captures handed to renderers", () => {
  const SALES = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
  const INVENTORY = "https://reports.northwind.test/q3-inventory.txt" as SourceUrl
  const sales = makeCaptureRecord({ source: SALES, text: fixtureText("q3-sales.txt"), accessedAt, contentType: "text/plain" })
  const inventory = makeCaptureRecord({ source: INVENTORY, text: fixtureText("q3-inventory.txt"), accessedAt, contentType: "text/plain" })
  const approved = { sources: [SALES, INVENTORY], labels: ["a", "b", "c", "d"], verify: { mode: "drop" as const } }

  it.scoped("NotApproved carries the URL policy's reason and detail, or says the source is not in the approved set", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([sales])
      const gate = yield* gateFor(directory, approved)
      const { report } = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          { ...cite("a", sales, "Net sales"), source: "https://reports.northwind.test/q3-sales.txt?rev=2" },
          { ...cite("b", sales, "Net sales"), source: "HTTPS://reports.northwind.test/q3-sales.txt" },
          { ...cite("c", sales, "Net sales"), source: "ftp://reports.northwind.test/q3-sales.txt" },
          { ...cite("d", sales, "Net sales"), source: "not a url" }
        ]
      }))
      assert.deepStrictEqual(report.retractions.map((r) => {
        const e = r.error as NotApproved
        return [r.index, e._tag, e.source, e.reason, e.detail]
      }), [
        [0, "NotApproved", "https://reports.northwind.test/q3-sales.txt?rev=2", "not-in-approved-set", "not in the approved source set"],
        [1, "NotApproved", "HTTPS://reports.northwind.test/q3-sales.txt", "not-canonical",
          "URL is not in canonical form (it parses as https://reports.northwind.test/q3-sales.txt)"],
        [2, "NotApproved", "ftp://reports.northwind.test/q3-sales.txt", "scheme-not-allowed",
          "URL uses ftp:; only https (and http in test mode) are allowed"],
        [3, "NotApproved", "not a url", "not-canonical", "URL is not an absolute URL"]
      ])
    }))

  it.scoped("DigestMismatch names the source and both digests, for either kind", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([sales])
      const gate = yield* gateFor(directory, approved)
      const { report } = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [{ ...cite("a", sales, "Net sales"), captureSha256: inventory.sha256 }]
      }))
      const error = report.retractions[0]!.error
      assert.instanceOf(error, DigestMismatch)
      assert.deepStrictEqual(
        [error.source, error.kind, error.reported, error.stored, error.computed],
        [SALES, "report", inventory.sha256, sales.sha256, sales.sha256]
      )
    }))

  it.scoped("captures are handed on only for sources with a verified citation, each as read", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([sales, inventory])
      const gate = yield* gateFor(directory, approved)
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          cite("a", sales, "Net sales"),
          cite("b", inventory, "not in the inventory text"),
          cite("c", sales, "Q3 2026")
        ]
      }))
      assert.deepStrictEqual(checked.report.facts.map((e) => e.index), [0, 2])
      assert.deepStrictEqual([...checked.captures.keys()], [SALES])
      assert.deepStrictEqual(checked.captures.get(SALES), sales)
    }))
})

describe("Verifier: verifyJson", () => {
  it.scoped("accepts a grounded report's JSON and rejects one with a failing fact, listing it", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([nfc])
      const verifier = yield* Effect.provide(
        Verifier.Verifier,
        Verifier.layer.pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory })),
          Layer.provide(Policy.layerConfig(config)),
          Layer.orDie
        )
      )
      const ok = yield* verifier.verifyJson(JSON.stringify({ facts: [cite("a", nfc, cafeNfc)] }))
      assert.strictEqual(ok.outcome, "grounded")
      assert.deepStrictEqual(spans(ok), [[0, 0, 4]])
      const error = yield* failureOf(verifier.verifyJson(JSON.stringify({ facts: [cite("a", nfc, cafeNfd)] })))
      assert.instanceOf(error, ReportRejected)
      assert.deepStrictEqual(error.failures.map((f) => [f.index, f.label, f.error._tag]), [[0, "a", "SnippetAbsent"]])
      const invalid = yield* failureOf(verifier.verifyJson(`{"facts":[],"facts":[]}`))
      assert.strictEqual(invalid._tag, "InvalidReport")
    }))
})
