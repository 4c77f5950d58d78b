/**
 * The warm path (verify/Warm.ts) against the general path: seeded reports of every kind (verified,
 * ambiguous, absent with diagnostics, digest mismatches, unknown and repeated labels, unapproved
 * sources, prefix and suffix context, headings, numbers cut, normalised quotes, hostile periodic
 * text) verified over one run directory through three Gates: the warm one, one with the warm path
 * off over the same cache, and one with no cache at all (linear search). Every outcome, errors
 * included, must be the same, and the warm Gate must have taken the warm path where it applies.
 * A capture changed on disk after it was cached takes the general path and is refused as before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as fs from "node:fs"
import type { PipelineConfig } from "../src/Config.js"
import { type CaptureRecord, makeCaptureRecord, sha256Of, type SourceUrl } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import * as Gate from "../src/verify/Gate.js"
import * as Warm from "../src/verify/Warm.js"
import { flat, random } from "./searchSupport.js"
import { accessedAt, fixtureText, recordPath, runDirectoryWith } from "./support.js"

const source = (name: string) => `https://warm.example.com/${name}` as SourceUrl
const prose = "Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros. "
const record = (name: string, text: string, contentType = "text/plain") =>
  makeCaptureRecord({ source: source(name), text: flat(text), accessedAt, contentType })
const captures: ReadonlyArray<CaptureRecord> = [
  record("sales.txt", fixtureText("q3-sales.txt")),
  record("inventory.txt", fixtureText("q3-inventory.txt")),
  record("nfc.txt", fixtureText("unicode-nfc.txt")),
  record("nfd.txt", fixtureText("unicode-nfd.txt")),
  record("repeated.txt", prose.repeat(200) + "A unique closing line, once."),
  record(
    "notes.md",
    "# Results\n\nNet  sales ROSE 4% to 1,180 units.\n\n## Outlook\n\nNet sales rose 4% to 1,180 units.\n" + "filler text. ".repeat(300),
    "text/markdown"
  ),
  // Hostile shapes: one character repeated, and periodic text.
  record("aaaa.txt", "a".repeat(20_000) + "b" + "a".repeat(20_000)),
  record("periodic.txt", "ab".repeat(15_000) + "abc" + "ab".repeat(100))
]
const unapproved = source("not-approved.txt")
const labels = Array.from({ length: 40 }, (_, i) => `fact_${i}`)

/** One seeded report: 1 to 14 facts of every kind, drawn by `next`. */
const seededReport = (next: () => number) => {
  const pickCapture = () => captures[next() % captures.length]!
  const slice = (r: CaptureRecord, length: number) => {
    const from = next() % Math.max(1, r.text.length - length)
    return { from, text: r.text.slice(from, from + length) }
  }
  const facts: Array<Record<string, unknown>> = []
  const count = 1 + (next() % 14)
  for (let k = 0; k < count; k++) {
    // Mostly distinct approved labels; now and then a repeated or unknown one.
    const roll = next() % 20
    const label = roll === 0 ? "not_a_label" : roll === 1 && k > 0 ? (facts[0]!["label"] as string) : labels[k]!
    const r = pickCapture()
    const base = { state: "cited", label, source: r.source, captureSha256: r.sha256 }
    switch (next() % 13) {
      case 0:
        facts.push({ state: "unavailable", label, reason: "not found in the sources" })
        break
      case 1: // absent: a quote altered by one character (diagnosed), or text from elsewhere
        facts.push({ ...base, snippet: next() % 2 === 0 ? slice(r, 40).text.replace(/.$/su, "#") : "nowhere in any capture at all" })
        break
      case 2: // the digest of another capture, or a made-up one
        facts.push({ ...base, captureSha256: next() % 2 === 0 ? pickCapture().sha256 : sha256Of(String(next())) })
        facts[facts.length - 1]!["snippet"] = slice(r, 20).text || "x"
        break
      case 3:
        facts.push({ ...base, source: unapproved, snippet: "anything" })
        break
      case 4: { // context: the right prefix and suffix, or a wrong one
        const { from, text } = slice(r, 12)
        const prefix = r.text.slice(Math.max(0, from - 6), from)
        const suffix = r.text.slice(from + text.length, from + text.length + 5)
        const right = next() % 3 !== 0
        facts.push({ ...base, snippet: text || "a", ...(prefix === "" ? {} : { prefix: right ? prefix : prefix + "~" }), ...(suffix === "" ? {} : { suffix }) })
        break
      }
      case 5: { // ambiguous phrases and numbers that cut a token
        const pool = ["Net sales rose 4% to 1,180 units", "4,210", "rose", "aaaa", "abab", "filler text.", "1,18", "units."]
        facts.push({ ...base, snippet: pool[next() % pool.length]! })
        break
      }
      case 6: { // a heading (only notes.md has them)
        const notes = captures[5]!
        const heading = [["Results"], ["Outlook"], ["Results", "Outlook"], ["Nowhere"]][next() % 4]!
        facts.push({ ...base, source: notes.source, captureSha256: notes.sha256, snippet: "Net sales rose 4% to 1,180 units.", heading })
        break
      }
      case 7: // normalised only: other case and spacing (matches under normalized/2)
        facts.push({ ...base, snippet: slice(r, 30).text.toUpperCase().replace(/ /g, "  ") || "A" })
        break
      default: // a plain quote, short or long
        facts.push({ ...base, snippet: slice(r, 1 + (next() % 80)).text || "a" })
    }
  }
  return JSON.stringify({ facts })
}

const policies: ReadonlyArray<Record<string, unknown>> = [
  {},
  { mode: "drop" },
  { mode: "drop", matching: "normalized/2" },
  { mode: "drop", boundaries: "tokens" },
  { mode: "drop", ambiguous: "reject" },
  { mode: "drop", hidden: "reject", ambiguous: "reject", boundaries: "tokens" }
]

const configOf = (verify: Record<string, unknown>) =>
  ({ sources: captures.map((r) => r.source), labels, verify: { maxFacts: 100, ...verify } }) as unknown as PipelineConfig

/** A Gate over the run directory, with `cache` when given and the warm path as `warm` says. */
const gateOf = (directory: string, verify: Record<string, unknown>, cache: CaptureCache.CaptureCacheShape | undefined, warm: Warm.WarmPathOptions) =>
  Effect.provide(
    Gate.Gate,
    Gate.layerWithStore(configOf(verify)).pipe(
      Layer.provide(CaptureStore.layerFileSystem({ directory })),
      Layer.provide(Layer.succeed(Warm.WarmPath, warm)),
      Layer.orDie
    )
  ).pipe(CaptureCache.provideOption(Option.fromNullable(cache)))

/** What a check gives, comparable: the report or the error, and the captures the accepted facts were verified against. */
const outcomeOf = (gate: Gate.GateShape, text: string) =>
  Effect.map(Effect.either(gate.checkJsonWithCaptures(text)), (outcome) =>
    Either.map(outcome, (checked) => ({ ...checked, captures: [...checked.captures.entries()] })))

/** The three Gates of one policy over one run directory; `taken` counts the warm Gate's paths. */
const threeGates = (directory: string, verify: Record<string, unknown>) =>
  Effect.gen(function*() {
    const taken = { warm: 0, general: 0 }
    const cache = CaptureCache.make({ maxBytes: 64 << 20 })
    const warm = yield* gateOf(directory, verify, cache, { enabled: true, observe: (w) => void (w ? taken.warm++ : taken.general++) })
    const general = yield* gateOf(directory, verify, cache, { enabled: false })
    const linear = yield* gateOf(directory, verify, undefined, { enabled: true })
    // Every capture read, cached and indexed once, by a report that names them all.
    const all = JSON.stringify({ facts: captures.map((r, i) => ({ state: "cited", label: labels[i], source: r.source, captureSha256: r.sha256, snippet: r.text.slice(0, 5) })) })
    yield* warm.checkJsonWithCaptures(all).pipe(Effect.either)
    return { taken, warm, general, linear }
  })

describe("the warm path: the general path's outcome, errors included", () => {
  it.scopedLive("seeded reports of every kind, under every policy, through the warm, general and uncached Gates", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith(captures)
      for (const verify of policies) {
        const { general, linear, taken, warm } = yield* threeGates(directory, verify)
        taken.warm = 0
        taken.general = 0
        const next = random(101 + policies.indexOf(verify))
        const rejected = { fact: 0, verified: 0 }
        for (let n = 0; n < 80; n++) {
          const text = seededReport(next)
          const fromWarm = yield* outcomeOf(warm, text)
          const fromGeneral = yield* outcomeOf(general, text)
          assert.deepStrictEqual(fromWarm, fromGeneral, `${JSON.stringify(verify)}: ${text}`)
          assert.deepStrictEqual(fromWarm, yield* outcomeOf(linear, text), `${JSON.stringify(verify)} (uncached): ${text}`)
          if (Either.isRight(fromWarm)) rejected.verified++
          else rejected.fact++
        }
        // Both outcomes were exercised, and the warm Gate took the warm path (every time but under
        // normalised matching, where an exact miss falls back).
        assert.isAbove(rejected.verified, 0, JSON.stringify(verify))
        if (verify["mode"] === undefined) assert.isAbove(rejected.fact, 0)
        assert.isAbove(taken.warm, verify["matching"] === undefined ? 70 : 10, JSON.stringify(verify))
        if (verify["matching"] === undefined) assert.strictEqual(taken.general, 0, JSON.stringify(verify))
        else assert.isAbove(taken.general, 0, JSON.stringify(verify))
      }
    }), 120_000)

  it.scopedLive("a capture changed on disk after it was cached takes the general path and is refused as before", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith(captures)
      const { general, linear, taken, warm } = yield* threeGates(directory, { mode: "drop" })
      const sales = captures[0]!
      const quote = sales.text.slice(10, 50)
      const text = JSON.stringify({ facts: [{ state: "cited", label: "fact_0", source: sales.source, captureSha256: sales.sha256, snippet: quote }] })
      const before = yield* outcomeOf(warm, text)
      assert.isTrue(Either.isRight(before) && before.right.report.facts.length === 1)
      taken.warm = 0
      // The record replaced (a new file: its stamp changes): the same digest stated, other text.
      const file = recordPath(directory, sales.source)
      const stored = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
      const altered = sales.text.replace(quote, quote.toUpperCase() === quote ? quote.toLowerCase() : quote.toUpperCase())
      fs.rmSync(file)
      fs.writeFileSync(file, JSON.stringify({ ...stored, text: altered, byteLength: Buffer.byteLength(altered) }))
      const after = yield* outcomeOf(warm, text)
      assert.strictEqual(taken.warm, 0)
      assert.strictEqual(taken.general, 2) // the warm-up's report, then this one
      assert.deepStrictEqual(after, yield* outcomeOf(general, text))
      assert.deepStrictEqual(after, yield* outcomeOf(linear, text))
      // Refused: in drop mode, retracted with the digest its text does not hash to.
      assert.isTrue(Either.isRight(after))
      const report = Either.getOrThrow(after).report
      assert.strictEqual(report.facts.length, 0)
      assert.deepInclude(report.retractions[0]!.error, { _tag: "DigestMismatch", kind: "stored" })
      // And again: a capture that does not hash to its digest is never cached, so never warm.
      assert.deepStrictEqual(yield* outcomeOf(warm, text), after)
      assert.strictEqual(taken.warm, 0)
    }), 60_000)
})
