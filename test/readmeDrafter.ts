/**
 * The drafting model of the README loop (test/readme.curl.test.ts), as a command: reads the
 * hand-off the README's commands saved in the working directory (prompt.md, documents.json) and
 * writes answer.evi1 and report.json, copying sentences from exactly those texts.
 * Usage: readmeDrafter.ts <label>
 */
import { readFileSync, writeFileSync } from "node:fs"
import { type DocumentsOutput, draftEvi1, sentencesOf } from "./handoffDrafter.js"

const label = process.argv[2] ?? "unused"
writeFileSync("answer.evi1", draftEvi1(readFileSync("prompt.md", "utf8")))
const documents = JSON.parse(readFileSync("documents.json", "utf8")) as DocumentsOutput
const first = documents.documents.find((d) => d.status === "captured")!
const [sentence] = sentencesOf(first.text!)
writeFileSync("report.json", JSON.stringify({
  facts: [{ state: "cited", label, source: first.source, captureSha256: first.captureSha256, snippet: sentence!.text }]
}))
