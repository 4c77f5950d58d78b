/**
 * The provider matrix: per provider format × case (grounded; fabricated quote; wrong offsets; an
 * unapproved or unresolvable document; `answers.citations` "quote" and "document"; for Anthropic
 * and Bedrock a streamed answer with a retraction), one row each, with what every surface must
 * show (the CLI's exit code and JSON rendering, the service's JSON). The inputs are the recorded
 * fixtures typed with the official SDKs' response types (`providerFixtures.ts`, and the Anthropic
 * and Bedrock ones below).
 *
 * Cases that do not apply, and why (docs/answers.md says the same):
 * - fabricated quote for openai, openai-chat and cohere: they return no cited text, so there is no
 *   quote to fabricate (every citation is document-level).
 * - wrong offsets as `SpanMismatch` for gemini, openai, openai-chat and cohere: their offsets point
 *   into the model's own response, not the source; offsets in the wrong unit (or past the text)
 *   are an `InvalidAnswer` of the response instead, and that is the row.
 * - the document-level policy for anthropic: every Anthropic citation carries its cited text, so it
 *   is quote-level under either policy; the "document" row shows quotes still verified and nothing
 *   counted document-level (no `CoarseCitation` can arise).
 * - a streamed answer for gemini, openai and cohere: citegate reads no stream format of theirs.
 */
import type { Message } from "@anthropic-ai/sdk/resources/messages"
import type { ConverseResponse } from "@aws-sdk/client-bedrock-runtime"
import type { Response as OpenAIResponse } from "openai/resources/responses/responses"
import type { CitationsPolicy } from "../src/answer/Records.js"
import { blockStop, charCitation, citationDelta, messageDelta, messageStart, messageStop, sseText, textDelta, textStart } from "./anthropicSseFixtures.js"
import {
  bedrockFixtures,
  bikes,
  cohereFixtures,
  cohereWire,
  cpIndex,
  cpLength,
  geminiFixtures,
  openaiChatFixtures,
  openaiFixtures,
  openaiText,
  tokyo
} from "./providerFixtures.js"
import { bodyOf, streamOf } from "./support/eventStream.js"
import { cafeText, PLAIN } from "./providerSupport.js"

// --- Anthropic Messages (document 0 is the café text, 1 the plain text, 2 never captured) ---------

const anthropic = (blocks: ReadonlyArray<{ readonly text: string; readonly citations: ReadonlyArray<ReturnType<typeof charCitation>> }>): Message => ({
  ...messageStart.message,
  content: blocks.map((b) => ({ type: "text" as const, text: b.text, citations: [...b.citations] })),
  stop_reason: "end_turn"
})

const fabricatedBikes = { ...charCitation(0, cafeText, bikes), cited_text: "fleet grew to 44 bikes" }

export const anthropicFixtures = {
  /** Code-point char_location offsets past the emoji and CJK text. */
  grounded: anthropic([
    { text: "The fleet grew to 42 bikes.", citations: [charCitation(0, cafeText, bikes)] },
    { text: " Tokyo had 42 sales.", citations: [charCitation(0, cafeText, tokyo)] }
  ]),
  fabricated: anthropic([{ text: "The fleet grew to 44 bikes.", citations: [fabricatedBikes] }]),
  /** UTF-16 code-unit offsets: one past the code points after the emoji. */
  wrongOffsets: anthropic([{ text: "The fleet grew to 42 bikes.", citations: [charCitation(0, cafeText, bikes, 1)] }]),
  /** document_index 2: the manifest's third source, never captured in this run. */
  unresolvable: anthropic([{ text: "Nothing.", citations: [charCitation(2, "x", "x")] }])
} satisfies Record<string, Message>

/** A streamed Anthropic answer: the bikes quote fabricated (retracted), the Tokyo quote grounded. */
export const anthropicStreamRetraction = sseText([
  messageStart,
  textStart(0),
  citationDelta(0, fabricatedBikes),
  textDelta(0, "The fleet grew "),
  textDelta(0, "to 44 bikes."),
  blockStop(0),
  textStart(1),
  citationDelta(1, charCitation(0, cafeText, tokyo)),
  textDelta(1, " Tokyo had 42 sales."),
  blockStop(1),
  messageDelta,
  messageStop
])

// --- Bedrock ConverseStream (the SDK's codec encodes the events of a recorded response) ----------

const bikesAt = cpIndex(cafeText, bikes)
const tokyoAt = cpIndex(cafeText, tokyo)

export const bedrockRetraction: ConverseResponse = {
  output: {
    message: {
      role: "assistant",
      content: [
        { citationsContent: { content: [{ text: "The fleet grew to 44 bikes." }], citations: [{ sourceContent: [{ text: "fleet grew to 44 bikes" }], location: { documentChar: { documentIndex: 0, start: bikesAt, end: bikesAt + cpLength(bikes) } } }] } },
        { citationsContent: { content: [{ text: " Tokyo had 42 sales." }], citations: [{ sourceContent: [{ text: tokyo }], location: { documentChar: { documentIndex: 0, start: tokyoAt, end: tokyoAt + cpLength(tokyo) } } }] } }
      ]
    }
  },
  stopReason: "end_turn",
  usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
  metrics: { latencyMs: 10 }
}

export const bedrockStreamRetraction = bodyOf(streamOf(bedrockRetraction))
export const bedrockStreamGrounded = bodyOf(streamOf(bedrockFixtures.grounded))

// --- OpenAI: only resolvable citations (an approved URL, a declared file id) ---------------------

const openaiGrounded: OpenAIResponse = {
  ...openaiFixtures.mixed,
  output: [{
    id: "msg_1",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{
      type: "output_text",
      text: openaiText,
      annotations: [
        { type: "url_citation", url: PLAIN, title: "plain", start_index: 0, end_index: 42 },
        { type: "file_citation", file_id: "file-plain", filename: "plain.txt", index: cpIndex(openaiText, "Returns") + 10 }
      ]
    }]
  }]
}

/** What every surface must show for one row. */
export interface Expect {
  /** The CLI's exit code (0: a claim survives verification). */
  readonly exit: 0 | 1
  /** A typed error instead of an answer (the response itself is refused). */
  readonly error?: string
  readonly outcome?: "grounded" | "no_evidence"
  readonly verified?: number
  readonly documentLevel?: number
  /** The tags of every retracted citation (sorted). */
  readonly retracted?: ReadonlyArray<string>
}

export interface Row {
  readonly format: string
  readonly case: string
  readonly policy: CitationsPolicy
  readonly input: string | Uint8Array
  readonly expect: Expect
}

const json = (value: unknown) => JSON.stringify(value)
const cohere = (name: keyof typeof cohereFixtures) => json(cohereWire(cohereFixtures[name]))
const grounded = (verified: number): Expect => ({ exit: 0, outcome: "grounded", verified, documentLevel: 0, retracted: [] })
const retracted = (...tags: Array<string>): Expect => ({ exit: 1, outcome: "no_evidence", verified: 0, retracted: tags })
const invalid: Expect = { exit: 1, error: "InvalidAnswer" }
const coarse = (n: number): Expect => ({ exit: 1, outcome: "no_evidence", verified: 0, documentLevel: 0, retracted: Array(n).fill("CoarseCitation") })
const labelled = (n: number, ...others: Array<string>): Expect => ({ exit: 1, outcome: "no_evidence", verified: 0, documentLevel: n, retracted: others })
/** One claim's quote retracted, the other's verified: the answer stands on the rest. */
const withRetraction: Expect = { exit: 0, outcome: "grounded", verified: 1, documentLevel: 0, retracted: ["SnippetAbsent"] }

export const rows: ReadonlyArray<Row> = [
  { format: "anthropic", case: "grounded", policy: "quote", input: json(anthropicFixtures.grounded), expect: grounded(2) },
  { format: "anthropic", case: "fabricated quote: SnippetAbsent", policy: "quote", input: json(anthropicFixtures.fabricated), expect: retracted("SnippetAbsent") },
  { format: "anthropic", case: "wrong offsets: SpanMismatch", policy: "quote", input: json(anthropicFixtures.wrongOffsets), expect: retracted("SpanMismatch") },
  { format: "anthropic", case: "unresolvable document (never captured): InvalidAnswer", policy: "quote", input: json(anthropicFixtures.unresolvable), expect: invalid },
  { format: "anthropic", case: "policy document: quotes still verified, nothing document-level", policy: "document", input: json(anthropicFixtures.grounded), expect: grounded(2) },
  { format: "anthropic-sse", case: "streamed answer with a retraction", policy: "quote", input: anthropicStreamRetraction, expect: withRetraction },

  { format: "bedrock", case: "grounded", policy: "quote", input: json(bedrockFixtures.grounded), expect: grounded(2) },
  { format: "bedrock", case: "fabricated quote: SnippetAbsent", policy: "quote", input: json(bedrockFixtures.fabricated), expect: retracted("SnippetAbsent") },
  { format: "bedrock", case: "wrong offsets: SpanMismatch", policy: "quote", input: json(bedrockFixtures.utf16Offsets), expect: retracted("SpanMismatch") },
  { format: "bedrock", case: "unapproved web URL: NotApproved", policy: "quote", input: json(bedrockFixtures.unapproved), expect: retracted("NotApproved") },
  { format: "bedrock", case: "unresolvable document (never captured): InvalidAnswer", policy: "quote", input: json(bedrockFixtures.missing), expect: invalid },
  { format: "bedrock", case: "policy quote: CoarseCitation", policy: "quote", input: json(bedrockFixtures.documentLevel), expect: coarse(1) },
  { format: "bedrock", case: "policy document: labelled document-level", policy: "document", input: json(bedrockFixtures.documentLevel), expect: labelled(1) },
  { format: "bedrock-stream", case: "grounded", policy: "quote", input: bedrockStreamGrounded, expect: grounded(2) },
  { format: "bedrock-stream", case: "streamed answer with a retraction", policy: "quote", input: bedrockStreamRetraction, expect: withRetraction },

  { format: "gemini", case: "grounded", policy: "quote", input: json(geminiFixtures.grounded), expect: grounded(2) },
  { format: "gemini", case: "fabricated quote: SnippetAbsent", policy: "quote", input: json(geminiFixtures.fabricated), expect: retracted("SnippetAbsent") },
  { format: "gemini", case: "wrong offsets (UTF-16 units, not bytes): InvalidAnswer", policy: "quote", input: json(geminiFixtures.utf16Offsets), expect: invalid },
  { format: "gemini", case: "redirect URL: UnresolvableSource", policy: "document", input: json(geminiFixtures.redirect), expect: retracted("UnresolvableSource") },
  { format: "gemini", case: "policy quote: CoarseCitation", policy: "quote", input: json(geminiFixtures.documentLevel), expect: coarse(1) },
  { format: "gemini", case: "policy document: labelled document-level", policy: "document", input: json(geminiFixtures.documentLevel), expect: labelled(1) },

  { format: "openai", case: "grounded (document-level, policy document)", policy: "document", input: json(openaiGrounded), expect: labelled(2) },
  { format: "openai", case: "wrong offsets (past the output text): InvalidAnswer", policy: "quote", input: json(openaiFixtures.outside), expect: invalid },
  { format: "openai", case: "unapproved URL and undeclared file id: NotApproved, UnresolvableSource", policy: "document", input: json(openaiFixtures.mixed), expect: labelled(2, "NotApproved", "UnresolvableSource") },
  { format: "openai", case: "policy quote: CoarseCitation", policy: "quote", input: json(openaiGrounded), expect: coarse(2) },
  { format: "openai", case: "policy document: labelled document-level", policy: "document", input: json(openaiGrounded), expect: labelled(2) },
  { format: "openai-chat", case: "wrong offsets (past the output text): InvalidAnswer", policy: "quote", input: json(openaiChatFixtures.outside), expect: invalid },
  { format: "openai-chat", case: "unapproved URL: NotApproved", policy: "document", input: json(openaiChatFixtures.mixed), expect: labelled(1, "NotApproved") },
  { format: "openai-chat", case: "policy quote: CoarseCitation", policy: "quote", input: json(openaiChatFixtures.mixed), expect: { ...coarse(1), retracted: ["CoarseCitation", "NotApproved"] } },

  { format: "cohere", case: "grounded (document-level, policy document)", policy: "document", input: cohere("grounded"), expect: labelled(2) },
  { format: "cohere", case: "wrong offsets (UTF-16 units): InvalidAnswer", policy: "quote", input: cohere("utf16Offsets"), expect: invalid },
  { format: "cohere", case: "undeclared id and tool result: UnresolvableSource", policy: "document", input: cohere("unresolvable"), expect: retracted("UnresolvableSource", "UnresolvableSource") },
  { format: "cohere", case: "policy quote: CoarseCitation", policy: "quote", input: cohere("grounded"), expect: coarse(2) },
  { format: "cohere", case: "policy document: labelled document-level", policy: "document", input: cohere("grounded"), expect: labelled(2) }
]

/** The tags of every retracted citation of a JSON answer (claims kept, document-level, removed), sorted. */
export const retractedTags = (answer: any): Array<string> =>
  [
    ...answer.claims.flatMap((c: any) => c.retracted.map((r: any) => r.error._tag)),
    ...(answer.documentLevel ?? []).flatMap((c: any) => c.retracted.map((r: any) => r.error._tag)),
    ...answer.removed.flatMap((c: any) => c.reasons.map((r: any) => r.error._tag))
  ].sort()

/** The checks both surfaces make of a row's JSON rendering (`{answer}` or `{error}`). */
export const checkJson = (row: Row, out: any, assert: {
  strictEqual: (a: unknown, b: unknown, m?: string) => void
  deepStrictEqual: (a: unknown, b: unknown, m?: string) => void
}) => {
  const e = row.expect
  const name = `${row.format} ${row.case}`
  if (e.error !== undefined) {
    assert.strictEqual(out.error?._tag, e.error, name)
    return
  }
  const answer = out.answer
  // The policy is shown where a format can cite whole documents (Anthropic's citations never do).
  if (answer.citationsPolicy !== undefined) assert.strictEqual(answer.citationsPolicy, row.policy, name)
  if (e.outcome !== undefined) assert.strictEqual(answer.outcome, e.outcome, name)
  if (e.verified !== undefined) assert.strictEqual(answer.summary.citationsVerified, e.verified, name)
  if (e.documentLevel !== undefined) assert.strictEqual(answer.summary.citationsDocumentLevel ?? 0, e.documentLevel, name)
  if (e.documentLevel !== undefined && e.documentLevel > 0) {
    for (const claim of answer.documentLevel) assert.strictEqual(claim.label, "document-level: no quote verified", name)
  }
  if (e.retracted !== undefined) assert.deepStrictEqual(retractedTags(answer), [...e.retracted].sort(), name)
}
