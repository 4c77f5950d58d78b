import { Effect, Layer } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { config, emojiRecord } from "./answerSupport.js"
import { inventoryRecord, salesRecord } from "./support.js"

/** Counts what reaches the Verifier: every citation must be checked once, never the whole answer again. */
export interface VerifierCalls {
  calls: number
  citations: number
}

/** The real Verifier over a memory store, wrapped only to count its calls. */
export const verifierLayer = (counter?: VerifierCalls) =>
  Layer.effect(
    Verifier.Verifier,
    Effect.map(Verifier.make, (real) =>
      Verifier.Verifier.of({
        ...real,
        checkCitations: (citations) => {
          if (counter !== undefined) {
            counter.calls++
            counter.citations += citations.length
          }
          return real.checkCitations(citations)
        }
      }))
  ).pipe(
    Layer.provide(Policy.layer(config)),
    Layer.provideMerge(MemoryStore.layer({ records: [salesRecord, inventoryRecord, emojiRecord] }).pipe(Layer.orDie))
  )

export const streamLayer = (limits: Partial<AnswerStream.StreamLimits> = {}, counter?: VerifierCalls) =>
  AnswerStream.layer(limits).pipe(Layer.provideMerge(verifierLayer(counter)))

export const answersLayer = Answer.layer({ mode: "drop", uncited: "report" }).pipe(Layer.provide(verifierLayer()))

export const manifest = Manifest.make(config).pipe(Effect.provide(verifierLayer()))

/** The body of the sample answer (three claims, four citations, one uncited factual sentence). */
export const sampleBody = [
  "Q3 in brief.",
  "Net sales for Q3 2026 were 4,210 units.[1]{c1} Stock was 1,180 units, 640 of them in Leeds.[2][1]{c2}",
  "The 🚲 fleet grew to 42 bikes.[3]{c3} A sentence without any citation that still looks like a fact.",
  ""
].join("\n")

/** What a client sees of the sample's body: markers become placeholder footnotes. */
export const sampleStreamed = [
  "Q3 in brief.",
  "Net sales for Q3 2026 were 4,210 units.[^1] Stock was 1,180 units, 640 of them in Leeds.[^2][^3]",
  "The 🚲 fleet grew to 42 bikes.[^4] A sentence without any citation that still looks like a fact.",
  ""
].join("\n")

export const evidence = {
  c1: "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
  c2s2: "c2|2|\"Inventory on hand at 30 September 2026 was 1,180 units.\\nThe Leeds warehouse held 640 of those units.\"",
  c2s1: "c2|1|\"4,210\"",
  c3: "c3|3|\"The 🚲 fleet grew to 42 bikes\""
}

/** The whole sample EVI1 answer, drafted against `digest`. */
export const sample = (digest: string, lines: ReadonlyArray<string> = Object.values(evidence)) =>
  `${sampleBody}EVI1\nMANIFEST ${digest}\n${lines.join("\n")}\nEND_EVI1\n`

/** Text cut into pieces of `size` UTF-16 units (a model's deltas), as NDJSON lines. */
export const deltas = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(JSON.stringify({ type: "delta", text: text.slice(i, i + size) }))
  return out
}
