import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { accessedAt, INVENTORY, SALES } from "./support.js"

/** Text beyond the BMP: every emoji is two UTF-16 code units but one code point. */
export const EMOJI = "https://reports.northwind.test/emoji.txt" as SourceUrl
export const emojiRecord = makeCaptureRecord({
  source: EMOJI,
  text: "Mood 😀😀 report.\nThe 🚲 fleet grew to 42 bikes in Q3.\nThe fleet grew to 42 bikes again.\n",
  accessedAt,
  contentType: "text/plain"
})

export const OUTLOOK = "https://reports.northwind.test/q4-outlook.txt" as SourceUrl

/** Sources 1-3 captured in the tests' runs, 4 never captured. */
export const configJson = { sources: [SALES, INVENTORY, EMOJI, OUTLOOK], labels: ["unused"] }
export const config = configJson as unknown as PipelineConfig
