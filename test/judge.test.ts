/**
 * The entailment judge against scripted endpoints of the test's own (node:http on 127.0.0.1), one
 * per protocol: valid replies, malformed JSON, an unknown class, an out-of-band confidence, an id not
 * asked, a slow reply (deadline), 500, 429 with `retry-after` (waited for on the real clock), and
 * failures that never count as support.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { JudgeHttpStatus, JudgeReplyInvalid, JudgeTimeout, JudgeTransport } from "../src/Errors.js"
import { readFileSync } from "node:fs"
import * as Judge from "../src/review/Judge.js"
import { decodeCases, evaluate, report } from "../src/review/JudgeEvaluation.js"
import { anthropicVersion } from "../src/review/JudgeAnthropic.js"
import type { JudgeProvider } from "../src/review/JudgeConfig.js"
import { JudgeReview as JudgeReviewSchema } from "../src/review/Records.js"
import type { JudgeItem } from "../src/review/Records.js"
import { waitUntil } from "./httpServer.js"
import { allEntailed, apiKey, judgeServer, type Script, settingsFor, testKey, verdicts } from "./judgeServer.js"

const items: ReadonlyArray<JudgeItem> = [
  { id: "1.1", claim: "Q3 net sales were 4,210 units.", quote: "Net sales in Q3 2026 were 4,210 units." },
  { id: "2.1", claim: "Returns fell.", quote: "Returns rose to 3.4 % of units sold." }
]

/** The judge, living as long as the test's scope (its HTTP dispatcher closes with it). */
const built = (layer: Layer.Layer<Judge.Judge>) => Effect.map(Layer.build(layer), (context) => Context.get(context, Judge.Judge))

const judgeWith = (provider: JudgeProvider, script: Script, limits: Parameters<typeof settingsFor>[2] = {}) =>
  Effect.gen(function*() {
    const server = yield* judgeServer(provider, script)
    const judge = yield* built(Judge.layer({ settings: settingsFor(provider, server.url, limits), apiKey }))
    return { server, judge }
  })

const errorOf = (result: Judge.Judged) => {
  assert.strictEqual(result.verdict, "error")
  return (result as Extract<Judge.Judged, { verdict: "error" }>).error
}

describe.each(["openai", "anthropic"] as const)("Judge over %s", (provider) => {
  it.scopedLive("a valid reply: one verdict per item, the request at temperature 0 with the key in its header only", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, (request) => ({
        text: verdicts([{ id: request.ids[0]!, class: "entailed", confidence: 0.95 }, { id: request.ids[1]!, class: "contradicted", confidence: 0 }])
      }))
      const results = yield* judge.judge(items)
      assert.deepStrictEqual(results.map((r) => [r.id, r.verdict, "confidence" in r ? r.confidence : null]), [
        ["1.1", "entailed", 0.95],
        ["2.1", "contradicted", 0]
      ])
      assert.strictEqual(server.requests.length, 1)
      const [request] = server.requests
      assert.strictEqual(request!.body.temperature, 0)
      assert.strictEqual(request!.body.model, "judge-model-1")
      assert.deepStrictEqual(request!.ids, ["1.1", "2.1"])
      const system = provider === "openai" ? request!.body.messages[0].content : request!.body.system
      assert.include(system, "prompt judge/1")
      if (provider === "openai") {
        assert.strictEqual(request!.headers.authorization, `Bearer ${testKey}`)
        assert.deepStrictEqual(request!.body.response_format, { type: "json_object" })
      } else {
        assert.strictEqual(request!.headers["x-api-key"], testKey)
        assert.strictEqual(request!.headers["anthropic-version"], anthropicVersion)
      }
      // The key is in its header and nowhere in the body.
      assert.notInclude(JSON.stringify(request!.body), testKey)
      assert.isUndefined(request!.headers.traceparent)
    }))

  it.scopedLive("malformed JSON from the model: every item of the batch is `error` (JudgeReplyInvalid)", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, () => ({ text: '{"verdicts": [ {"id": "1.1", "class": "entailed"' }))
      const results = yield* judge.judge(items)
      for (const r of results) assert.instanceOf(errorOf(r), JudgeReplyInvalid)
    }))

  it.scopedLive("a body that is not JSON at all is refused too", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, () => ({ raw: "<html>gateway</html>" }))
      const error = errorOf((yield* judge.judge(items))[0]!)
      assert.instanceOf(error, JudgeReplyInvalid)
      assert.include(error.message, "not JSON")
    }))

  it.scopedLive("an unknown class is refused, with its path", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, (r) => ({
        text: verdicts([{ id: r.ids[0]!, class: "probably", confidence: 0.7 }, { id: r.ids[1]!, class: "entailed", confidence: 0.9 }])
      }))
      const results = yield* judge.judge(items)
      const error = errorOf(results[0]!) as JudgeReplyInvalid
      assert.deepStrictEqual(error.issues.map((i) => i.path), ["verdicts[0].class"])
      // The whole batch's verdicts are refused: the valid-looking one is not kept.
      assert.strictEqual(results[1]!.verdict, "error")
    }))

  it.scopedLive("a confidence outside its class's band is refused", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, (r) => ({
        text: verdicts([{ id: r.ids[0]!, class: "entailed", confidence: 0.6 }, { id: r.ids[1]!, class: "contradicted", confidence: 0.2 }])
      }))
      const error = errorOf((yield* judge.judge(items))[0]!) as JudgeReplyInvalid
      assert.deepStrictEqual(error.issues.map((i) => i.path), ["verdicts[0].confidence", "verdicts[1].confidence"])
      assert.include(error.issues[0]!.message, "outside entailed's band 0.9–1")
    }))

  it.scopedLive("an id that was not asked (and so one asked id left unanswered) is refused", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, (r) => ({
        text: verdicts([{ id: r.ids[0]!, class: "entailed", confidence: 0.95 }, { id: "9.9", class: "entailed", confidence: 0.95 }])
      }))
      const error = errorOf((yield* judge.judge(items))[1]!) as JudgeReplyInvalid
      assert.deepStrictEqual(error.issues.map((i) => i.message), ['id "9.9" was not asked', 'id "2.1" was asked but not answered'])
    }))

  it.scopedLive("a reply past maxReplyBytes is refused without reading it all", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, () => ({ raw: JSON.stringify({ padding: "x".repeat(4 * 1024 * 1024) }) }), { maxReplyBytes: 2048 })
      const error = errorOf((yield* judge.judge(items))[0]!) as JudgeReplyInvalid
      assert.include(error.issues[0]!.message, "longer than maxReplyBytes (2048 bytes)")
    }))

  it.scopedLive("unknown keys in a verdict are refused (strict decoding)", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith(provider, (r) => ({
        text: verdicts(r.ids.map((id) => ({ id, class: "entailed", confidence: 0.95, note: "trust me" })))
      }))
      assert.instanceOf(errorOf((yield* judge.judge(items))[0]!), JudgeReplyInvalid)
    }))

  it.scopedLive("a slow endpoint: the one deadline ends judging, the items are `error` (JudgeTimeout), the request is aborted", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, (r) => ({ ...allEntailed(r, 1), delayMs: 5_000 }), { timeoutMs: 300 })
      const started = Date.now()
      const results = yield* judge.judge(items)
      const elapsed = Date.now() - started
      assert.isBelow(elapsed, 2_000)
      assert.isAtLeast(elapsed, 290)
      for (const r of results) assert.instanceOf(errorOf(r), JudgeTimeout)
      assert.strictEqual(server.requests.length, 1)
      // The deadline aborts the request: the server sees its connection close.
      yield* waitUntil(() => server.state.closed >= 1, "the request's connection closes")
    }))

  it.scopedLive("the deadline keeps the batches judged before it", () =>
    Effect.gen(function*() {
      // Batch 1 answers at once, batch 2 too late.
      const { judge } = yield* judgeWith(provider, (r, n) => ({ ...allEntailed(r, n), ...(n === 2 ? { delayMs: 5_000 } : {}) }), {
        batchSize: 1,
        concurrency: 1,
        timeoutMs: 500
      })
      const results = yield* judge.judge(items)
      assert.strictEqual(results[0]!.verdict, "entailed")
      assert.instanceOf(errorOf(results[1]!), JudgeTimeout)
    }))

  it.scopedLive("500: retried maxRetries times with backoff, then `error` (JudgeHttpStatus)", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, () => ({ status: 500, raw: '{"error":"overloaded"}' }), { maxRetries: 2, retryBaseMs: 50 })
      const error = errorOf((yield* judge.judge(items))[0]!)
      assert.instanceOf(error, JudgeHttpStatus)
      assert.strictEqual(error.status, 500)
      assert.strictEqual(error.attempts, 3)
      assert.strictEqual(server.requests.length, 3)
      // Backoff doubles: 50 ms, then 100 ms.
      const gaps = server.requests.slice(1).map((r, i) => r.at - server.requests[i]!.at)
      assert.isAtLeast(gaps[0]!, 45)
      assert.isAtLeast(gaps[1]!, 95)
    }))

  it.scopedLive("a 400 is not retried", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, () => ({ status: 400, raw: '{"error":"bad model"}' }))
      const error = errorOf((yield* judge.judge(items))[0]!)
      assert.instanceOf(error, JudgeHttpStatus)
      assert.strictEqual(server.requests.length, 1)
    }))

  it.scopedLive("429 with retry-after: 1 is waited for on the real clock, then the retry's verdicts are kept", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, (r, n) => (n === 1 ? { status: 429, headers: { "retry-after": "1" }, raw: "{}" } : allEntailed(r, n)), {
        retryBaseMs: 10
      })
      const results = yield* judge.judge(items)
      assert.deepStrictEqual(results.map((r) => r.verdict), ["entailed", "entailed"])
      assert.strictEqual(server.requests.length, 2)
      const gap = server.requests[1]!.at - server.requests[0]!.at
      // retry-after wins over the 10 ms backoff.
      assert.isAtLeast(gap, 990)
      assert.isBelow(gap, 3_000)
    }))

  it.scopedLive("429 asking for more than maxRetryAfterMs fails at once, naming the wait", () =>
    Effect.gen(function*() {
      const { judge, server } = yield* judgeWith(provider, () => ({ status: 429, headers: { "retry-after": "3600" }, raw: "{}" }), {
        maxRetryAfterMs: 5_000
      })
      const started = Date.now()
      const error = errorOf((yield* judge.judge(items))[0]!) as JudgeHttpStatus
      assert.isBelow(Date.now() - started, 1_000)
      assert.strictEqual(error.status, 429)
      assert.strictEqual(error.retryAfterMs, 3_600_000)
      assert.strictEqual(server.requests.length, 1)
    }))

  it.scopedLive("batches and bounded concurrency: 20 items in batches of 8, at most 2 requests in flight", () =>
    Effect.gen(function*() {
      const many = Array.from({ length: 20 }, (_, i) => ({ id: `${i + 1}.1`, claim: `claim ${i}`, quote: `quote ${i}` }))
      const { judge, server } = yield* judgeWith(provider, (r, n) => ({ ...allEntailed(r, n), delayMs: 100 }), { batchSize: 8, concurrency: 2 })
      const results = yield* judge.judge(many)
      assert.deepStrictEqual(server.requests.map((r) => r.ids.length), [8, 8, 4])
      assert.strictEqual(server.stats.maxInFlight, 2)
      assert.deepStrictEqual(results.map((r) => r.id), many.map((i) => i.id))
      assert.isTrue(results.every((r) => r.verdict === "entailed"))
    }))

  it.scopedLive("the key is never in an error, its message, an encoded review, or a log line", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make(({ annotations, message }) => logged.push(JSON.stringify({ message, annotations: [...annotations] })))
      const { judge } = yield* judgeWith(provider, (r) => ({ status: 401, raw: JSON.stringify({ error: `invalid key ${r.headers.authorization ?? r.headers["x-api-key"]}` }) }))
      const results = yield* judge.judge(items).pipe(
        Effect.tap((results) => Effect.logDebug("judged", judge.settings, results)),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.All)
      )
      const error = errorOf(results[0]!) as JudgeHttpStatus
      assert.include(error.detail, "[redacted]")
      assert.notInclude(error.message, testKey)
      assert.notInclude(JSON.stringify(Schema.encodeSync(JudgeHttpStatus)(error)), testKey)
      assert.isAbove(logged.length, 0)
      for (const line of logged) assert.notInclude(line, testKey)
      assert.notInclude(String(apiKey), testKey)
      assert.notInclude(JSON.stringify(apiKey), testKey)
    }))
})

describe("Judge transport", () => {
  it.scopedLive("an endpoint nobody listens on: retried, then `error` (JudgeTransport)", () =>
    Effect.gen(function*() {
      // A port that was just closed: connection refused.
      const { url } = yield* Effect.scoped(judgeServer("openai", allEntailed))
      const judge = yield* built(Judge.layer({ settings: settingsFor("openai", url, { maxRetries: 1, retryBaseMs: 10 }), apiKey }))
      const error = errorOf((yield* judge.judge(items))[0]!)
      assert.instanceOf(error, JudgeTransport)
      assert.strictEqual(error.attempts, 2)
      assert.notInclude(error.message, testKey)
    }))

  it.effect("the review Schema round-trips a failure (typed, with its tag)", () =>
    Effect.sync(() => {
      const encoded = Schema.encodeSync(JudgeReviewSchema)({
        format: "citegate.judge-review/1",
        prompt: "judge/1",
        provider: "openai",
        model: "m",
        mode: "report",
        citations: [{ claimIndex: 0, claimId: "a", citationIndex: 0, verdict: "error", confidence: null, textMatch: 1, score: null, cut: false, error: new JudgeTimeout({ timeoutMs: 5 }) }],
        claims: [],
        summary: { citations: 1, entailed: 0, partially_entailed: 0, overstated: 0, insufficient: 0, contradicted: 0, error: 1, claims: 0, claimsSupported: 0, minClaimScore: null, supported: false },
        proves: "nothing: a model's judgement of support, beside provenance"
      })
      const decoded = Schema.decodeUnknownSync(JudgeReviewSchema)(JSON.parse(JSON.stringify(encoded)))
      assert.instanceOf(decoded.citations[0]!.error, JudgeTimeout)
    }))
})




describe("the judge's evaluation (fixtures/review/judge-cases.json) against a loopback endpoint", () => {
  const cases = decodeCases(readFileSync(new URL("../fixtures/review/judge-cases.json", import.meta.url), "utf8")).cases
  const expected = new Map(cases.map((c) => [c.id, c.expect[0]!]))
  const mid = (v: string) => ({ entailed: 0.95, partially_entailed: 0.6, overstated: 0.45, insufficient: 0.2, contradicted: 0 })[v]!

  it.scopedLive("a judge answering as labelled agrees on every case", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith("anthropic", (r) => ({
        text: verdicts(r.ids.map((id) => ({ id, class: expected.get(id)!, confidence: mid(expected.get(id)!) })))
      }))
      const evaluation = yield* evaluate(judge, cases)
      assert.deepStrictEqual([evaluation.cases, evaluation.agreed, evaluation.errors], [12, 12, 0])
    }))

  it.scopedLive("a credulous judge (entailed for everything) misses every case that is not entailed, each listed", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith("openai", allEntailed)
      const evaluation = yield* evaluate(judge, cases)
      assert.strictEqual(evaluation.agreed, 3)
      assert.deepStrictEqual(evaluation.misses.map((m) => m.id), cases.filter((c) => !c.expect.includes("entailed")).map((c) => c.id))
      assert.include(report(evaluation), "MISS wrong-metric: expected insufficient | contradicted, got entailed 0.95")
    }))

  it.scopedLive("judge errors are misses, never agreement", () =>
    Effect.gen(function*() {
      const { judge } = yield* judgeWith("openai", () => ({ status: 503, raw: "{}" }), { maxRetries: 0 })
      const evaluation = yield* evaluate(judge, cases)
      assert.deepStrictEqual([evaluation.agreed, evaluation.errors], [0, 12])
    }))
})
