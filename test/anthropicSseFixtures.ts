/**
 * Recorded Anthropic Messages streams (Citations on, plain-text documents in manifest order), typed
 * with the SDK's own event types: a fixture that drifts from the API's schema fails to compile.
 * Document 0 is the sales bulletin, 1 the inventory note, 2 the emoji text (source 3).
 */
import type {
  CitationCharLocation,
  Message,
  RawContentBlockDeltaEvent,
  RawContentBlockStartEvent,
  RawContentBlockStopEvent,
  RawMessageDeltaEvent,
  RawMessageStartEvent,
  RawMessageStopEvent,
  RawMessageStreamEvent
} from "@anthropic-ai/sdk/resources/messages"
import { emojiRecord } from "./answerSupport.js"
import { inventoryRecord, salesRecord } from "./support.js"

const message: Message = {
  id: "msg_01StreamFixture",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [],
  container: null,
  diagnostics: null,
  stop_reason: null,
  stop_details: null,
  stop_sequence: null,
  usage: {
    cache_creation: null,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    inference_geo: null,
    input_tokens: 2048,
    output_tokens: 1,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null
  }
}

export const messageStart: RawMessageStartEvent = { type: "message_start", message }

export const textStart = (index: number): RawContentBlockStartEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "text", text: "", citations: [] }
})

export const thinkingStart = (index: number): RawContentBlockStartEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "thinking", thinking: "", signature: "" }
})

export const textDelta = (index: number, text: string): RawContentBlockDeltaEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "text_delta", text }
})

export const thinkingDelta = (index: number, thinking: string): RawContentBlockDeltaEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "thinking_delta", thinking }
})

export const citationDelta = (index: number, citation: CitationCharLocation): RawContentBlockDeltaEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "citations_delta", citation }
})

export const blockStop = (index: number): RawContentBlockStopEvent => ({ type: "content_block_stop", index })

export const messageDelta: RawMessageDeltaEvent = {
  type: "message_delta",
  delta: { container: null, stop_details: null, stop_reason: "end_turn", stop_sequence: null },
  usage: {
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    input_tokens: null,
    output_tokens: 96,
    output_tokens_details: null,
    server_tool_use: null
  }
}

export const messageStop: RawMessageStopEvent = { type: "message_stop" }

/** Code points before `at` (Anthropic's char indices count characters of the document). */
const codePoints = (text: string, at: number) => [...text.slice(0, at)].length

/** A `char_location` citation of `quote` where it occurs in `text` (or at `shift` code points from there). */
export const charCitation = (documentIndex: number, text: string, quote: string, shift = 0): CitationCharLocation => {
  const at = text.indexOf(quote)
  const start = (at === -1 ? 0 : codePoints(text, at)) + shift
  return {
    type: "char_location",
    cited_text: quote,
    document_index: documentIndex,
    document_title: null,
    file_id: null,
    start_char_index: start,
    end_char_index: start + [...quote].length
  }
}

export const salesQuote = "Net sales for Q3 2026 were 4,210 units"
export const leedsQuote = "The Leeds warehouse held 640 of those units."
export const bikesQuote = "The 🚲 fleet grew to 42 bikes"

/**
 * A grounded answer: a framing block, a thinking block (not part of the answer), a block citing the
 * sales bulletin, one citing the inventory note and the sales bulletin (two citations_delta), one
 * citing the emoji text (code points, not UTF-16 units).
 */
export const grounded: ReadonlyArray<RawMessageStreamEvent> = [
  messageStart,
  thinkingStart(0),
  thinkingDelta(0, "The bulletin states the figure."),
  blockStop(0),
  textStart(1),
  textDelta(1, "Here is a summary. "),
  blockStop(1),
  textStart(2),
  citationDelta(2, charCitation(0, salesRecord.text, salesQuote)),
  textDelta(2, "Net sales for Q3 2026 "),
  textDelta(2, "were 4,210 units."),
  blockStop(2),
  textStart(3),
  textDelta(3, " "),
  blockStop(3),
  textStart(4),
  citationDelta(4, charCitation(1, inventoryRecord.text, leedsQuote)),
  citationDelta(4, charCitation(0, salesRecord.text, "4,210 units")),
  textDelta(4, "Leeds held 640 of the 4,210 units."),
  blockStop(4),
  textStart(5),
  citationDelta(5, charCitation(2, emojiRecord.text, bikesQuote)),
  textDelta(5, " The 🚲 fleet grew to 42 bikes."),
  blockStop(5),
  messageDelta,
  messageStop
]

/** The same answer with the sales quote fabricated (the bulletin never says 9,999). */
export const fabricated: ReadonlyArray<RawMessageStreamEvent> = grounded.map((event) =>
  event.type === "content_block_delta" && event.index === 2 && event.delta.type === "citations_delta"
    ? citationDelta(2, { ...charCitation(0, salesRecord.text, salesQuote), cited_text: "Net sales for Q3 2026 were 9,999 units" })
    : event.type === "content_block_delta" && event.index === 2 && event.delta.type === "text_delta" && event.delta.text.includes("4,210")
    ? textDelta(2, "were 9,999 units.")
    : event
)

/** One event as the API sends it: its `event:` name and one `data:` line, then a blank line. */
export const sseEvent = (event: RawMessageStreamEvent | { readonly type: "ping" } | { readonly type: "error"; readonly error: { readonly type: string; readonly message: string } }) =>
  `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

export const sseText = (events: ReadonlyArray<RawMessageStreamEvent>) => events.map(sseEvent).join("")
