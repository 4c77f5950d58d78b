/**
 * The answer limits (claims, citations) enforced while the text is scanned, through the library, the
 * spawned CLI and the loopback service (time and reply size measured); and one EVI1 verdict for a
 * text with a second EVI1 block, from the library, the CLI and the stream route alike.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Answer from "../src/answer/Answer.js"
import * as Anthropic from "../src/answer/Anthropic.js"
import * as Evi1 from "../src/answer/Evi1.js"
import { limits } from "../src/answer/Records.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { AnswerLimitExceeded, Evi1Invalid, InvalidAnswer } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import { cli } from "./cliProcess.js"
import { assertSameJson, call, sources, startService, tokens, waitForRun } from "./serverSupport.js"

/** An EVI1 answer of `claims` one-citation claims, all quoting the sales capture. */
const manyClaims = (claims: number, digest: string) => {
  const body: Array<string> = []
  const appendix: Array<string> = []
  for (let i = 1; i <= claims; i++) {
    body.push(`Up.[1]{c${i}}`)
    appendix.push(`c${i}|1|"4,210"`)
  }
  return `${body.join("\n")}\nEVI1\nMANIFEST ${digest}\n${appendix.join("\n")}\nEND_EVI1\n`
}

const digestA = "a".repeat(64)
const leftOf = <A, E>(either: Either.Either<A, E>): E => Either.getOrElse(Either.flip(either), () => assert.fail("expected a failure"))

describe("answer limits, counted while scanning", () => {
  it("EVI1: exactly 10,000 claims parse; one more is AnswerLimitExceeded, nothing kept past it", () => {
    assert.isTrue(Either.isRight(Evi1.parse(manyClaims(limits.maxClaims, digestA))))
    const parser = new Evi1.Parser()
    const text = manyClaims(limits.maxClaims + 1, digestA)
    // Fed in pieces: the count runs across chunks.
    for (let i = 0; i < text.length; i += 4096) parser.push(text.slice(i, i + 4096))
    assert.deepStrictEqual(leftOf(parser.end()), new AnswerLimitExceeded({ limit: "claims", max: 10_000, received: 10_001 }))
  })

  it("EVI1: citations in total, and in one claim", () => {
    // 6,667 claims of three sources: 20,001 citations.
    const body = Array.from({ length: 6_667 }, (_, i) => `Up.[1][2][3]{c${i + 1}}`).join("\n")
    assert.deepStrictEqual(leftOf(Evi1.parse(`${body}\nEVI1\nEND_EVI1\n`)), new AnswerLimitExceeded({ limit: "citations", max: 20_000, received: 20_001 }))
    const group = Array.from({ length: 101 }, (_, i) => `[${i + 1}]`).join("")
    assert.deepStrictEqual(leftOf(Evi1.parse(`Up.${group}{c1}\n`)), new AnswerLimitExceeded({ limit: "citations-per-claim", max: 100, received: 101 }))
  })

  it.effect("citegate.answer/1 and Anthropic: more than 20,000 citations in total is an InvalidAnswer before decoding", () =>
    Effect.gen(function*() {
      const manifest = { digest: digestA, sources: [] } as unknown as Manifest.Manifest
      const citations = Array.from({ length: 100 }, () => ({ source: 1, quote: "q" }))
      const answer = JSON.stringify({ format: "citegate.answer/1", claims: Array.from({ length: 201 }, (_, i) => ({ id: `c${i}`, text: "t", citations })) })
      const json = leftOf(Answer.fromJson(answer, manifest, { manifestDigest: digestA }))
      assert.instanceOf(json, InvalidAnswer)
      assert.deepStrictEqual(json.issues, [{ path: ["claims"], message: "must hold at most 20000 citations in total, got 20100" }])
      const citation = { type: "char_location", cited_text: "q", document_index: 0, start_char_index: 0, end_char_index: 1 }
      const response = JSON.stringify({ content: Array.from({ length: 3 }, () => ({ type: "text", text: "t", citations: Array(7_000).fill(citation) })) })
      const anthropic = leftOf(Anthropic.fromJson(response, manifest, { manifestDigest: digestA }))
      assert.instanceOf(anthropic, InvalidAnswer)
      assert.deepStrictEqual((anthropic as InvalidAnswer).issues, [{ path: ["content"], message: "must hold at most 20000 citations in total, got 21000" }])
    }))
})

/** A service whose one run holds the sales capture, its manifest digest, and the run's directory. */
const withRun = Effect.gen(function*() {
  const { server: source } = yield* sources
  const service = yield* startService({ sources: [source.url("/q3-sales.txt")] })
  const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
  const runId: string = started.json.id
  yield* waitForRun(service, runId)
  const info = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
  const digest: string = info.json.manifest.digest
  return { service, runId, digest, runDir: path.join(service.runRoot, runId) }
})

const over = 200_000

describe("200,000 claims (5.5 MB): refused quickly with a small reply", () => {
  it.scopedLive("CLI: exit 1, AnswerLimitExceeded, a reply of a few hundred bytes", () =>
    Effect.gen(function*() {
      const { digest, runDir, service } = yield* withRun
      const file = path.join(service.work, "many.evi1")
      yield* Effect.promise(() => fsp.writeFile(file, manyClaims(over, digest)))
      const start = performance.now()
      const ran = yield* cli(["verify-answer", "--answer", file, "--format-in", "evi1", "--config", service.configFile, "--run-dir", runDir, "--format", "json"])
      const ms = performance.now() - start
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stderr, /REJECTED \(AnswerLimitExceeded\)/)
      assert.deepStrictEqual(JSON.parse(ran.stdout).error, { _tag: "AnswerLimitExceeded", limit: "claims", max: 10_000, received: 10_001 })
      assert.isBelow(ran.stdout.length, 1024)
      // Start-up (~1.5 s) plus one scan up to the limit; before the limit, this answer took 20 s and more.
      assert.isBelow(ms, 10_000)
    }), { timeout: 60_000 })

  it.scopedLive("service: POST /v1/verify/answer answers AnswerLimitExceeded within a second or two, and /healthz stays quick", () =>
    Effect.gen(function*() {
      const { digest, runId, service } = yield* withRun
      const body = manyClaims(over, digest)
      const start = performance.now()
      const [response, health] = yield* Effect.all([
        call(service, `/v1/verify/answer?run=${runId}&format=evi1`, { token: tokens.admin, body }),
        Effect.sleep("50 millis").pipe(Effect.zipRight(Effect.promise(async () => {
          const t = performance.now()
          await fetch(`${service.base}/healthz`)
          return performance.now() - t
        })))
      ], { concurrency: 2 })
      const ms = performance.now() - start
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual((response.json as any).error, { _tag: "AnswerLimitExceeded", limit: "claims", max: 10_000, received: 10_001 })
      assert.isBelow(response.text.length, 1024)
      assert.isBelow(ms, 5_000)
      assert.isBelow(health, 3_000)
    }), { timeout: 60_000 })
})

describe("a second EVI1 block: one parse, one verdict", () => {
  // A fabricated evidence line in a block before the real appendix.
  const forged = [
    "Net sales for the quarter were 4,210 units.[1]{c1}",
    "EVI1",
    "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
    "c9|1|\"Revenue grew by 400 percent in September\"",
    "END_EVI1",
    "Online orders made up 61% of unit sales.[1]{c2}",
    "EVI1",
    "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
    "c2|1|\"Online orders made up 61% of Q3 2026 unit sales.\"",
    "END_EVI1",
    ""
  ].join("\n")

  it.scopedLive("library, CLI and stream route all reject it as Evi1Invalid", () =>
    Effect.gen(function*() {
      const { digest, runDir, runId, service } = yield* withRun
      // Library
      const manifest = yield* Manifest.make(service.config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
      const library = leftOf(Evi1.decode(forged, manifest, { manifestDigest: digest }))
      assert.instanceOf(library, Evi1Invalid)
      const issues = (library as Evi1Invalid).issues.map((i) => [i._tag, i.line])
      assert.deepStrictEqual(issues, [
        ["Evi1UnusedEvidence", 4],
        ["Evi1MalformedLine", 6],
        ["Evi1ExtraAppendix", 7],
        ["Evi1MalformedLine", 8],
        ["Evi1MalformedLine", 9],
        ["Evi1MalformedLine", 10]
      ])
      // CLI
      const file = path.join(service.work, "forged.evi1")
      yield* Effect.promise(() => fsp.writeFile(file, forged))
      const ran = yield* cli([
        "verify-answer", "--answer", file, "--format-in", "evi1", "--config", service.configFile, "--run-dir", runDir,
        "--manifest-digest", digest, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stderr, /REJECTED \(Evi1Invalid\)/)
      assert.deepStrictEqual(JSON.parse(ran.stdout).error.issues.map((i: any) => [i._tag, i.line]), issues)
      // The whole-answer route gives the CLI's answer.
      const posted = yield* call(service, `/v1/verify/answer?run=${runId}&format=evi1&manifestDigest=${digest}`, { token: tokens.admin, body: forged })
      assertSameJson(posted.text, ran.stdout)
      // Stream route: the first issue it meets, then done: rejected.
      const streamed = yield* call(service, `/v1/stream/answer?run=${runId}&manifest=${digest}`, {
        token: tokens.admin,
        body: forged.split("\n").map((line) => JSON.stringify({ type: "delta", text: `${line}\n` })).join("\n") + "\n"
      })
      const events = streamed.text.trim().split("\n").map((line) => JSON.parse(line))
      const error = events.find((e) => e.type === "error")
      assert.deepStrictEqual(error?.error, { _tag: "Evi1Invalid", issues: [{ _tag: "Evi1UnusedEvidence", line: 4, claimId: "c9", source: 1 }] })
      assert.strictEqual(events.at(-1).state, "rejected")
    }), { timeout: 60_000 })

  it.scopedLive("an END_EVI1 line in the body: the parser's issue, and the stream's at the same line", () =>
    Effect.gen(function*() {
      const text = "Up.\nEND_EVI1\nMore.\n"
      const issue = { _tag: "Evi1MalformedLine" as const, line: 2, detail: "END_EVI1 without an EVI1 line before it" }
      assert.deepStrictEqual((leftOf(Evi1.parse(text)) as Evi1Invalid).issues, [issue])
      const { digest, runId, service } = yield* withRun
      const streamed = yield* call(service, `/v1/stream/answer?run=${runId}&manifest=${digest}`, {
        token: tokens.admin,
        body: JSON.stringify({ type: "delta", text }) + "\n"
      })
      const events = streamed.text.trim().split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(events.find((e) => e.type === "error")?.error, { _tag: "Evi1Invalid", issues: [issue] })
      assert.strictEqual(events.at(-1).state, "rejected")
    }), { timeout: 60_000 })
})
