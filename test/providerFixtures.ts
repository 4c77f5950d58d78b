/**
 * Recorded provider responses, typed with each official SDK's response type: a fixture that drifts
 * from the SDK's schema fails to compile. Offsets are computed from the texts in each provider's own
 * unit (Bedrock: code points of the document; Gemini: UTF-8 bytes of the response part; OpenAI and
 * Cohere: code points of the response), the way the provider sends them.
 */
import type { Citation as BedrockCitation, ConverseResponse } from "@aws-sdk/client-bedrock-runtime"
import type { GenerateContentResponse } from "@google/genai"
import type { Cohere } from "cohere-ai"
import type { ChatCompletion } from "openai/resources/chat/completions"
import type { Response as OpenAIResponse } from "openai/resources/responses/responses"
import { CAFE, cafeText, PLAIN, UNLISTED } from "./providerSupport.js"

/** Code points before the first occurrence of `quote` in `text`. */
export const cpIndex = (text: string, quote: string) => [...text.slice(0, text.indexOf(quote))].length
export const cpLength = (s: string) => [...s].length
export const utf8 = (s: string) => Buffer.byteLength(s, "utf8")

export const REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXE-example-token"

// --- Bedrock Converse ---------------------------------------------------------------------------

export const bikes = "fleet grew to 42 bikes"
export const tokyo = "東京の売上は42件でした。"

const charCitation = (documentIndex: number, quote: string, start: number, end: number): BedrockCitation => ({
  title: `Source ${documentIndex + 1}`,
  sourceContent: [{ text: quote }],
  location: { documentChar: { documentIndex, start, end } }
})

const bedrock = (generated: string, citations: Array<BedrockCitation>): ConverseResponse => ({
  output: {
    message: {
      role: "assistant",
      content: [
        { text: "Here is what the sources say. " },
        { citationsContent: { content: [{ text: generated }], citations } }
      ]
    }
  },
  stopReason: "end_turn",
  usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
  metrics: { latencyMs: 10 }
})

const bikesAt = cpIndex(cafeText, bikes)
const tokyoAt = cpIndex(cafeText, tokyo)

export const bedrockFixtures = {
  /** Code-point offsets (after an emoji and CJK): verified at the span. */
  grounded: bedrock("The fleet grew to 42 bikes.", [
    charCitation(0, bikes, bikesAt, bikesAt + cpLength(bikes)),
    charCitation(0, tokyo, tokyoAt, tokyoAt + cpLength(tokyo))
  ]),
  /** A quote the source does not hold. */
  fabricated: bedrock("The fleet grew to 44 bikes.", [charCitation(0, "fleet grew to 44 bikes", bikesAt, bikesAt + cpLength(bikes))]),
  /** UTF-16 code-unit offsets: one more than code points past the emoji. */
  utf16Offsets: bedrock("The fleet grew to 42 bikes.", [
    charCitation(0, bikes, cafeText.indexOf(bikes), cafeText.indexOf(bikes) + bikes.length)
  ]),
  /** UTF-8 byte offsets: far past the code points in CJK text. */
  byteOffsets: bedrock("Tokyo had 42 sales.", [
    charCitation(0, tokyo, utf8(cafeText.slice(0, cafeText.indexOf(tokyo))), utf8(cafeText.slice(0, cafeText.indexOf(tokyo))) + utf8(tokyo))
  ]),
  /** A web location naming a URL the operator never approved. */
  unapproved: bedrock("Returns fell.", [{ sourceContent: [{ text: "Returns fell to 2% of orders." }], location: { web: { url: UNLISTED, domain: "elsewhere.example.test" } } }]),
  /** documentIndex 2: the manifest's third source, never captured in this run. */
  missing: bedrock("Nothing.", [charCitation(2, "x", 0, 1)]),
  /** A web location without cited text: document-level. */
  documentLevel: bedrock("Returns fell to 2% of orders.", [{ location: { web: { url: PLAIN, domain: "docs.example.test" } } }])
} satisfies Record<string, ConverseResponse>

// --- Gemini -------------------------------------------------------------------------------------

export const geminiSentences = {
  cafe: "Le café de Zürich a vendu 1 234 tasses.",
  tokyo: "東京では42件でした。",
  bikes: "Die 🚲-Flotte wuchs auf 42 Räder."
}
export const geminiText = `${geminiSentences.cafe} ${geminiSentences.tokyo} ${geminiSentences.bikes} Das ist alles.`

type Gemini = Pick<GenerateContentResponse, "candidates" | "modelVersion">
type Chunk = NonNullable<NonNullable<NonNullable<GenerateContentResponse["candidates"]>[number]["groundingMetadata"]>["groundingChunks"]>[number]

/** A support of `sentence` in bytes (as Gemini sends them), or in UTF-16 units (the classic mistake). */
const support = (sentence: string, chunks: Array<number>, unit: "bytes" | "utf16" = "bytes") => {
  const at = geminiText.indexOf(sentence)
  const [startIndex, endIndex] = unit === "bytes"
    ? [utf8(geminiText.slice(0, at)), utf8(geminiText.slice(0, at)) + utf8(sentence)]
    : [at, at + sentence.length]
  return { segment: { startIndex, endIndex, text: sentence }, groundingChunkIndices: chunks }
}

const geminiChunks: Array<Chunk> = [
  { retrievedContext: { uri: CAFE, title: "cafe.txt", text: "Le café de Zürich a vendu 1 234 tasses en été." } },
  { retrievedContext: { uri: "doc-cafe", title: "cafe", text: tokyo } },
  { web: { uri: REDIRECT, title: "example.test", domain: "example.test" } },
  { retrievedContext: { uri: PLAIN, title: "plain.txt" } },
  { retrievedContext: { uri: CAFE, title: "cafe.txt", text: "東京の売上は43件でした。" } }
]

const gemini = (supports: Array<ReturnType<typeof support>>): Gemini => ({
  candidates: [{
    content: { role: "model", parts: [{ text: geminiText }] },
    finishReason: "STOP" as never,
    groundingMetadata: { groundingChunks: geminiChunks, groundingSupports: supports, retrievalQueries: ["cafe sales"] }
  }],
  modelVersion: "gemini-2.5-flash"
})

export const geminiFixtures = {
  grounded: gemini([support(geminiSentences.cafe, [0]), support(geminiSentences.tokyo, [1])]),
  fabricated: gemini([support(geminiSentences.tokyo, [4])]),
  utf16Offsets: gemini([support(geminiSentences.tokyo, [1], "utf16")]),
  redirect: gemini([support(geminiSentences.bikes, [2])]),
  documentLevel: gemini([support(geminiSentences.bikes, [3])])
} satisfies Record<string, Gemini>

// --- OpenAI -------------------------------------------------------------------------------------

export const openaiText = "Warehouse B shipped 310 crates in October. Returns fell to 2% of orders (plain.txt). The café 🚲 fleet grew."

const openaiResponse = (annotations: OpenAIResponse["output"] extends Array<infer I> ? I extends { type: "message"; content: Array<infer C> } ? C extends { type: "output_text"; annotations: infer A } ? A : never : never : never): OpenAIResponse => ({
  id: "resp_1",
  object: "response",
  created_at: 1_764_547_200,
  model: "gpt-5",
  output_text: openaiText,
  output: [
    { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q" } } as never,
    { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: openaiText, annotations }] }
  ],
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: null,
  parallel_tool_calls: true,
  temperature: 1,
  tool_choice: "auto",
  tools: [],
  top_p: 1
})

const afterFirst = cpIndex(openaiText, "Returns")
const emojiSentence = cpIndex(openaiText, "The café")

export const openaiFixtures = {
  /** An approved URL (exact), a declared file id, an undeclared file id, an unapproved URL with OpenAI's utm tag. */
  mixed: openaiResponse([
    { type: "url_citation", url: PLAIN, title: "plain", start_index: 0, end_index: 42 },
    { type: "file_citation", file_id: "file-plain", filename: "plain.txt", index: afterFirst + 10 },
    { type: "file_citation", file_id: "file-unknown", filename: "x.txt", index: emojiSentence + 5 },
    { type: "url_citation", url: `${PLAIN}?utm_source=openai`, title: "plain", start_index: emojiSentence, end_index: cpLength(openaiText) }
  ]),
  /** An index past the output text. */
  outside: openaiResponse([{ type: "url_citation", url: PLAIN, title: "plain", start_index: 0, end_index: cpLength(openaiText) + 5 }])
} satisfies Record<string, OpenAIResponse>

const chat = (annotations: NonNullable<ChatCompletion["choices"][number]["message"]["annotations"]>): ChatCompletion => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_764_547_200,
  model: "gpt-4o-search-preview",
  choices: [{
    index: 0,
    finish_reason: "stop",
    logprobs: null,
    message: { role: "assistant", content: openaiText, refusal: null, annotations }
  }]
})

export const openaiChatFixtures = {
  mixed: chat([
    { type: "url_citation", url_citation: { url: PLAIN, title: "plain", start_index: 0, end_index: 42 } },
    { type: "url_citation", url_citation: { url: UNLISTED, title: "elsewhere", start_index: afterFirst, end_index: afterFirst + 5 } }
  ]),
  outside: chat([{ type: "url_citation", url_citation: { url: PLAIN, title: "plain", start_index: 0, end_index: cpLength(openaiText) + 5 } }])
} satisfies Record<string, ChatCompletion>

// --- Cohere v2 ------------------------------------------------------------------------------------

export const cohereText = "Der 🚲-Bestand: 東京 hatte 42 Verkäufe. Warehouse B shipped 310 crates. Returns fell."

const cite = (phrase: string, sources: Array<Cohere.Source>, unit: "cp" | "utf16" = "cp"): Cohere.Citation => {
  const start = unit === "cp" ? cpIndex(cohereText, phrase) : cohereText.indexOf(phrase)
  return { start, end: start + (unit === "cp" ? cpLength(phrase) : phrase.length), text: phrase, sources, type: "TEXT_CONTENT", contentIndex: 0 }
}

const cohere = (citations: Array<Cohere.Citation>): Cohere.V2ChatResponse => ({
  id: "c-1",
  finishReason: "COMPLETE",
  message: { role: "assistant", content: [{ type: "text", text: cohereText }], citations },
  usage: { tokens: { inputTokens: 10, outputTokens: 10 } }
})

export const cohereFixtures = {
  /** A declared document id, and a document whose url field is an approved source. */
  grounded: cohere([
    cite("42 Verkäufe", [{ type: "document", id: "doc-cafe", document: { id: "doc-cafe", snippet: "東京の売上は42件でした。" } }]),
    cite("310 crates", [{ type: "document", id: "doc:1", document: { url: PLAIN, title: "plain" } }])
  ]),
  /** An undeclared id and a tool result. */
  unresolvable: cohere([
    cite("42 Verkäufe", [{ type: "document", id: "doc-nobody", document: { snippet: "42" } }]),
    cite("Returns fell", [{ type: "tool", id: "search_1", toolOutput: { text: "Returns fell" } }])
  ]),
  /** UTF-16 offsets past the emoji: they do not hold the cited text. */
  utf16Offsets: cohere([cite("42 Verkäufe", [{ type: "document", id: "doc-cafe", document: {} }], "utf16")])
} satisfies Record<string, Cohere.V2ChatResponse>

/** Cohere's SDK object as its wire JSON (snake_case where the SDK renames: finish_reason, content_index, tool_output). */
export const cohereWire = (response: Cohere.V2ChatResponse): unknown =>
  JSON.parse(JSON.stringify(response, (_key, value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value
    const renamed: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      const wire = ({ finishReason: "finish_reason", contentIndex: "content_index", toolOutput: "tool_output", inputTokens: "input_tokens", outputTokens: "output_tokens" } as Record<string, string>)[k] ?? k
      renamed[wire] = v
    }
    return renamed
  }))
