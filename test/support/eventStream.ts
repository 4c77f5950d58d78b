/**
 * The AWS event stream encoding in tests, by the SDK's own codec (`@smithy/core/event-streams`, what
 * `@aws-sdk/client-bedrock-runtime` decodes with): ConverseStream events and exceptions as Bedrock
 * sends them, a damaged message, and a recorded Converse response as the events that stream it.
 */
import type { ContentBlock, ConverseResponse, ConverseStreamOutput } from "@aws-sdk/client-bedrock-runtime"
import { EventStreamCodec } from "@smithy/core/event-streams"

export const codec = new EventStreamCodec((bytes) => new TextDecoder().decode(bytes), (text) => new TextEncoder().encode(text))

/** One ConverseStream event as Bedrock sends it: an `event` message named by its member. */
export const encodeEvent = (event: ConverseStreamOutput): Uint8Array => {
  const [name, body] = Object.entries(event).find(([, v]) => v !== undefined)!
  return codec.encode({
    headers: {
      ":message-type": { type: "string", value: "event" },
      ":event-type": { type: "string", value: name },
      ":content-type": { type: "string", value: "application/json" }
    },
    // Bedrock pads payloads with a `p` key: vendor keys citegate does not read are ignored.
    body: new TextEncoder().encode(JSON.stringify({ ...body, p: "abcdefghijkl" }))
  })
}

/** A stream exception (`throttlingException`, …) as Bedrock sends it. */
export const encodeException = (type: string, message: string): Uint8Array =>
  codec.encode({
    headers: {
      ":message-type": { type: "string", value: "exception" },
      ":exception-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" }
    },
    body: new TextEncoder().encode(JSON.stringify({ message }))
  })

/** A message whose payload was damaged in transit: its checksum no longer matches. */
export const corrupt = (bytes: Uint8Array): Uint8Array => {
  const out = bytes.slice()
  out[out.length - 6] = out[out.length - 6]! ^ 0x20
  return out
}

export const concat = (parts: ReadonlyArray<Uint8Array>) => new Uint8Array(Buffer.concat(parts))

/** The ConverseStream events of a recorded Converse response: each block's text, then its citations, then its stop. */
export const streamOf = (response: ConverseResponse): Array<ConverseStreamOutput> => {
  const blocks: ReadonlyArray<ContentBlock> = response.output?.message?.content ?? []
  const events: Array<ConverseStreamOutput> = [{ messageStart: { role: "assistant" } }]
  blocks.forEach((block, contentBlockIndex) => {
    const text = block.text ?? block.citationsContent?.content?.map((c) => c.text ?? "").join("") ?? ""
    events.push({ contentBlockDelta: { contentBlockIndex, delta: { text } } })
    for (const citation of block.citationsContent?.citations ?? []) {
      events.push({ contentBlockDelta: { contentBlockIndex, delta: { citation } } })
    }
    events.push({ contentBlockStop: { contentBlockIndex } })
  })
  events.push({ messageStop: { stopReason: "end_turn" } })
  return events
}

/** A whole ConverseStream body. */
export const bodyOf = (events: ReadonlyArray<ConverseStreamOutput>) => concat(events.map(encodeEvent))
