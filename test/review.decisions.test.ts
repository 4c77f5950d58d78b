/**
 * Recorded human review on the filesystem: a decision is bound to a verified fact, appended under
 * the next free name (read-only, never replaced), superseded by a later one with both kept, and every
 * way of not recording one is a typed failure with nothing written. Renderings show the decisions in
 * their own section, escaped in every format.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import {
  DecisionFactNotVerified,
  DecisionInvalid,
  DecisionLogCorrupt,
  DecisionLogFull,
  DecisionWriteFailed
} from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { fromOutcome, RenderedResult } from "../src/render/Rendering.js"
import * as Decisions from "../src/review/Decisions.js"
import { withHistory } from "../src/review/Records.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as ReviewLog from "../src/store/ReviewLog.js"
import * as ReviewFilesystem from "../src/store/ReviewFilesystem.js"
import * as Gate from "../src/verify/Gate.js"
import { cited, pipelineConfig, runDirectoryWith, salesRecord, unavailable } from "./support.js"
import { Schema } from "effect"

const reportText = JSON.stringify({
  facts: [
    cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units"),
    unavailable("q4_forecast", "not published"),
    cited("q3_online_share", salesRecord, "Online orders made up 61%")
  ]
})

const verified = (directory: string, text = reportText) =>
  Effect.gen(function*() {
    const config = yield* Config.decode(pipelineConfig)
    return yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(text))).pipe(
      Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(CaptureStore.layerFileSystem({ directory })))),
      Effect.orDie
    )
  })

const decide = (directory: string, input: unknown, options: { maxDecisions?: number; text?: string } = {}) =>
  Effect.gen(function*() {
    const request = yield* Decisions.request(input)
    const outcome = yield* verified(directory, options.text)
    return yield* Decisions.record({ run: "run-1", reportText: options.text ?? reportText, outcome, request }).pipe(
      Effect.provide(ReviewFilesystem.layer({ directory, ...(options.maxDecisions === undefined ? {} : { maxDecisions: options.maxDecisions }) }))
    )
  })

const list = (directory: string) =>
  Effect.flatMap(ReviewLog.ReviewLog, (log) => log.list).pipe(Effect.provide(ReviewFilesystem.layer({ directory })))

const reviewsOf = (directory: string) => fsp.readdir(path.join(directory, "reviews")).then((names) => names.sort(), () => [])

describe("recorded human review: the filesystem log", () => {
  it.scoped("binds a decision to the verified fact, appends, and a later decision supersedes with both kept", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const first = yield* decide(directory, { fact: 0, decision: "wrong-metric", note: "units, not revenue", reviewer: "alice" })
      assert.strictEqual(first.seq, 1)
      const fact = first.record.fact
      assert.strictEqual(fact.source, salesRecord.source)
      assert.strictEqual(fact.captureSha256, salesRecord.sha256)
      assert.strictEqual(salesRecord.text.slice(fact.span.start, fact.span.end), "Net sales for Q3 2026 were 4,210 units")
      assert.strictEqual(fact.excerpt, "Net sales for Q3 2026 were 4,210 units")
      assert.match(first.record.report, /^[0-9a-f]{64}$/)
      const second = yield* decide(directory, { fact: 0, decision: "supported", reviewer: "bob" })
      const other = yield* decide(directory, { fact: 2, decision: "unsure", reviewer: "bob" })
      assert.deepStrictEqual([second.seq, other.seq], [2, 3])
      assert.deepStrictEqual(yield* Effect.promise(() => reviewsOf(directory)), ["000001.json", "000002.json", "000003.json"])
      // Read-only files: the log is appended to, never edited.
      const mode = fs.statSync(path.join(directory, "reviews", "000001.json")).mode & 0o777
      assert.strictEqual(mode, 0o444)
      const history = withHistory(yield* list(directory))
      assert.deepStrictEqual(history.map((d) => [d.seq, d.record.decision, d.supersededBy]), [
        [1, "wrong-metric", 2],
        [2, "supported", null],
        [3, "unsure", null]
      ])
    }))

  it.scoped("two appends racing for one place both land, on different places", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const outcome = yield* verified(directory)
      const log = yield* ReviewLog.ReviewLog.pipe(Effect.provide(ReviewFilesystem.layer({ directory })))
      const one = Either.getOrThrow(Decisions.bind({ run: "r", reportText, outcome, request: Either.getOrThrow(Decisions.request({ fact: 0, decision: "supported", reviewer: "a" })), now: 0 }))
      const seqs = yield* Effect.all(Array.from({ length: 8 }, () => log.append(one)), { concurrency: "unbounded" })
      assert.deepStrictEqual([...seqs].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8])
      assert.strictEqual((yield* log.list).length, 8)
    }))

  it.scoped("DecisionInvalid: an unknown decision, a note past its limit, a control character, an unknown key", () =>
    Effect.gen(function*() {
      const errors = [
        { fact: 0, decision: "looks-fine", reviewer: "a" },
        { fact: 0, decision: "supported", reviewer: "a", note: "x".repeat(2_001) },
        { fact: 0, decision: "supported", reviewer: "a", note: "fine\u202eenif" },
        { fact: 0, decision: "supported", reviewer: "a", admin: true }
      ].map((input) => Decisions.request(input))
      for (const error of errors) {
        assert.isTrue(Either.isLeft(error))
        if (Either.isLeft(error)) assert.instanceOf(error.left, DecisionInvalid)
      }
      const directory = yield* runDirectoryWith([salesRecord])
      const refused = yield* Effect.flip(decide(directory, { fact: 0, decision: "looks-fine", reviewer: "a" }))
      assert.strictEqual(refused._tag, "DecisionInvalid")
      assert.deepStrictEqual(yield* Effect.promise(() => reviewsOf(directory)), [])
    }))

  it.scoped("DecisionFactNotVerified: an unavailable fact, a fact past the report, a rejected report; nothing written", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const unavailableFact = yield* Effect.flip(decide(directory, { fact: 1, decision: "supported", reviewer: "a" }))
      assert.instanceOf(unavailableFact, DecisionFactNotVerified)
      assert.strictEqual((unavailableFact as DecisionFactNotVerified).reason, "unavailable")
      const past = yield* Effect.flip(decide(directory, { fact: 9, decision: "supported", reviewer: "a" }))
      assert.strictEqual((past as DecisionFactNotVerified).reason, "out-of-range")
      const forged = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 9,999 units")] })
      const rejected = yield* Effect.flip(decide(directory, { fact: 0, decision: "supported", reviewer: "a" }, { text: forged }))
      assert.strictEqual((rejected as DecisionFactNotVerified).reason, "report-rejected")
      assert.deepStrictEqual(yield* Effect.promise(() => reviewsOf(directory)), [])
    }))

  it.scoped("DecisionLogFull: past the run's limit nothing more is recorded", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      yield* decide(directory, { fact: 0, decision: "supported", reviewer: "a" }, { maxDecisions: 1 })
      const full = yield* Effect.flip(decide(directory, { fact: 0, decision: "unsure", reviewer: "a" }, { maxDecisions: 1 }))
      assert.instanceOf(full, DecisionLogFull)
      assert.deepStrictEqual(yield* Effect.promise(() => reviewsOf(directory)), ["000001.json"])
    }))

  it.scoped("DecisionLogCorrupt: a planted or edited decision file is refused on read, and left in place", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      yield* decide(directory, { fact: 0, decision: "wrong-unit", reviewer: "a" })
      const file = path.join(directory, "reviews", "000001.json")
      const edited = fs.readFileSync(file, "utf8").replace("wrong-unit", "supported\", \"extra\": \"1")
      fs.chmodSync(file, 0o644)
      fs.writeFileSync(file, edited)
      const corrupt = yield* Effect.flip(list(directory))
      assert.instanceOf(corrupt, DecisionLogCorrupt)
      assert.strictEqual((corrupt as DecisionLogCorrupt).entry, "000001.json")
      fs.writeFileSync(path.join(directory, "reviews", "notes.txt"), "hello")
      const stray = yield* Effect.flip(list(directory))
      assert.strictEqual((stray as DecisionLogCorrupt).entry, "notes.txt")
      assert.isTrue(fs.existsSync(file))
    }))

  it.scoped("DecisionWriteFailed: an unwritable log leaves no decision and no temporary file", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      // The log's directory cannot be made: a dangling symlink holds its name (mkdir: EEXIST; open: ENOENT).
      fs.symlinkSync(path.join(directory, "nowhere"), path.join(directory, "reviews"))
      const failed = yield* Effect.flip(decide(directory, { fact: 0, decision: "supported", reviewer: "a" }))
      assert.instanceOf(failed, DecisionWriteFailed)
      assert.isFalse(fs.existsSync(path.join(directory, "nowhere")))
    }))
})

describe("recorded human review in renderings", () => {
  it.scoped("every format shows the current decision in its own section, escaped; JSON carries humanReview", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      yield* decide(directory, { fact: 0, decision: "supported", reviewer: "alice" })
      const hostile = "<script>alert(1)</script> **bold** [x](javascript:alert(1))\n# heading"
      yield* decide(directory, { fact: 0, decision: "wrong-metric", note: hostile, reviewer: "<b>mallory</b>" })
      const outcome = yield* verified(directory)
      assert.isTrue(Either.isRight(outcome))
      if (Either.isLeft(outcome)) return
      const humanReview = Decisions.humanReviewOf(outcome.right.report, yield* list(directory))
      assert.isDefined(humanReview)
      assert.deepStrictEqual(humanReview!.facts.map((f) => [f.index, f.current.seq, f.superseded]), [[0, 2, 1]])
      const provenance = fromOutcome(outcome)
      assert.strictEqual(provenance._tag, "Verified")
      if (provenance._tag !== "Verified") return
      const rendering = Render.Rendering.Verified({ ...provenance, humanReview })
      const text = Render.render("text", rendering)
      assert.include(text, "Human review (recorded decisions):")
      assert.include(text, "WRONG-METRIC (supersedes 1 earlier decision, kept in the log)")
      assert.include(text, "\\u{000a}# heading")
      assert.notInclude(text, "was not performed")
      const html = Render.render("html", rendering)
      assert.include(html, `<section class="human-review"`)
      assert.notInclude(html, "<script>alert")
      assert.notInclude(html, "<b>mallory</b>")
      assert.include(html, "&lt;script&gt;")
      const markdown = Render.render("markdown", rendering)
      assert.include(markdown, "## Human review (recorded decisions)")
      assert.notInclude(markdown, "\n# heading")
      assert.include(markdown, "\\[x\\]")
      // The verified excerpt itself is unchanged by a decision: the provenance part renders as without one.
      const without = Render.render("text", Render.Rendering.Verified({ ...provenance }))
      assert.include(without, "was not performed")
      assert.include(text, without.split("\n").slice(2).join("\n").trimEnd())
      const json = JSON.parse(Render.render("json", rendering))
      const decoded = Schema.decodeUnknownSync(RenderedResult)(json)
      assert.strictEqual(decoded.status === "verified" ? decoded.humanReview?.facts[0]?.current.record.note : undefined, hostile)
      assert.deepStrictEqual(json.report, JSON.parse(Render.render("json", Render.Rendering.Verified({ ...provenance }))).report)
    }))
})
