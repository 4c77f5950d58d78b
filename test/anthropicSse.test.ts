/**
 * Anthropic Messages SSE read as a whole (`AnthropicSse.decodeSse`, `verify-answer --format-in
 * anthropic-sse`) and through the AnswerStream service: the stream's shape, its typed failures and
 * its limits, and the same verdict from the CLI as from the stream.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as AnthropicSse from "../src/answer/AnthropicSse.js"
import type { Manifest } from "../src/Manifest.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as ManifestModule from "../src/Manifest.js"
import { config, configJson, emojiRecord } from "./answerSupport.js"
import {
  blockStop,
  charCitation,
  fabricated,
  grounded,
  messageDelta,
  messageStart,
  messageStop,
  salesQuote,
  sseEvent,
  sseText,
  textDelta,
  textStart
} from "./anthropicSseFixtures.js"
import { cli } from "./cliProcess.js"
import { manifest, streamLayer } from "./streamSupport.js"
import { inventoryRecord, runDirectoryWith, salesRecord, tempDirectory } from "./support.js"

type Event = AnswerStream.StreamEvent

const leftTag = <A, E extends { readonly _tag: string }>(either: Either.Either<A, E>): E => {
  assert.isTrue(Either.isLeft(either), "expected a failure")
  return (either as Either.Left<E, A>).left
}

/** A cited block and a stop, around `middle` events. */
const around = (...middle: ReadonlyArray<string>) =>
  [sseEvent(messageStart), ...middle, sseEvent(messageDelta), sseEvent(messageStop)].join("")

describe("AnthropicSse.decodeSse", () => {
  it("accumulates blocks as the whole response has them; ping, comments, id/retry and unknown events are skipped; CRLF lines", () => {
    const text = sseText(grounded).replace("event: content_block_stop", ": a comment\nid: 7\nretry: 10\nevent: ping\ndata: {\"type\":\"ping\"}\n\nevent: content_block_stop")
      .replace(sseEvent(messageDelta), `${sseEvent(messageDelta)}event: future_event\ndata: {"type":"future_event","x":1}\n\n`)
    for (const input of [text, text.replaceAll("\n", "\r\n")]) {
      const response = AnthropicSse.decodeSse(input)
      assert.isTrue(Either.isRight(response))
      if (Either.isLeft(response)) return
      const content = response.right.content
      assert.deepStrictEqual(content.map((b) => b.type), ["thinking", "text", "text", "text", "text", "text"])
      const cited = content[2]!
      assert.isTrue("text" in cited && cited.text === "Net sales for Q3 2026 were 4,210 units." && cited.citations?.length === 1)
    }
  })

  it("typed failures: an error event, a name that is not the data's type, out-of-order events, a delta type a text block cannot take", () => {
    const error = leftTag(AnthropicSse.decodeSse(around(sseEvent({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))))
    assert.deepStrictEqual([error._tag, (error as { errorType?: string }).errorType], ["ProviderStreamError", "overloaded_error"])
    const renamed = leftTag(AnthropicSse.decodeSse(around(`event: content_block_stop\ndata: ${JSON.stringify(textStart(0))}\n\n`)))
    assert.strictEqual(renamed._tag, "ProviderEventInvalid")
    assert.include(renamed.message, 'carries data of type "content_block_start"')
    const early = leftTag(AnthropicSse.decodeSse(around(sseEvent(textDelta(0, "x")))))
    assert.strictEqual(early._tag, "ProviderEventInvalid")
    assert.include(early.message, "not open")
    const skipped = leftTag(AnthropicSse.decodeSse(around(sseEvent(textStart(1)))))
    assert.include(skipped.message, "block 1 starts where block 0 is next")
    const thinking = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}\n\n`
    const wrongDelta = leftTag(AnthropicSse.decodeSse(around(sseEvent(textStart(0)), thinking, sseEvent(blockStop(0)))))
    assert.include(wrongDelta.message, "a thinking_delta in text block 0")
    const repeated = leftTag(AnthropicSse.decodeSse(around(`event: ping\ndata: {"type":"ping","type":"ping"}\n\n`)))
    assert.include(repeated.message, "not strict JSON")
    const after = leftTag(AnthropicSse.decodeSse(`${around()}${sseEvent(textStart(0))}`))
    assert.include(after.message, "after message_stop")
  })

  it("a citation citegate cannot check is an InvalidAnswer at its path, as in a whole response", () => {
    const web = `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "citations_delta", citation: { type: "web_search_result_location", cited_text: "x", url: "https://example.test/", title: null, encrypted_index: "e" } } })}\n\n`
    const error = leftTag(AnthropicSse.decodeSse(around(sseEvent(textStart(0)), web, sseEvent(textDelta(0, "A claim.")), sseEvent(blockStop(0)))))
    assert.strictEqual(error._tag, "InvalidAnswer")
    if (error._tag !== "InvalidAnswer") return
    assert.deepStrictEqual(error.issues[0].path.slice(0, 4), ["content", 0, "citations", 0])
  })

  it("a truncated stream is ProviderStreamIncomplete, where it stopped", () => {
    const text = sseText(grounded)
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["", "before-message"],
      [text.slice(0, text.indexOf("event: content_block_stop")), "inside-block"],
      [text.slice(0, text.indexOf("event: message_stop")), "before-message-stop"],
      [text.slice(0, text.length - 3), "inside-event"]
    ]
    for (const [input, at] of cases) {
      const error = leftTag(AnthropicSse.decodeSse(input))
      assert.strictEqual(error._tag, "ProviderStreamIncomplete")
      assert.strictEqual((error as { at?: string }).at, at)
    }
  })

  it("limits are the non-streamed route's, checked while reading", () => {
    const limits = { ...AnthropicSse.answerSseLimits, maxCitations: 2 }
    const error = leftTag(AnthropicSse.decodeSse(sseText(grounded), limits))
    assert.deepStrictEqual([error._tag, (error as { limit?: string }).limit, (error as { received?: number }).received], ["AnswerLimitExceeded", "citations", 3])
    const blocks = leftTag(AnthropicSse.decodeSse(sseText(grounded), { ...AnthropicSse.answerSseLimits, maxBlocks: 3 }))
    assert.strictEqual(blocks._tag, "InvalidAnswer")
  })
})

/** The service's events for an SSE text cut into `size`-byte pieces. */
const streamed = (text: string, m: Manifest, limits: Partial<AnswerStream.StreamLimits> = {}, digest: string | null = m.digest) =>
  Effect.gen(function*() {
    const service = yield* AnswerStream.AnswerStream
    const bytes = new TextEncoder().encode(text)
    const pieces: Array<Uint8Array> = []
    for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7))
    const lines = AnswerStream.ndjsonLines(Stream.fromIterable(pieces), service.limits.maxLineBytes, service.limits.maxInputBytes)
    return Chunk.toArray(yield* Stream.runCollect(service.streamAnthropicSse(lines, { manifest: m, manifestDigest: digest ?? undefined, mode: "drop" })))
  }).pipe(Effect.provide(streamLayer(limits)))

const errorOf = (events: ReadonlyArray<Event>) => {
  assert.strictEqual(events.filter((e) => e.type === "done").length, 1)
  const error = events.find((e) => e.type === "error")
  assert.isDefined(error)
  return (error as Extract<Event, { type: "error" }>).error
}

describe("AnswerStream.streamAnthropicSse", () => {
  it.live("stream limits checked while reading: a long line, too many citations; a missing manifest digest is StaleManifest", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const long = yield* streamed(sseText(grounded), m, { maxLineBytes: 100 })
      assert.strictEqual(errorOf(long)._tag, "StreamLimitExceeded")
      const many = errorOf(yield* streamed(sseText(grounded), m, { maxCitations: 2 }))
      assert.deepStrictEqual([many._tag, (many as { limit?: string }).limit], ["StreamLimitExceeded", "citations"])
      const stale = yield* streamed(sseText(grounded), m, {}, null)
      assert.strictEqual(errorOf(stale)._tag, "StaleManifest")
      // Nothing was streamed or verified for an answer bound to no manifest.
      assert.deepStrictEqual(stale.map((e) => e.type), ["error", "done"])
    }))

  it.live("a document index outside the manifest fails at its block with the whole response's issue path", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const bad = [messageStart, textStart(0), { ...textDelta(0, "Net sales were 4,210 units.") }, blockStop(0), textStart(1),
        { type: "content_block_delta" as const, index: 1, delta: { type: "citations_delta" as const, citation: charCitation(7, salesRecord.text, salesQuote) } },
        textDelta(1, "Net sales for Q3 2026 were 4,210 units."), blockStop(1), messageDelta, messageStop]
      const error = errorOf(yield* streamed(sseText(bad), m))
      assert.strictEqual(error._tag, "InvalidAnswer")
      if (error._tag !== "InvalidAnswer") return
      assert.deepStrictEqual(error.issues[0].path, ["content", 1, "citations", 0, "document_index"])
    }))
})

describe("run-pipeline verify-answer --format-in anthropic-sse", () => {
  it.scopedLive("the same verdict as the stream: grounded, a fabricated quote removed in drop mode, a cut stream rejected", () =>
    Effect.gen(function*() {
      const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord, emojiRecord])
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson)))
      const m = yield* ManifestModule.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
      const run = (name: string, text: string) =>
        Effect.gen(function*() {
          const file = path.join(work, name)
          yield* Effect.promise(() => fsp.writeFile(file, text))
          return yield* cli([
            "verify-answer", "--answer", file, "--format-in", "anthropic-sse", "--config", configFile, "--run-dir", runDir,
            "--manifest-digest", m.digest, "--mode", "drop", "--format", "json"
          ])
        })
      const ok = yield* run("grounded.sse", sseText(grounded))
      assert.strictEqual(ok.code, 0, ok.stderr)
      const service = (yield* streamed(sseText(grounded), m)).at(-1) as Extract<Event, { type: "done" }>
      const answer = JSON.parse(ok.stdout).answer
      assert.strictEqual(answer.outcome, service.state)
      const { citationsRetracted: _, ...summary } = service.summary
      assert.deepStrictEqual(answer.summary, summary)

      const fab = yield* run("fabricated.sse", sseText(fabricated))
      assert.strictEqual(fab.code, 0, fab.stderr)
      const fabService = (yield* streamed(sseText(fabricated), m)).at(-1) as Extract<Event, { type: "done" }>
      const fabAnswer = JSON.parse(fab.stdout).answer
      assert.deepStrictEqual([fabAnswer.summary.claimsRemoved, fabService.summary.claimsRemoved], [1, 1])
      assert.deepStrictEqual(fabAnswer.removed[0].reasons.map((r: { error: { _tag: string } }) => r.error._tag), ["SnippetAbsent"])

      const text = sseText(grounded)
      const cut = yield* run("cut.sse", text.slice(0, text.indexOf("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":4")))
      assert.strictEqual(cut.code, 1)
      const error = JSON.parse(cut.stdout).error
      assert.deepStrictEqual([error._tag, error.at], ["ProviderStreamIncomplete", "inside-block"])
    }))
})
