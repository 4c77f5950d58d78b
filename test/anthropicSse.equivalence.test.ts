/**
 * The Anthropic SSE reader's outcome for hundreds of hostile variations of one stream, compared
 * with a golden file written by the reader before its per-event checks were made cheaper (hand
 * checks of the event shapes, a line splitter over the whole text). Each case is a valid stream
 * with one change: a field of one event replaced by a value of another type (or removed), a repeated
 * or forbidden key, a lone surrogate, a name that is not the data's type, data split over lines,
 * CRLF, a cut. The outcome is compared exactly: the response (or the typed failure with its
 * fields) from `decodeSse`, and what the streaming route sees (`Accumulator.line` with a listener).
 * `UPDATE_GOLDEN=1` rewrites the file (only on purpose, with the reader it should pin).
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as AnthropicSse from "../src/answer/AnthropicSse.js"
import { assertGolden, digest, paths, REMOVE, replaced } from "./support/golden.js"

const goldenUrl = new URL("./anthropicSse.equivalence.golden.json", import.meta.url)

const charCitation = (i: number) => ({
  type: "char_location", cited_text: `quoted passage ${i} — é 文 😀`, document_index: i % 3, document_title: null,
  start_char_index: 10 * i, end_char_index: 10 * i + 20
})
const base: ReadonlyArray<Record<string, unknown>> = [
  { type: "message_start", message: { id: "msg", type: "message", role: "assistant", content: [] } },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "", citations: [] } },
  { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: charCitation(1) } },
  {
    type: "content_block_delta", index: 1,
    delta: { type: "citations_delta", citation: { type: "page_location", cited_text: "a page", document_index: 1, start_page_number: 1, end_page_number: 2 } }
  },
  {
    type: "content_block_delta", index: 1,
    delta: { type: "citations_delta", citation: { type: "content_block_location", cited_text: "a block", document_index: 2, start_block_index: 0, end_block_index: 1 } }
  },
  { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "First. The claim 🚲." } },
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "text", text: "Plain", citations: null } },
  { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: " text." } },
  { type: "content_block_stop", index: 2 },
  { type: "message_delta", delta: { stop_reason: "end_turn" } },
  { type: "message_stop" }
]

const sse = (events: ReadonlyArray<unknown>) =>
  events.map((e) => `event: ${(e as { type?: unknown }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("")

const replacements: ReadonlyArray<unknown> = [
  REMOVE, null, -1, 0, 1, 1.5, 2 ** 53, -0.0, "", " ", "x", "text", "text_delta", "citations_delta", "char_location", "\ud800", [], {}, true
]

const cases = (): Array<[string, string]> => {
  const out: Array<[string, string]> = [["valid", sse(base)]]
  base.forEach((event, e) => {
    for (const path of paths(event)) {
      replacements.forEach((by, r) => {
        const events = [...base]
        events[e] = replaced(event, path, by) as Record<string, unknown>
        out.push([`event ${e} ${path.join(".")} := ${r}`, sse(events)])
      })
    }
    const line = `data: ${JSON.stringify(event)}`
    const text = sse(base)
    const objects = [...line.matchAll(/\{/g)].map((m) => m.index)
    for (const at of objects) {
      out.push([`event ${e} repeated key at ${at}`, text.replace(line, `${line.slice(0, at + 1)}"type":"x",${line.slice(at + 1)}`)])
      out.push([`event ${e} __proto__ at ${at}`, text.replace(line, `${line.slice(0, at + 1)}"__proto__":{},${line.slice(at + 1)}`)])
      out.push([`event ${e} escaped repeated key at ${at}`, text.replace(line, `${line.slice(0, at + 1)}"\\u0074ype":"x",${line.slice(at + 1)}`)])
    }
    out.push([`event ${e} lone surrogate escape`, text.replace(line, line.replace(/"(text|cited_text|thinking)":"/, "\"$1\":\"\\ud800"))])
    out.push([`event ${e} name mismatch`, text.replace(`event: ${event.type}\n${line}`, `event: other\n${line}`)])
    out.push([`event ${e} name "message"`, text.replace(`event: ${event.type}\n${line}`, `event: message\n${line}`)])
    out.push([`event ${e} no name`, text.replace(`event: ${event.type}\n${line}`, line)])
    out.push([`event ${e} split data`, text.replace(line, line.replace(",", ",\ndata: "))])
    out.push([`event ${e} dropped`, text.replace(`event: ${event.type}\n${line}\n\n`, "")])
    out.push([`event ${e} twice`, text.replace(`event: ${event.type}\n${line}\n\n`, `event: ${event.type}\n${line}\n\nevent: ${event.type}\n${line}\n\n`)])
    out.push([`event ${e} no blank line`, text.replace(`${line}\n\n`, `${line}\n`)])
    out.push([`event ${e} not JSON`, text.replace(line, `${line}}`)])
    out.push([`event ${e} array data`, text.replace(line, `data: [${JSON.stringify(event)}]`)])
  })
  const text = sse(base)
  out.push(["CRLF", text.replaceAll("\n", "\r\n")])
  out.push(["CR only before LF in data", text.replaceAll("\n\n", "\r\n\n")])
  out.push(["comments, id, retry, unknown fields, ping", text.replaceAll("\n\n", "\n: comment\nid: 1\nretry: 5\nfoo\nbar: baz\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n")])
  out.push(["no space after colons", text.replaceAll("data: ", "data:").replaceAll("event: ", "event:")])
  out.push(["two spaces after colons", text.replaceAll("data: ", "data:  ")])
  out.push(["error event", text.replace("event: message_delta", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\nevent: message_delta")])
  out.push(["error event, bad shape", text.replace("event: message_delta", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":1}}\n\nevent: message_delta")])
  out.push(["unknown event", text.replace("event: message_delta", "event: future\ndata: {\"type\":\"future\"}\n\nevent: message_delta")])
  out.push(["unknown event first", `event: future\ndata: {"type":"future"}\n\n${text}`])
  out.push(["empty data", text.replace("event: message_delta", "event: x\ndata:\n\nevent: message_delta")])
  out.push(["event after stop", `${text}event: ping\ndata: {"type":"ping"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`])
  out.push(["unterminated after stop", `${text}data: {`])
  for (let cut = 0; cut < text.length; cut += 23) out.push([`cut at ${cut}`, text.slice(0, cut)])
  return out
}

/** A failure as plain data: its tag, message and fields. */
const failure = (e: unknown) => {
  if (e instanceof AnthropicSse.SseAbort) e = e.failure
  const error = e as { readonly _tag?: string }
  const { _tag, ...fields } = { ...(e as object) } as Record<string, unknown>
  return `${error._tag ?? _tag} ${JSON.stringify(fields)}`
}

/** `decodeSse`'s outcome, and the streaming route's (lines to the Accumulator, listener calls recorded). */
const outcome = (text: string) => {
  const decoded = AnthropicSse.decodeSse(text)
  const whole = Either.isRight(decoded) ? { response: digest(decoded.right) } : { failure: failure(decoded.left) }
  const calls: Array<unknown> = []
  const accumulator = new AnthropicSse.Accumulator(AnthropicSse.answerSseLimits, {
    text: (index, t) => calls.push(["text", index, t]),
    textBlockStop: (index, block) => calls.push(["stop", index, block.text, digest(block.citations)])
  })
  let streamed: unknown
  try {
    const lines = text.split("\n")
    const last = lines.pop()!
    for (const line of lines) accumulator.line(line)
    if (last !== "") accumulator.line(last)
    streamed = { end: digest(accumulator.end()) }
  } catch (e) {
    if (!(e instanceof AnthropicSse.SseAbort)) throw e
    streamed = { failure: failure(e) }
  }
  // The streaming route's outcome, written out only where it differs from the whole text's.
  const same = "failure" in whole && JSON.stringify(streamed) === JSON.stringify({ failure: whole.failure })
  return { whole, streamed: same ? "same" : streamed, calls: digest(calls) }
}

describe("AnthropicSse: the same outcome for every hostile variation as the golden file", () => {
  it("hundreds of one-change variations of a stream", () => {
    const all = cases()
    assert.isAbove(all.length, 500)
    const results = Object.fromEntries(all.map(([name, text]) => [name, outcome(text)]))
    assertGolden(goldenUrl, results)
    // The golden file holds both kinds of outcome, so a reader that accepts or refuses everything fails.
    const kinds = new Set(Object.values(results).map((r) => Object.keys(r.whole)[0]))
    assert.isTrue(Object.values(results).some((r) => r.streamed !== "same"), "the streamed outcome is written out too")
    assert.deepStrictEqual([...kinds].sort(), ["failure", "response"])
  })
})
