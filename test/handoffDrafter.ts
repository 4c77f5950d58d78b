/**
 * A scripted drafting model for the hand-off loop: it reads ONLY a documents hand-off (what
 * `sources --format …` or `GET /v1/runs/{id}/documents` returned), copies whole sentences out of
 * the texts it was handed (with the page and heading they lie in, where the hand-off gives them),
 * and writes an answer in one provider's format. Nothing else is known to it: no capture record,
 * no digest other than the manifest digest the hand-off names.
 */

/** Sentences of a text that occur exactly once in it: `[start, end)` UTF-16 offsets, whole lines or sentences ending with `.`. */
export const sentencesOf = (text: string, count = 2): Array<{ readonly start: number; readonly end: number; readonly text: string }> => {
  const out: Array<{ start: number; end: number; text: string }> = []
  const pattern = /[A-Z][^\n.]{14,}\./g
  for (let m = pattern.exec(text); m !== null && out.length < count; m = pattern.exec(text)) {
    const sentence = m[0]
    if (text.indexOf(sentence) !== text.lastIndexOf(sentence)) continue
    out.push({ start: m.index, end: m.index + sentence.length, text: sentence })
  }
  return out
}

const codePoints = (s: string) => [...s].length

// --- citegate.answer/1 from citegate.documents/1 --------------------------------------------------

export interface DocumentsOutput {
  readonly format: "citegate.documents/1"
  readonly manifest: string
  readonly documents: ReadonlyArray<{
    readonly number: number
    readonly source: string
    readonly status: string
    readonly captureSha256?: string
    readonly text?: string
    readonly pages?: ReadonlyArray<{ readonly number: number; readonly start: number; readonly end: number }>
    readonly headings?: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly start: number; readonly end: number }>
  }>
}

/** Claims citing sentences by number, each with the page range and the innermost heading path the hand-off gives for it. */
export const draftAnswerJson = (handOff: DocumentsOutput) => {
  const claims = handOff.documents.flatMap((doc) => {
    if (doc.status !== "captured" || doc.text === undefined) return []
    return sentencesOf(doc.text).map((s, k) => {
      const page = doc.pages?.find((p) => p.start <= s.start && s.end <= p.end)
      let heading: ReadonlyArray<string> | undefined
      for (const h of doc.headings ?? []) {
        if (h.start <= s.start && s.end <= h.end && (heading === undefined || h.path.length > heading.length)) heading = h.path
      }
      return {
        id: `d${doc.number}-${k}`,
        text: s.text,
        citations: [{
          source: doc.number,
          quote: s.text,
          ...(page === undefined ? {} : { page: { start: page.number, end: page.number + 1 } }),
          ...(heading === undefined ? {} : { heading })
        }]
      }
    })
  })
  return { format: "citegate.answer/1", manifest: handOff.manifest, claims }
}

// --- Anthropic Messages response from citegate.anthropic-documents/1 ------------------------------

export interface AnthropicOutput {
  readonly format: "citegate.anthropic-documents/1"
  readonly manifest: string
  readonly documents: ReadonlyArray<{
    readonly type: "document"
    readonly source: { readonly type: "text"; readonly media_type: "text/plain"; readonly data: string }
    readonly title: string
    readonly citations: { readonly enabled: true }
  }>
}

/** A Messages response as the API returns it: one cited text block per sentence, `char_location` in code points. */
export const draftAnthropic = (handOff: AnthropicOutput, skip: ReadonlySet<number> = new Set()) => ({
  id: "msg_handoff",
  type: "message",
  role: "assistant",
  model: "claude-scripted",
  content: [
    { type: "text", text: "Based on the documents, here is what they state." },
    ...handOff.documents.flatMap((doc, index) =>
      skip.has(index) ? [] : sentencesOf(doc.source.data).map((s) => ({
        type: "text",
        text: s.text,
        citations: [{
          type: "char_location",
          cited_text: s.text,
          document_index: index,
          document_title: doc.title,
          start_char_index: codePoints(doc.source.data.slice(0, s.start)),
          end_char_index: codePoints(doc.source.data.slice(0, s.end))
        }]
      }))
    )
  ],
  stop_reason: "end_turn",
  usage: { input_tokens: 1, output_tokens: 1 }
})

// --- EVI1 from the EVI1 prompt --------------------------------------------------------------------

/** The prompt's manifest digest and its documents, read back out of their fences exactly. */
export const readEvi1Prompt = (prompt: string) => {
  const manifest = /^citegate manifest ([0-9a-f]{64})\n/.exec(prompt)?.[1]
  const documents: Array<{ readonly number: number; readonly text: string }> = []
  const heading = /^### Document \[(\d+)\]\n\n(`{3,})text\n/gm
  for (let m = heading.exec(prompt); m !== null; m = heading.exec(prompt)) {
    const fence = m[2]!
    const start = m.index + m[0].length
    const end = prompt.indexOf(`\n${fence}\n`, start)
    documents.push({ number: Number(m[1]), text: prompt.slice(start, end) })
  }
  return { manifest, documents }
}

const evi1Quote = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")}"`

/** An EVI1 answer: one sentence per claim, `[n]{cX}` markers, the appendix with the quotes and the MANIFEST line. */
export const draftEvi1 = (prompt: string): string => {
  const { documents, manifest } = readEvi1Prompt(prompt)
  const body: Array<string> = []
  const evidence: Array<string> = []
  let c = 0
  for (const doc of documents) {
    for (const s of sentencesOf(doc.text)) {
      c++
      body.push(`${s.text}[${doc.number}]{c${c}}`)
      evidence.push(`c${c}|${doc.number}|${evi1Quote(s.text)}`)
    }
  }
  return [...body, "", "EVI1", `MANIFEST ${manifest}`, ...evidence, "END_EVI1", ""].join("\n")
}
