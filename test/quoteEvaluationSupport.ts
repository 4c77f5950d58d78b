/**
 * The quote evaluation of docs/verification.md: quotes a drafter writes,
 * checked by the Gate against the text each extraction gives, under `exact`
 * and `normalized/1`.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import type { Extracted } from "../src/extract/Extraction.js"
import * as Html from "../src/extract/Html.js"
import * as Html2 from "../src/extract/Html2.js"
import * as Markdown from "../src/extract/Markdown.js"
import * as Markdown2 from "../src/extract/Markdown2.js"
import { accessedAt, fixturePath, gateFor, runDirectoryWith } from "./support.js"

const limits = { maxPages: 10, maxCharacters: 1_000_000, maxDepth: 512 }

export const fixtures = {
  html: fs.readFileSync(fixturePath("extraction", "drafting.html"), "utf8"),
  markdown: fs.readFileSync(fixturePath("extraction", "drafting.md"), "utf8")
} as const

export type Kind = keyof typeof fixtures
export type Generation = "v1" | "v2"

/** The capture text of a fixture under html/1 + markdown/1 (v1) or html/2 + markdown/2 (v2). */
export const captureText = (kind: Kind, generation: Generation): Effect.Effect<string, unknown> => {
  const source = `https://eval.test/drafting.${kind}`
  const body = fixtures[kind]
  const extracted: Effect.Effect<Extracted, unknown> = kind === "html"
    ? (generation === "v1" ? Html.extract(source, body, limits, "utf-8") : Html2.extract(source, body, limits, "utf-8"))
    : (generation === "v1" ? Markdown.extract(source, body, limits) : Markdown2.extract(source, body, limits))
  return Effect.map(extracted, (e) => e.text)
}

/** Whole sentences, line by line: what a drafter copies. Pieces without a letter or digit are not quotes. */
export const sentences = (text: string): Array<string> =>
  text.split("\n").flatMap((line) => line.split(/(?<=[.!?])\s+(?=\S)/u)).map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s))

/** How many of the quotes the Gate accepts against `text`, under `matching`. */
export const verifiedCount = (text: string, quotes: ReadonlyArray<string>, matching: "exact" | "normalized/1") =>
  Effect.gen(function*() {
    const record = makeCaptureRecord({ source: "https://eval.test/capture" as SourceUrl, text, accessedAt, contentType: "text/plain" })
    const directory = yield* runDirectoryWith([record])
    const labels = quotes.map((_, i) => `q${i}`)
    const gate = yield* gateFor(directory, {
      sources: [record.source],
      labels,
      verify: { maxFacts: 1_000, mode: "drop", matching }
    })
    const report = yield* gate.check({
      facts: quotes.map((snippet, i) => ({ state: "cited", label: labels[i], source: record.source, captureSha256: record.sha256, snippet }))
    })
    return report.facts.length
  })
