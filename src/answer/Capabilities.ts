/**
 * The capability table of answer formats: per format, whether its citations can be verified at
 * quote level (a verbatim text citegate checks in the capture) or only at document level (a URL or
 * id, never a passage), the unit of its offsets, and what citegate verifies. Data, versioned by
 * `capabilitiesFormat`; docs/answers.md renders the same table.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"

export const capabilitiesFormat = "citegate.answer-capabilities/1" as const

export const Level = Schema.Literal("quote", "document", "quote-or-document")

export const Capability = Schema.Struct({
  /** `--format-in` / `?format=` value. */
  format: Schema.String,
  provider: Schema.String,
  /** Where the citations are in the response. */
  citations: Schema.String,
  level: Level,
  /** What the provider's offsets point into, and in which unit, as citegate reads them. */
  offsets: Schema.String,
  /** What citegate checks for each citation. */
  verified: Schema.String
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "Capability" })
export type Capability = typeof Capability.Type

export const Capabilities = Schema.Struct({
  format: Schema.Literal(capabilitiesFormat),
  formats: Schema.Array(Capability)
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "Capabilities" })
export type Capabilities = typeof Capabilities.Type

export const capabilities: Capabilities = {
  format: capabilitiesFormat,
  formats: [
    {
      format: "json",
      provider: "citegate.answer/1",
      citations: "claims[].citations[]",
      level: "quote",
      offsets: "chars: code points of the capture text, 0-based, end exclusive; page 1-based, end exclusive",
      verified: "quote verbatim in the exact capture; chars, page and heading when given"
    },
    {
      format: "evi1",
      provider: "EVI1 plain text",
      citations: "inline quotes with source numbers",
      level: "quote",
      offsets: "none",
      verified: "quote verbatim in the exact capture"
    },
    {
      format: "anthropic",
      provider: "Anthropic Messages (Citations)",
      citations: "content[].citations[] (char_location, page_location, content_block_location)",
      level: "quote",
      offsets: "char_location: code points of the document, end exclusive; page_location: 1-based, end exclusive",
      verified: "cited_text verbatim, at its character span or within its pages; content blocks: AnchorUnsupported"
    },
    {
      format: "anthropic-sse",
      provider: "Anthropic Messages stream (SSE)",
      citations: "content_block_delta citations_delta, per text block",
      level: "quote",
      offsets: "as anthropic",
      verified: "as anthropic, each block's citations once the block stops"
    },
    {
      format: "bedrock",
      provider: "AWS Bedrock Converse",
      citations: "output.message.content[].citationsContent.citations[] (location documentChar, documentPage, documentChunk, web)",
      level: "quote-or-document",
      offsets: "documentChar: code points of the document, end exclusive (unit unstated by AWS; other units fail closed); " +
        "documentPage: 1-based, end exclusive (end = start: that page)",
      verified: "sourceContent text verbatim, at its character span or within its pages; chunks: AnchorUnsupported; " +
        "without sourceContent: document-level"
    },
    {
      format: "bedrock-stream",
      provider: "AWS Bedrock ConverseStream (AWS event stream)",
      citations: "contentBlockDelta delta.citation, per text block",
      level: "quote-or-document",
      offsets: "as bedrock",
      verified: "as bedrock, each block's citations once the block stops"
    },
    {
      format: "gemini",
      provider: "Google Gemini (grounding)",
      citations: "candidates[0].groundingMetadata.groundingSupports[] → groundingChunks[]",
      level: "quote-or-document",
      offsets: "segment.startIndex/endIndex: UTF-8 bytes of the response part, end exclusive (locate the claim, not the quote)",
      verified: "retrievedContext.text verbatim (no span: Gemini gives no source offsets); web chunks: document-level, " +
        "redirect URLs UnresolvableSource"
    },
    {
      format: "openai",
      provider: "OpenAI Responses",
      citations: "output[].content[].annotations[] (url_citation, file_citation, container_file_citation)",
      level: "document",
      offsets: "start_index/end_index: the model's output text (unit undocumented; read as code points, used only to attach)",
      verified: "the document only: exact URL or declared file id; no quote"
    },
    {
      format: "openai-chat",
      provider: "OpenAI Chat Completions",
      citations: "choices[0].message.annotations[] (url_citation)",
      level: "document",
      offsets: "url_citation.start_index/end_index: the message content (read as code points, used only to attach)",
      verified: "the document only: exact URL; no quote"
    },
    {
      format: "cohere",
      provider: "Cohere v2 Chat",
      citations: "message.citations[] → sources[] (document, tool)",
      level: "document",
      offsets: "start/end: code points of the response text, end exclusive (must hold citation.text)",
      verified: "the document only: declared document id or exact document url; no quote (a returned snippet is the caller's own input)"
    }
  ]
}

/** The capability of one format. */
export const capabilityOf = (format: string): Capability | undefined => capabilities.formats.find((c) => c.format === format)
