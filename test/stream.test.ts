import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Queue, Stream } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as Evi1 from "../src/answer/Evi1.js"
import {
  AnswerRejected,
  Evi1Invalid,
  SnippetAbsent,
  StaleManifest,
  StreamDeadline,
  StreamLimitExceeded,
  StreamLineInvalid
} from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import {
  answersLayer,
  deltas,
  evidence,
  manifest,
  sample,
  sampleBody,
  sampleStreamed,
  streamLayer,
  type VerifierCalls
} from "./streamSupport.js"
import { salesRecord } from "./support.js"

type Event = AnswerStream.StreamEvent

const run = (lines: ReadonlyArray<string>, options: Partial<AnswerStream.StreamOptions> = {}, limits = {}, counter?: VerifierCalls) =>
  Effect.gen(function*() {
    const m = yield* manifest
    const service = yield* AnswerStream.AnswerStream
    const events = yield* Stream.runCollect(service.stream(Stream.fromIterable(lines), { manifest: m, ...options }))
    return Chunk.toArray(events)
  }).pipe(Effect.provide(streamLayer(limits, counter)))

const ofType = <T extends Event["type"]>(events: ReadonlyArray<Event>, type: T) =>
  events.filter((e): e is Extract<Event, { type: T }> => e.type === type)

const streamedText = (events: ReadonlyArray<Event>) => ofType(events, "delta").map((e) => e.text).join("")

/** Every stream: ids 1, 2, 3, … and exactly one `done`, last; every event survives its JSON round trip. */
const wellFormed = (events: ReadonlyArray<Event>) => {
  assert.deepStrictEqual(events.map((e) => e.id), events.map((_, i) => i + 1))
  assert.strictEqual(ofType(events, "done").length, 1)
  assert.strictEqual(events.at(-1)!.type, "done")
  for (const event of events) assert.deepStrictEqual(AnswerStream.decodeEvent(AnswerStream.encodeEvent(event)), event)
  return ofType(events, "done")[0]!
}

describe("AnswerStream", () => {
  it.effect("grounded: placeholders stream as the body arrives, every citation verifies, the same for every cut", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = sample(m.digest)
      let reference: ReadonlyArray<Event> | undefined
      for (const size of [1, 2, 3, 7, 64, text.length]) {
        const counter: VerifierCalls = { calls: 0, citations: 0 }
        const events = yield* run(deltas(text, size), {}, {}, counter)
        const done = wellFormed(events)
        assert.strictEqual(streamedText(events), sampleStreamed, `cut every ${size}`)
        assert.strictEqual(done.state, "grounded")
        assert.deepStrictEqual(done.summary, {
          claims: 3,
          claimsGrounded: 3,
          claimsRemoved: 0,
          citations: 4,
          citationsVerified: 4,
          citationsRetracted: 0
        })
        assert.deepStrictEqual(done.uncited.map((u) => [u.sentence, u.line]), [[
          "A sentence without any citation that still looks like a fact.",
          3
        ]])
        // Each citation reached the Verifier exactly once.
        assert.strictEqual(counter.citations, 4)
        const notDeltas = events.filter((e) => e.type !== "delta")
        if (reference === undefined) reference = notDeltas.map((e) => ({ ...e, id: 0 }))
        else assert.deepStrictEqual(notDeltas.map((e) => ({ ...e, id: 0 })), reference)
        // Footnote offsets point at their placeholders.
        for (const mark of ofType(events, "delta").flatMap((e) => e.footnotes)) {
          assert.isTrue(sampleStreamed.startsWith(`[^${mark.footnote}]`, mark.at))
        }
        // No delta carries half of a surrogate pair.
        for (const d of ofType(events, "delta")) assert.isFalse(/[\ud800-\udbff]$|^[\udc00-\udfff]/.test(d.text))
      }
      const citations = ofType(reference! as Array<Event>, "citation")
      assert.deepStrictEqual(citations.map((c) => [c.footnote, c.claimId, c.sourceNumber]), [[1, "c1", 1], [2, "c2", 2], [3, "c2", 1], [4, "c3", 3]])
      assert.strictEqual(citations[0]!.source, m.sources[0]!.source)
      const at = salesRecord.text.indexOf("Net sales for Q3 2026 were 4,210 units")
      assert.deepStrictEqual(citations[0]!.span, { start: at, end: at + "Net sales for Q3 2026 were 4,210 units".length })
    }))

  it.effect("agrees with verify-answer on the whole text (the batch path)", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = sample(m.digest, [evidence.c1, evidence.c2s2, "c2|1|\"4,211\"", "c3|3|\"The fleet grew\""])
      const events = yield* run(deltas(text, 5))
      const done = wellFormed(events)
      const bound = Either.getOrThrow(Evi1.decode(text, m))
      const batch = yield* Effect.flatMap(Answer.Answers, (a) => a.verify(bound)).pipe(Effect.provide(answersLayer))
      assert.strictEqual(done.state, batch.answer.outcome)
      assert.deepStrictEqual(
        [done.summary.claims, done.summary.claimsGrounded, done.summary.claimsRemoved, done.summary.citations, done.summary.citationsVerified],
        [batch.answer.summary.claims, batch.answer.summary.claimsGrounded, batch.answer.summary.claimsRemoved, batch.answer.summary.citations, batch.answer.summary.citationsVerified]
      )
      const removed = ofType(events, "retraction").filter((r) => r.removeSentence)
      assert.deepStrictEqual(removed.map((r) => r.claim), batch.answer.removed.map((r) => r.text))
    }))

  it.effect("no_evidence: prose without citations, and an answer whose only claim loses its citation", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const prose = yield* run(deltas("Nothing in the sources says so.\n", 4), { manifestDigest: m.digest })
      const done = wellFormed(prose)
      assert.strictEqual(done.state, "no_evidence")
      assert.strictEqual(streamedText(prose), "Nothing in the sources says so.\n")

      const text = `Sales rose to 9,999 units.[1]{c1}\nEVI1\nMANIFEST ${m.digest}\nc1|1|"Net sales for Q3 2026 were 9,999 units"\nEND_EVI1\n`
      const events = yield* run(deltas(text, 9))
      const last = wellFormed(events)
      assert.strictEqual(last.state, "no_evidence")
      const [retraction] = ofType(events, "retraction")
      assert.strictEqual(retraction!.removeSentence, true)
      assert.strictEqual(retraction!.claim, "Sales rose to 9,999 units.")
      assert.strictEqual(streamedText(events).slice(retraction!.sentence.start, retraction!.sentence.end), "Sales rose to 9,999 units.[^1]")
      assert.instanceOf(retraction!.reasons[0], SnippetAbsent)
      assert.deepStrictEqual(last.summary.claimsRemoved, 1)
    }))

  it.effect("rejected: reject mode turns a retraction into AnswerRejected; a stale manifest is rejected before any verification", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = sample(m.digest, [evidence.c1, evidence.c2s2, evidence.c2s1, "c3|3|\"The fleet shrank\""])
      const events = yield* run(deltas(text, 11), { mode: "reject" })
      const done = wellFormed(events)
      assert.strictEqual(done.state, "rejected")
      const [error] = ofType(events, "error")
      assert.instanceOf(error!.error, AnswerRejected)
      assert.deepStrictEqual((error!.error as AnswerRejected).citations.map((c) => [c.claimId, c.citationIndex, c.error._tag]), [["c3", 0, "SnippetAbsent"]])
      assert.strictEqual(events.at(-2)!.type, "error")

      const counter: VerifierCalls = { calls: 0, citations: 0 }
      const stale = yield* run(deltas(sample("a".repeat(64)), 20), {}, {}, counter)
      const staleDone = wellFormed(stale)
      assert.strictEqual(staleDone.state, "rejected")
      const staleError = ofType(stale, "error")[0]!.error
      assert.instanceOf(staleError, StaleManifest)
      assert.deepStrictEqual({ named: (staleError as StaleManifest).named, current: (staleError as StaleManifest).current }, { named: "a".repeat(64), current: m.digest })
      assert.strictEqual(counter.calls, 0)
    }))

  it.live("retracts a fabricated quote mid-stream, before the answer has ended", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const input = yield* Queue.unbounded<string | null>()
      const output = yield* Queue.unbounded<Event>()
      const lines = Stream.fromQueue(input).pipe(Stream.takeWhile((l): l is string => l !== null))
      const fiber = yield* Effect.fork(Stream.runForEach(service.stream(lines, { manifest: m }), (e) => Queue.offer(output, e)))
      const send = (text: string) => Queue.offer(input, JSON.stringify({ type: "delta", text }))
      const until = (type: Event["type"]) =>
        Effect.gen(function*() {
          const seen: Array<Event> = []
          while (true) {
            const event = yield* Queue.take(output)
            seen.push(event)
            if (event.type === type) return seen
          }
        }).pipe(Effect.timeoutFail({ duration: 3_000, onTimeout: () => new Error(`no ${type} event`) }))

      yield* send(sampleBody)
      const body = yield* until("delta")
      assert.strictEqual(streamedText(body), sampleStreamed)
      yield* send(`EVI1\nMANIFEST ${m.digest}\n${evidence.c1}\nc2|2|"The Leeds warehouse held 641 of those units."\n`)
      const first = yield* until("retraction")
      assert.deepStrictEqual(first.map((e) => e.type), ["citation", "retraction"])
      const retraction = first[1] as Extract<Event, { type: "retraction" }>
      // c2 still has footnote 3 pending: only the marker goes.
      assert.deepStrictEqual([retraction.footnote, retraction.claimId, retraction.removeSentence], [2, "c2", false])
      assert.strictEqual(sampleStreamed.slice(retraction.sentence.start, retraction.sentence.end), "Stock was 1,180 units, 640 of them in Leeds.[^2][^3]")
      assert.strictEqual(retraction.claim, "Stock was 1,180 units, 640 of them in Leeds.")
      assert.instanceOf(retraction.reasons[0], SnippetAbsent)
      assert.strictEqual((retraction.reasons[0] as SnippetAbsent).snippet, "The Leeds warehouse held 641 of those units.")
      // The stream is still open: nothing has ended.
      assert.isTrue((yield* Fiber.poll(fiber))._tag === "None")

      yield* send(`c2|1|"4,210 units"\nc3|3|"The 🚲 fleet grew to 43 bikes"\n`)
      const second = yield* until("retraction")
      const last = second.at(-1) as Extract<Event, { type: "retraction" }>
      assert.deepStrictEqual([second[0]!.type, last.footnote, last.claimId, last.removeSentence], ["citation", 4, "c3", true])
      assert.strictEqual(sampleStreamed.slice(last.sentence.start, last.sentence.end), "The 🚲 fleet grew to 42 bikes.[^4]")

      yield* send("END_EVI1\n")
      yield* Queue.offer(input, null)
      const rest = yield* until("done")
      const done = rest.at(-1) as Extract<Event, { type: "done" }>
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual(done.summary, { claims: 3, claimsGrounded: 2, claimsRemoved: 1, citations: 4, citationsVerified: 2, citationsRetracted: 2 })
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(streamLayer())))

  it.effect("a malformed input line: its typed error, then done, and nothing after it is read", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const cases: Array<[string, string]> = [
        ["not json", "StrictJson"],
        [JSON.stringify({ type: "delta", text: 1 }), "text"],
        [JSON.stringify({ type: "delta", text: "x", extra: true }), "extra"],
        ["{\"type\":\"delta\",\"text\":\"a\",\"text\":\"b\"}", "text"],
        [JSON.stringify({ type: "stop" }), "type"]
      ]
      for (const [bad] of cases) {
        const counter: VerifierCalls = { calls: 0, citations: 0 }
        const events = yield* run(
          [JSON.stringify({ type: "delta", text: "Hello. " }), bad, ...deltas(sample(m.digest), 50)],
          {},
          {},
          counter
        )
        const done = wellFormed(events)
        assert.deepStrictEqual(events.map((e) => e.type), ["delta", "error", "done"], bad)
        const error = ofType(events, "error")[0]!.error
        assert.instanceOf(error, StreamLineInvalid)
        assert.strictEqual((error as StreamLineInvalid).line, 2)
        assert.isAbove((error as StreamLineInvalid).detail.length, 0)
        assert.strictEqual(done.state, "rejected")
        assert.strictEqual(counter.calls, 0)
      }
    }))

  it.effect("EVI1 issues fail at the line that shows them: unused evidence, a source out of range, missing evidence", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const unused = yield* run(deltas(sample(m.digest, [...Object.values(evidence), "c9|1|\"4,210\""]), 13))
      wellFormed(unused)
      const error = ofType(unused, "error")[0]!.error as Evi1Invalid
      assert.instanceOf(error, Evi1Invalid)
      assert.deepStrictEqual(error.issues, [{ _tag: "Evi1UnusedEvidence", line: 10, claimId: "c9", source: 1 }])

      const outOfRange = yield* run(deltas("Sales rose.[7]{c1}\nMore text that is never read.\n", 100))
      assert.deepStrictEqual(outOfRange.map((e) => e.type), ["delta", "error", "done"])
      assert.strictEqual(streamedText(outOfRange), "Sales rose.")
      assert.deepStrictEqual((ofType(outOfRange, "error")[0]!.error as Evi1Invalid).issues, [
        { _tag: "Evi1SourceOutOfRange", line: 1, claimId: "c1", source: 7, sources: 4 }
      ])

      const missing = yield* run(deltas(sample(m.digest, [evidence.c1, evidence.c2s2, evidence.c3]), 40))
      assert.deepStrictEqual((ofType(missing, "error")[0]!.error as Evi1Invalid).issues, [
        { _tag: "Evi1MissingEvidence", line: 2, claimId: "c2", source: 1 }
      ])
      assert.strictEqual(ofType(missing, "done")[0]!.state, "rejected")
    }))

  it.effect("limits: answer size, claims, citations, each a typed error event before done", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = sample(m.digest)
      const size = yield* run(deltas(text, 10), {}, { maxAnswerChars: 100 })
      wellFormed(size)
      assert.deepStrictEqual(ofType(size, "error")[0]!.error, new StreamLimitExceeded({ limit: "answer-size", max: 100, received: 100 - (100 % 10) + 10 }))
      // Nothing past the limit was streamed.
      assert.isAtMost(streamedText(size).length, 100)

      const claims = yield* run(deltas(text, 10), {}, { maxClaims: 2 })
      assert.deepStrictEqual(ofType(claims, "error")[0]!.error, new StreamLimitExceeded({ limit: "claims", max: 2, received: 3 }))
      assert.strictEqual(ofType(claims, "done")[0]!.state, "rejected")

      const citations = yield* run(deltas(text, 10), {}, { maxCitations: 2 })
      assert.deepStrictEqual(ofType(citations, "error")[0]!.error, new StreamLimitExceeded({ limit: "citations", max: 2, received: 3 }))
    }))

  it.effect("NDJSON bytes to lines: a line longer than the limit fails while it arrives; invalid UTF-8 is a malformed line", () =>
    Effect.gen(function*() {
      const encoder = new TextEncoder()
      const ok = yield* Stream.runCollect(
        AnswerStream.ndjsonLines(Stream.fromIterable(["{\"a\":", "1}\n{\"b\"", ":2}\n\n{\"c\":3}"].map((s) => encoder.encode(s))), 16)
      )
      // The blank line comes out as a run of one (one LF).
      assert.deepStrictEqual(Chunk.toArray(ok), ["{\"a\":1}", "{\"b\":2}", "\n", "{\"c\":3}"])
      // Split across chunks, a long line is refused once it passes the limit, not at its end.
      let pulled = 0
      const endless = Stream.repeatEffect(Effect.sync(() => (pulled++, encoder.encode("x".repeat(10)))))
      const long = yield* Effect.flip(Stream.runDrain(AnswerStream.ndjsonLines(endless, 64)))
      assert.deepStrictEqual(long, new StreamLimitExceeded({ limit: "line-length", max: 64, received: 70 }))
      assert.strictEqual(pulled, 7)
      const bad = yield* Effect.flip(Stream.runDrain(AnswerStream.ndjsonLines(Stream.make(encoder.encode("ok\n"), new Uint8Array([0xff, 0x0a])), 64)))
      assert.deepStrictEqual(bad, new StreamLineInvalid({ line: 2, detail: "not valid UTF-8" }))
    }))

  it.live("the deadline ends a stream whose input stalls", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const stalled = Stream.concat(Stream.make(JSON.stringify({ type: "delta", text: "Net sales rose." })), Stream.never)
      const started = Date.now()
      const events = Chunk.toArray(yield* Stream.runCollect(service.stream(stalled, { manifest: m })))
      const elapsed = Date.now() - started
      wellFormed(events)
      assert.deepStrictEqual(events.map((e) => e.type), ["delta", "error", "done"])
      assert.deepStrictEqual(ofType(events, "error")[0]!.error, new StreamDeadline({ timeoutMs: 300 }))
      assert.isAtLeast(elapsed, 290)
      assert.isBelow(elapsed, 2_000)
    }).pipe(Effect.provide(streamLayer({ deadlineMs: 300 }))))
})
