/**
 * The judge's review wired through verification: combined scores, per-claim and per-answer
 * summaries, a judge failure never counted as support, the judge's own section in every rendering
 * (never merged with provenance), the CLI (exit codes, capability gating) and the service.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Answer from "../src/answer/Answer.js"
import { RenderedAnswer } from "../src/answer/Render.js"
import * as AnswerRender from "../src/answer/Render.js"
import * as Config from "../src/Config.js"
import { decodeOptions } from "../src/Domain.js"
import { JudgeHttpStatus } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Judge from "../src/review/Judge.js"
import * as JudgeReview from "../src/review/JudgeReview.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { configJson } from "./answerSupport.js"
import { cliInProcess } from "./cliInProcess.js"
import { apiKey, judgeServer, type Script, settingsFor, testKey, verdicts } from "./judgeServer.js"
import { call, sources, startService, tokens, waitForRun } from "./serverSupport.js"
import { inventoryRecord, runDirectoryWith, SALES, INVENTORY, salesRecord, tempDirectory } from "./support.js"

const salesQuote = "Net sales for Q3 2026 were 4,210 units"
const inventoryQuote = "Inventory on hand at 30 September 2026 was 1,180 units"

/** Claims: 1 sales (one citation), 2 "sales" cited from the inventory report (the wrong-label case), 3 two citations. */
const answerJson = {
  format: "citegate.answer/1",
  claims: [
    { id: "sales", text: "Q3 2026 net sales were 4,210 units.", citations: [{ source: SALES, captureSha256: salesRecord.sha256, quote: salesQuote }] },
    { id: "wrong-label", text: "Q3 2026 net sales were 1,180 units.", citations: [{ source: INVENTORY, captureSha256: inventoryRecord.sha256, quote: inventoryQuote }] },
    {
      id: "two",
      text: "Sales were 4,210 units and inventory 1,180 units.",
      citations: [
        { source: SALES, captureSha256: salesRecord.sha256, quote: salesQuote },
        { source: INVENTORY, captureSha256: inventoryRecord.sha256, quote: inventoryQuote }
      ]
    }
  ]
}

/** A scripted judge: by item id (claim.citation), a verdict or a failure status. */
const byId = (table: Record<string, { class: string; confidence: number } | number>): Script => (request) => {
  const failing = request.ids.map((id) => table[id]).find((v) => typeof v === "number")
  if (typeof failing === "number") return { status: failing, raw: "{}" }
  return { text: verdicts(request.ids.map((id) => ({ id, ...(table[id] as { class: string; confidence: number }) }))) }
}

const verified = (config: Config.PipelineConfig = configJson as never) =>
  Effect.gen(function*() {
    const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord])
    const layer = Answer.layer({ mode: Config.resolvedMode(config), uncited: "report" }).pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Policy.layer(config)),
      Layer.provideMerge(CaptureStore.layerFileSystem({ directory: runDir }))
    )
    return yield* Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const bound = yield* Answer.fromJson(JSON.stringify(answerJson), manifest)
      return yield* (yield* Answer.Answers).verify(bound)
    }).pipe(Effect.provide(layer))
  })

const judgeFor = (script: Script, limits: Parameters<typeof settingsFor>[2] = {}, mode: "report" | "require" = "report") =>
  Effect.gen(function*() {
    const server = yield* judgeServer("openai", script)
    const context = yield* Layer.build(Judge.layer({ settings: settingsFor("openai", server.url, { batchSize: 1, maxRetries: 0, ...limits }, mode), apiKey }))
    return { server, judge: Context.get(context, Judge.Judge) }
  })

describe("the judge's review of a verified answer", () => {
  it.scopedLive("scores min(textMatch, confidence); a claim is supported by an entailed or partially entailed citation only", () =>
    Effect.gen(function*() {
      const checked = yield* verified()
      const { judge } = yield* judgeFor(byId({
        "1.1": { class: "entailed", confidence: 0.95 },
        "2.1": { class: "contradicted", confidence: 0 },
        "3.1": { class: "partially_entailed", confidence: 0.6 },
        "3.2": { class: "insufficient", confidence: 0.2 }
      }))
      const review = yield* JudgeReview.reviewAnswer(judge, checked.answer, checked.captures)
      assert.deepStrictEqual(review.citations.map((c) => [c.claimId, c.citationIndex, c.verdict, c.textMatch, c.score]), [
        ["sales", 0, "entailed", 1, 0.95],
        ["wrong-label", 0, "contradicted", 1, 0],
        ["two", 0, "partially_entailed", 1, 0.6],
        ["two", 1, "insufficient", 1, 0.2]
      ])
      assert.deepStrictEqual(review.claims.map((c) => [c.claimId, c.supported, c.bestScore, c.verdict]), [
        ["sales", true, 0.95, "entailed"],
        ["wrong-label", false, 0, "contradicted"],
        ["two", true, 0.6, "partially_entailed"]
      ])
      assert.deepStrictEqual(
        { ...review.summary },
        { citations: 4, entailed: 1, partially_entailed: 1, overstated: 0, insufficient: 1, contradicted: 1, error: 0, claims: 3, claimsSupported: 2, minClaimScore: 0, supported: false }
      )
      // Provenance is untouched: every claim is still grounded.
      assert.strictEqual(checked.answer.summary.claimsGrounded, 3)
    }))

  it.scopedLive("a judge failure is never support: error, no confidence, no score, the claim unsupported, the answer unsupported", () =>
    Effect.gen(function*() {
      const checked = yield* verified()
      const { judge } = yield* judgeFor(byId({
        "1.1": 500,
        "2.1": { class: "entailed", confidence: 1 },
        "3.1": 503,
        "3.2": { class: "overstated", confidence: 0.5 }
      }))
      const review = yield* JudgeReview.reviewAnswer(judge, checked.answer, checked.captures)
      const sales = review.citations[0]!
      assert.deepStrictEqual([sales.verdict, sales.confidence, sales.score], ["error", null, null])
      assert.instanceOf(sales.error, JudgeHttpStatus)
      assert.deepStrictEqual(review.claims.map((c) => [c.claimId, c.supported, c.bestScore, c.verdict]), [
        ["sales", false, null, "error"],
        ["wrong-label", true, 1, "entailed"],
        ["two", false, 0.5, "overstated"]
      ])
      assert.strictEqual(review.summary.error, 2)
      assert.strictEqual(review.summary.claimsSupported, 1)
      assert.isNull(review.summary.minClaimScore)
      assert.isFalse(review.summary.supported)
      assert.isTrue(JudgeReview.failsRun({ ...review, mode: "require" }))
      assert.isFalse(JudgeReview.failsRun(review))
    }))

  it.scopedLive("a normalised match scores its text match: min(similarity, confidence)", () =>
    Effect.gen(function*() {
      const config = { ...configJson, verify: { matching: "normalized/2" } } as never
      const runDir = yield* runDirectoryWith([salesRecord])
      const layer = Answer.layer({ mode: "reject", uncited: "report" }).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(config)),
        Layer.provideMerge(CaptureStore.layerFileSystem({ directory: runDir }))
      )
      const doubled = "Net sales for  Q3 2026 were 4,210 units"
      const checked = yield* Effect.gen(function*() {
        const bound = yield* Answer.fromJson(JSON.stringify({
          format: "citegate.answer/1",
          claims: [{ id: "n", text: "Net sales were 4,210 units.", citations: [{ source: SALES, captureSha256: salesRecord.sha256, quote: doubled }] }]
        }), yield* Manifest.make(config))
        return yield* (yield* Answer.Answers).verify(bound)
      }).pipe(Effect.provide(layer))
      assert.strictEqual(checked.answer.claims[0]!.citations[0]!.evidence.method, "normalized/2")
      const { judge, server } = yield* judgeFor(byId({ "1.1": { class: "entailed", confidence: 1 } }))
      const review = yield* JudgeReview.reviewAnswer(judge, checked.answer, checked.captures)
      // One inserted space; the quote is the longer, 39 code units: 1 - 1/39.
      assert.strictEqual(review.citations[0]!.textMatch, 0.9744)
      assert.strictEqual(review.citations[0]!.score, 0.9744)
      // The judge reads the capture's own text at the span (what was proved), not the drafter's variant.
      assert.include(server.requests[0]!.body.messages[1].content, `\n${salesQuote}\n`)
    }))

  it.scopedLive("every rendering shows the judge in its own section after provenance; JSON carries it beside the answer", () =>
    Effect.gen(function*() {
      const checked = yield* verified()
      const { judge } = yield* judgeFor(byId({
        "1.1": { class: "entailed", confidence: 0.95 },
        "2.1": { class: "contradicted", confidence: 0 },
        "3.1": 500,
        "3.2": { class: "insufficient", confidence: 0.2 }
      }))
      const review = yield* JudgeReview.reviewAnswer(judge, checked.answer, checked.captures)
      const rendering = AnswerRender.AnswerRendering.Verified({ ...checked, judge: review })
      const plain = AnswerRender.AnswerRendering.Verified({ ...checked })
      for (const format of ["text", "markdown", "html"] as const) {
        const page = AnswerRender.render(format, rendering)
        // The provenance rendering is unchanged, byte for byte, but for its note: beside a judge's section it
        // no longer says that semantic review "was not performed".
        const without = AnswerRender.render(format, plain).replace(
          "Semantic review (is it the right metric, unit, period for the label?) was not performed.",
          "Semantic review is a separate outcome, shown in its own section (it does not change provenance)."
        )
        assert.notInclude(page, "was not performed", format)
        const at = format === "html" ? without.lastIndexOf("</body>") : without.length
        assert.strictEqual(page.slice(0, at).replace(/\n*$/, ""), without.slice(0, at).replace(/\n*$/, ""), format)
        assert.include(page.slice(at), "Judge (semantic review)")
        assert.include(page.slice(at), "NOT SUPPORTED: 1 of 3 claims supported")
        assert.include(page.slice(at), "ERROR (JudgeHttpStatus)")
        assert.include(page.slice(at), "not support")
      }
      const json = JSON.parse(AnswerRender.render("json", rendering))
      assert.deepStrictEqual(Object.keys(json), ["format", "status", "answer", "judge"])
      assert.deepStrictEqual(json.answer, JSON.parse(AnswerRender.render("json", plain)).answer)
      assert.strictEqual(json.judge.prompt, "judge/1")
      assert.strictEqual(json.judge.citations[2].error._tag, "JudgeHttpStatus")
      const decoded = Schema.decodeUnknownEither(RenderedAnswer, decodeOptions)(json)
      assert.isTrue(Either.isRight(decoded))
      assert.notInclude(JSON.stringify(json), testKey)
    }))

  it.effect("untrusted claim ids are escaped in the judge's HTML section", () =>
    Effect.sync(() => {
      const page = AnswerRender.render("html", AnswerRender.AnswerRendering.Verified({
        answer: { format: "citegate.verified-answer/1", outcome: "no_evidence", mode: "drop", manifest: null, claims: [], removed: [], uncited: [], summary: { claims: 0, claimsGrounded: 0, claimsRemoved: 0, citations: 0, citationsVerified: 0 }, proves: "provenance-only", semanticReview: "not-performed" },
        captures: new Map(),
        judge: {
          format: "citegate.judge-review/1", prompt: "judge/1", provider: "openai", model: "m", mode: "report",
          citations: [{ claimIndex: 0, claimId: "<script>alert(1)</script>", citationIndex: 0, verdict: "entailed", confidence: 1, textMatch: 1, score: 1, cut: false }],
          claims: [], summary: { citations: 1, entailed: 1, partially_entailed: 0, overstated: 0, insufficient: 0, contradicted: 0, error: 0, claims: 0, claimsSupported: 0, minClaimScore: null, supported: true },
          proves: "nothing: a model's judgement of support, beside provenance"
        }
      }))
      assert.notInclude(page, "<script>alert(1)</script>")
      assert.include(page, "&lt;script&gt;alert(1)&lt;/script&gt;")
    }))
})

/** A run directory, a judge endpoint, and pipeline.json with `review.judge` pointing at it (key in a file). */
const cliSetup = (script: Script, judge: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord])
    const work = yield* tempDirectory
    const server = yield* judgeServer("anthropic", script)
    yield* Effect.promise(() => fsp.writeFile(path.join(work, "judge.key"), `${testKey}\n`))
    const write = (name: string, value: unknown) =>
      Effect.promise(async () => {
        const file = path.join(work, name)
        await fsp.writeFile(file, typeof value === "string" ? value : JSON.stringify(value))
        return file
      })
    const configFile = yield* write("pipeline.json", {
      ...configJson,
      review: { judge: { mode: "report", provider: "anthropic", endpoint: server.url, model: "judge-model-1", apiKeyFile: "judge.key", batchSize: 4, ...judge } }
    })
    const answer = yield* write("answer.json", answerJson)
    return { runDir, configFile, answer, server, write }
  })

const wrongLabel = byId({
  "1.1": { class: "entailed", confidence: 0.95 },
  "2.1": { class: "contradicted", confidence: 0 },
  "3.1": { class: "entailed", confidence: 0.9 },
  "3.2": { class: "entailed", confidence: 0.9 }
})

describe("run-pipeline with review.judge", () => {
  it.scopedLive("verify-answer: the judge's section in the rendering and its line on stderr; report mode keeps exit 0", () =>
    Effect.gen(function*() {
      const s = yield* cliSetup(wrongLabel)
      const ran = yield* cliInProcess(["verify-answer", "--answer", s.answer, "--config", s.configFile, "--run-dir", s.runDir, "--format", "markdown"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.include(ran.stdout, "## Judge (semantic review)")
      assert.include(ran.stdout, "claim 2 (wrong-label), citation 1: contradicted")
      assert.match(ran.stderr, /verify-answer: judge NOT SUPPORTED \(judge\/1, 2 of 3 claims supported, 0 judge errors\)/)
      assert.strictEqual(s.server.requests[0]!.headers["x-api-key"], testKey)
      assert.notInclude(ran.stdout + ran.stderr, testKey)
    }))

  it.scopedLive("verify-answer under mode require: an unsupported claim is exit 1; a judge failure too", () =>
    Effect.gen(function*() {
      const s = yield* cliSetup(wrongLabel, { mode: "require" })
      const ran = yield* cliInProcess(["verify-answer", "--answer", s.answer, "--config", s.configFile, "--run-dir", s.runDir, "--format", "json"])
      assert.strictEqual(ran.code, 1)
      assert.match(ran.stderr, /verify-answer: GROUNDED/)
      assert.match(ran.stderr, /review\.judge\.mode is require: exit 1/)
      assert.strictEqual(JSON.parse(ran.stdout).judge.summary.supported, false)
      const failing = yield* cliSetup(() => ({ status: 500, raw: "{}" }), { mode: "require", maxRetries: 0 })
      const ran2 = yield* cliInProcess(["verify-answer", "--answer", failing.answer, "--config", failing.configFile, "--run-dir", failing.runDir, "--format", "json"])
      assert.strictEqual(ran2.code, 1)
      assert.strictEqual(JSON.parse(ran2.stdout).judge.summary.error, 4)
      // Every claim supported: exit 0 under require.
      const fine = yield* cliSetup(byId({ "1.1": { class: "entailed", confidence: 1 }, "2.1": { class: "entailed", confidence: 1 }, "3.1": { class: "entailed", confidence: 1 }, "3.2": { class: "partially_entailed", confidence: 0.5 } }), { mode: "require" })
      const ran3 = yield* cliInProcess(["verify-answer", "--answer", fine.answer, "--config", fine.configFile, "--run-dir", fine.runDir])
      assert.strictEqual(ran3.code, 0, ran3.stderr)
    }))

  it.scopedLive("verify (a report): the wrong-label fact is judged against its label, in its own section", () =>
    Effect.gen(function*() {
      const s = yield* cliSetup((r) => ({ text: verdicts(r.ids.map((id) => ({ id, class: "contradicted", confidence: 0 }))) }))
      const report = yield* s.write("report.json", {
        facts: [{ state: "cited", label: "unused", source: INVENTORY, captureSha256: inventoryRecord.sha256, snippet: inventoryQuote }]
      })
      const ran = yield* cliInProcess(["verify", "--report", report, "--config", s.configFile, "--run-dir", s.runDir, "--format", "text"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.include(ran.stdout, "Judge (semantic review):")
      assert.include(ran.stdout, "claim 1 (unused), citation 1: contradicted")
      assert.include(s.server.requests[0]!.body.messages[0].content, 'labelled "unused"')
    }))

  it.scopedLive("capability gating: mode require without an endpoint is CapabilityError, exit 2, nothing rendered", () =>
    Effect.gen(function*() {
      const s = yield* cliSetup(wrongLabel)
      const config = yield* s.write("require.json", { ...configJson, review: { judge: { mode: "require" } } })
      const ran = yield* cliInProcess(["verify-answer", "--answer", s.answer, "--config", config, "--run-dir", s.runDir])
      assert.strictEqual(ran.code, 2)
      assert.strictEqual(ran.stdout, "")
      assert.match(ran.stderr, /^CapabilityError: review\.judge\.mode is "require" but no judge is configured \(missing: provider, endpoint, model\)/)
      const noKey = yield* s.write("nokey.json", { ...configJson, review: { judge: { mode: "report", provider: "openai", endpoint: s.server.url, model: "m", apiKeyEnv: "CITEGATE_TEST_UNSET_KEY" } } })
      const ran2 = yield* cliInProcess(["verify", "--report", s.answer, "--config", noKey, "--run-dir", s.runDir])
      assert.strictEqual(ran2.code, 2)
      assert.match(ran2.stderr, /^JudgeKeyUnavailable: .*CITEGATE_TEST_UNSET_KEY/)
      assert.strictEqual(s.server.requests.length, 0)
    }))

  it.scopedLive("judge-prompt prints the versioned prompt", () =>
    Effect.gen(function*() {
      const ran = yield* cliInProcess(["judge-prompt"])
      assert.strictEqual(ran.code, 0)
      assert.match(ran.stdout, /^# prompt judge\/1\n/)
      assert.include(ran.stdout, "contradicted (confidence exactly 0.0)")
    }))
})

describe("the service with review.judge", () => {
  it.scopedLive("POST /v1/verify/answer returns the judge's review beside the answer", () =>
    Effect.gen(function*() {
      const { server: source } = yield* sources
      const judgeEndpoint = yield* judgeServer("openai", (r) => ({ text: verdicts(r.ids.map((id) => ({ id, class: "entailed", confidence: 0.92 }))) }))
      const keyDir = yield* tempDirectory
      const keyFile = path.join(keyDir, "judge.key")
      yield* Effect.promise(() => fsp.writeFile(keyFile, testKey))
      const sales = source.url("/q3-sales.txt")
      const service = yield* startService({
        sources: [sales],
        review: { judge: { mode: "report", provider: "openai", endpoint: judgeEndpoint.url, model: "m", apiKeyFile: keyFile } }
      })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      yield* waitForRun(service, started.json.id)
      const run = yield* call(service, `/v1/runs/${started.json.id}`, { token: tokens.admin })
      const digest: string = run.json.manifest.sources[0].captureSha256
      const response = yield* call(service, `/v1/verify/answer?run=${started.json.id}`, {
        method: "POST",
        token: tokens.admin,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ format: "citegate.answer/1", claims: [{ id: "s", text: "Net sales were 4,210 units.", citations: [{ source: sales, captureSha256: digest, quote: salesQuote }] }] })
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.strictEqual(response.json.status, "verified")
      assert.deepStrictEqual(response.json.judge.citations.map((c: any) => [c.verdict, c.score]), [["entailed", 0.92]])
      assert.strictEqual(judgeEndpoint.requests[0]!.headers.authorization, `Bearer ${testKey}`)
    }))

  it.scopedLive("a service whose configuration requires a judge it lacks does not start (CapabilityError)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(startService({ sources: ["https://reports.northwind.test/a.txt"], review: { judge: { mode: "require" } } }))
      assert.strictEqual((error as { _tag: string })._tag, "CapabilityError")
    }))
})
