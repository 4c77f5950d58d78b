/**
 * normalized/2 (issue 30, finding 9): a normalised match never changes a number, a sign, an exponent,
 * a fraction or a unit. Each case is a capture that writes a number or unit in one form and a quote
 * that `normalized/1` equated with it; every case goes through the real Gate over a run directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { meaningChange, tokens } from "../src/anchor/MeaningGuard.js"
import { keptVerbatim, normalizedVersion2, normalizeText } from "../src/anchor/Normalize.js"
import { ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Describe from "../src/render/Describe.js"
import * as Render from "../src/render/Render.js"
import * as Repair from "../src/render/Repair.js"
import { check, fact, onlyCitation, onlyFailure } from "./anchorSupport.js"

/** [capture's form, the quote's form] as reported: each pair is equal under normalized/1. */
const changes: ReadonlyArray<readonly [string, string]> = [
  ["10⁶", "106"],
  ["12³", "123"],
  ["10⁻⁵", "10-5"],
  ["m²", "m2"],
  ["2½", "21⁄2"],
  ["①②", "12"],
  ["Ⅻ", "xii"],
  ["⒈", "1."],
  ["MW", "mW"],
  ["MB/s", "mb/s"],
  ["℃", "°c"],
  ["−5", "-5"]
]

/** The sentence a capture's form is written in: a number before a unit, so units are read as units. */
const template = (captureForm: string) =>
  /^[A-Za-z℃]/u.test(captureForm) ? "The plant's output was 40 $ in the test, “as specified”." : "The reading was $ in the test, “as specified”."
const sentence = (form: string, captureForm = form) => template(captureForm).replace("$", form)
/** What a drafter types: straight quotes, and `form` where the capture has `captureForm`. */
const quoteOf = (form: string, captureForm = form) => sentence(form, captureForm).replace(/[“”]/gu, "\"")

describe("normalized/2 refuses every meaning change normalized/1 accepted", () => {
  it("each pair is equal under normalized/1 and different under normalized/2 or its token check", () => {
    for (const [capture, quote] of changes) {
      const c = sentence(capture)
      const q = quoteOf(quote, capture)
      assert.include(normalizeText(c), normalizeText(q), `normalized/1 equates ${capture} and ${quote}`)
      const v2 = normalizeText(c, normalizedVersion2).includes(normalizeText(q, normalizedVersion2))
      assert.isTrue(!v2 || meaningChange(q, c) !== undefined, `${capture} → ${quote}`)
    }
  })

  for (const matching of ["normalized/2", "normalized/1"] as const) {
    it.scoped(`under verify.matching ${matching}: every changed quote is SnippetAbsent; the capture's form is accepted`, () =>
      Effect.gen(function*() {
        for (const [form, changed] of changes) {
          const text = `Header line.\n${sentence(form)}\nFooter line.\n`
          const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, quoteOf(changed, form))], { matching })))
          assert.instanceOf(error, SnippetAbsent, `${form} → ${changed}`)
          // The faithful quote (straight quotes for curly ones, the number as written) is still accepted.
          const { evidence } = onlyCitation(yield* check(text, [fact(text, quoteOf(form))], { matching }))
          assert.strictEqual(evidence.method, "normalized/2", form)
          assert.strictEqual(text.slice(evidence.span.start, evidence.span.end), sentence(form))
          // And the verbatim sentence is exact.
          assert.strictEqual(onlyCitation(yield* check(text, [fact(text, sentence(form))], { matching })).evidence.method, "exact")
        }
      }))
  }

  it.scoped("a refused unit or sign names what changed (the fix the drafter needs), also under exact matching", () =>
    Effect.gen(function*() {
      const text = "Output: the plant delivers 40 MW at peak and −5 °C at night.\n"
      const mega = onlyFailure(yield* Effect.flip(check(text, [fact(text, "the plant delivers 40 mW at peak")], { matching: "normalized/2" })))
      assert.instanceOf(mega, SnippetAbsent)
      assert.deepStrictEqual(mega.changed, { quote: "mW", capture: "MW" })
      assert.include(mega.message, `the quote writes "mW" where the capture has "MW"`)
      const sign = onlyFailure(yield* Effect.flip(check(text, [fact(text, "at peak and -5 °C at night")])))
      assert.instanceOf(sign, SnippetAbsent)
      assert.deepStrictEqual(sign.changed, { quote: "-5", capture: "−5" })
      assert.strictEqual(sign.nearest?.method, "normalized/1")
      // Every rendering and the repair instructions name the change instead of calling it typography.
      const d = Describe.factError(mega)
      assert.deepStrictEqual(d.fields.slice(-2), [["quote writes", "mW"], ["capture has", "MW"]])
      assert.include(d.fix, "changes a number, sign or unit")
      const repair = Repair.renderReport(Render.fromOutcome(Either.left(new ReportRejected({ failures: [{ index: 0, label: "a", error: mega }] }))))
      assert.include(repair, "but with a different number, sign or unit")
      assert.include(repair, "Your quote writes:\n\n```text\nmW\n```\n\nwhere the capture has:\n\n```text\nMW\n```")
      assert.notInclude(repair, "the same text up to typography, case and spacing")
    }))

  it.scoped("what normalized/2 still accepts: case and typography of words, full-width digits, a unit written with its compatibility symbol", () =>
    Effect.gen(function*() {
      const text = "THE PLANT delivered ４０ MW in “phase one” – see the ﬁgures.\n"
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "the plant delivered 40 MW in \"phase one\" - see the figures.")], { matching: "normalized/2" }))
      assert.strictEqual(evidence.method, "normalized/2")
      assert.strictEqual(evidence.span.start, 0)
    }))
})

describe("MeaningGuard tokens", () => {
  it("numbers with their sign (not after a letter or number), units after numbers and in compounds, mixed-case words", () => {
    const kinds = (text: string) => tokens(text).map((t) => `${t.kind}:${t.raw}`)
    // A word right after a number is read as its unit (`and`, `of` here): compared with its case.
    assert.deepStrictEqual(kinds("pages 3–5 and −7 of 1,234.5 kWh"), [
      "number:3",
      "number:5",
      "unit:and",
      "number:−7",
      "unit:of",
      "number:1,234.5",
      "unit:kWh"
    ])
    assert.deepStrictEqual(kinds("speed in MB/s, the THE and The, pH low"), ["unit:MB", "unit:s", "word:pH"])
    assert.deepStrictEqual(kinds("10\u00a0MW\n2 ℃"), ["number:10", "unit:MW", "number:2", "unit:℃"])
    // Soft hyphens and zero-width characters are dropped as normalisation drops them.
    assert.deepStrictEqual(kinds("ex\u00adtraction 5\u200bkm"), ["number:5", "unit:km"])
    assert.strictEqual(meaningChange("25 °C", "25 ℃"), undefined)
    assert.strictEqual(meaningChange("40 MW", "40 MW"), undefined)
    assert.deepStrictEqual(meaningChange("4,210", "４,２１０"), undefined)
    assert.deepStrictEqual(meaningChange("4 units", "4 units and 5"), { quote: "", capture: "5" })
    // After a unit, white space ends it: the words that follow are folded as usual.
    assert.strictEqual(meaningChange("40 MW in the test", "40 MW In The Test"), undefined)
  })

  it("keptVerbatim covers every number form whose NFKC is a plain digit, and no decimal digit", () => {
    for (let cp = 0; cp <= 0x1ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue
      const ch = String.fromCodePoint(cp)
      if (/\p{Nd}/u.test(ch)) assert.isFalse(keptVerbatim(cp), ch)
      else if (/[\p{No}\p{Nl}]/u.test(ch)) assert.isTrue(keptVerbatim(cp), `U+${cp.toString(16)}`)
      // Whatever is not kept and not a digit: its normalized/2 form holds no digit it did not have.
      // Any other character whose NFKC form holds a number (㍘ → 0点, ㎡ → m2) is left as it is.
      else if (/\p{N}/u.test(ch.normalize("NFKC"))) assert.strictEqual(normalizeText(ch, normalizedVersion2), ch, `U+${cp.toString(16)}`)
    }
  })

  it("linear: the token check of a 1 MiB quote against itself (40,000 tokens) ends in seconds, not hours", () => {
    // Quadratic work on 1 Mi code units would be ~10¹² steps; the bound leaves room for a loaded machine.
    const text = "Output 40 MW, −5 ℃, 10⁶ J; ".repeat(40_000)
    const started = performance.now()
    assert.strictEqual(meaningChange(text, text), undefined)
    assert.isBelow(performance.now() - started, 10_000)
  })
})
