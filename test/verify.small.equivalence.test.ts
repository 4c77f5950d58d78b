/**
 * The load and match steps without an effect per capture (verify/Load.ts `readAllNow` through the
 * filesystem store's synchronous read, internal/readNow.ts; verify/Match.ts `matchEach`) against
 * the general path: seeded reports over a run directory of small and large, v1 and v2, ASCII and
 * non-ASCII captures, and records that fail every way a read fails (missing, not JSON, not UTF-8,
 * an extra key, another source, a wrong length, pre-v1, a symlink, a directory, a v2 body missing),
 * checked through three Gates: the filesystem store as it is; the same store behind a wrapper of
 * `read` (no synchronous read: an effect per capture); and that wrapper under an exporting tracer
 * (a span per capture read and searched: the loop of `matchCapture` effects). Every outcome, errors
 * included word for word, must be the same, and every failure tag must occur.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { VerificationTimeout } from "../src/Errors.js"
import * as fs from "node:fs"
import type { SourceUrl } from "../src/Domain.js"
import { readNowOf } from "../src/internal/readNow.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Gate from "../src/verify/Gate.js"
import { flat, random } from "./searchSupport.js"
import { recordPath, tempDirectory } from "./support.js"
import { countOpens } from "./support/countOpens.js"
import { comparable, gateOf, outcomeOf, plain, policies, runDirectory, seededReport } from "./support/smallRun.js"
import { exportingTracer } from "./support/spans.js"

describe("verifying without an effect per capture: the general path's outcome, errors included", () => {
  it.scopedLive("the filesystem store has a synchronous read; a wrapper of its read has none", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.isDefined(readNowOf(store.read))
      assert.isUndefined(readNowOf({ ...store, read: (s: SourceUrl) => store.read(s) }.read))
    }))

  it.scopedLive("seeded reports of every kind, under four policies: the same outcome through all three Gates", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const tags = new Set<string>()
      const reasons = new Set<string>()
      for (const verify of policies) {
        const fast = yield* gateOf(directory, verify, false)
        const general = yield* gateOf(directory, verify, true)
        const { tracer } = exportingTracer()
        const next = random(31 + policies.indexOf(verify))
        let verified = 0
        for (let n = 0; n < 60; n++) {
          const text = seededReport(next)
          const fromFast = yield* outcomeOf(fast.checkJsonWithCaptures(text))
          assert.deepStrictEqual(fromFast, yield* outcomeOf(general.checkJsonWithCaptures(text)), `${JSON.stringify(verify)}: ${text}`)
          // Under spans, an error raised in a span carries it (a hidden property): compared as JSON, messages included.
          const fromSpans = yield* outcomeOf(Effect.withTracer(general.checkJsonWithCaptures(text), tracer))
          assert.strictEqual(comparable(fromSpans), comparable(fromFast), `${JSON.stringify(verify)} (spans): ${text}`)
          if (Either.isRight(fromFast)) {
            verified += fromFast.right.report.facts.length
            // The captures given are those of the verified cited facts, in the report's order, each its source's record.
            const cited = fromFast.right.report.facts.flatMap((entry) => entry.fact.state === "cited" ? [entry.fact.source as string] : [])
            assert.deepStrictEqual(fromFast.right.captures.map(([source]) => source), [...new Set(cited)], text)
            for (const [source, record] of fromFast.right.captures) assert.strictEqual(record.source, source)
            for (const r of fromFast.right.report.retractions) {
              tags.add(r.error._tag)
              if (r.error._tag === "CorruptCapture") reasons.add((r.error as { reason: string }).reason)
            }
          }
        }
        // Reject mode: every seeded report has a failing fact, so each is refused whole.
        if (verify["mode"] === "drop") assert.isAbove(verified, 0, JSON.stringify(verify))
      }
      for (const tag of ["NotApproved", "MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch", "SnippetAbsent", "AmbiguousSnippet", "UnknownLabel"]) {
        assert.isTrue(tags.has(tag), `${tag} in ${[...tags].join(", ")}`)
      }
      for (const reason of ["invalid-json", "invalid-utf8", "not-a-v1-record", "symlink", "not-a-regular-file", "body-missing"]) {
        assert.isTrue(reasons.has(reason), `${reason} in ${[...reasons].join(", ")}`)
      }
    }), 180_000)

  for (const refusedLate of [false, true]) {
    const what = refusedLate ? "of records refused after a whole read (an extra key)" : "of synchronous reads"
    it.scopedLive(`a long run ${what} yields to the timers: an overrun deadline stops it before the last capture`, () =>
      Effect.gen(function*() {
        // 80 records of 250,000 code units each, every one read synchronously (under syncReadLimit):
        // 20 Mi units in all, past the 8 Mi after which the load yields to the timers.
        const text = flat("net sales rose 4% to 1,180 units. ".repeat(7_143).slice(0, 250_000))
        const many = Array.from({ length: 80 }, (_, i) => plain(`many-${i}.txt`, `${i} ${text}`))
        const directory = yield* tempDirectory
        const store = yield* CaptureStore.makeFileSystem({ directory })
        for (const record of many) yield* store.write(record)
        if (refusedLate) {
          // Each record is read and parsed whole, then refused (not-a-v1-record): no text is counted.
          for (const record of many) {
            const file = recordPath(directory, record.source)
            fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), extra: 1 }))
          }
        }
        const facts = many.map((r, i) => ({ state: "cited", label: `fact_${i}`, source: r.source, captureSha256: r.sha256, snippet: r.text.slice(0, 20) }))
        const config = { sources: many.map((r) => r.source), labels: facts.map((f) => f.label), verify: { maxFacts: 100, mode: "drop", timeoutMs: 1 } }
        const gate = yield* Effect.provide(
          Gate.Gate,
          Gate.layerWithStore(config).pipe(Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store)), Layer.orDie)
        )
        const { opened } = yield* countOpens
        const error = yield* Effect.flip(gate.checkJson(JSON.stringify({ facts })))
        assert.instanceOf(error, VerificationTimeout)
        // Stopped at a yield: not every record was opened (without the yields, all 80 are read first).
        assert.isAbove(opened.length, 0)
        assert.isBelow(opened.length, 80)
      }), 60_000)
  }
})
