import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import jsonld from "jsonld"
import type { CaptureRecord, SourceUrl } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { cli } from "./cliProcess.js"
import { plainText, testServer } from "./httpServer.js"
import { fixturePath, tempDirectory } from "./support.js"

// Characters beyond the BMP before the excerpt: code points, UTF-16 units and bytes all differ.
const text = "Mood \u{1F600}\u{1F600} report.\nThe \u{1F6B2} fleet grew to 42 bikes in Q3.\nCaf\u00e9 sales were flat.\n"

const annoContext = JSON.parse(await fsp.readFile(fixturePath("contexts", "anno.jsonld"), "utf8"))

/** The W3C context from the copy in the repository; any other URL fails (no network). */
const documentLoader = async (url: string) => {
  if (url === "http://www.w3.org/ns/anno.jsonld") return { contextUrl: undefined, documentUrl: url, document: annoContext }
  throw new Error(`no network: refusing to load ${url}`)
}

const OA = "http://www.w3.org/ns/oa#"
const RDF_VALUE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#value"
type Node = Record<string, ReadonlyArray<Record<string, unknown>>> & { "@id"?: string; "@type"?: ReadonlyArray<string> }

const write = (file: string, value: unknown) => Effect.promise(() => fsp.writeFile(file, JSON.stringify(value)))

const setup = Effect.gen(function*() {
  const server = yield* testServer(plainText(text))
  const work = yield* tempDirectory
  const source = server.url("/fleet.txt")
  const configFile = path.join(work, "pipeline.json")
  yield* write(configFile, { sources: [source], labels: ["fleet_size", "fleet_note"] })
  const runDir = path.join(work, "run")
  const ran = yield* cli(["capture", "--config", configFile, "--run-dir", runDir, "--allow-loopback-http"])
  assert.strictEqual(ran.code, 0, ran.stderr)
  const store = yield* CaptureStore.makeFileSystem({ directory: runDir })
  const record: CaptureRecord = yield* store.read(source as SourceUrl)
  return { work, source, configFile, runDir, record }
}).pipe(Effect.orDie)

/** Expands with a JSON-LD processor and returns the annotation nodes (the items list of the page). */
const expandAnnotations = (file: string) =>
  Effect.promise(async () => {
    const doc = JSON.parse(await fsp.readFile(file, "utf8"))
    const expanded = (await jsonld.expand(doc, { documentLoader: documentLoader as never })) as unknown as Array<Node>
    assert.strictEqual(expanded.length, 1)
    const collection = expanded[0]!
    assert.deepStrictEqual(collection["@type"], ["http://www.w3.org/ns/activitystreams#OrderedCollection"])
    const page = collection["http://www.w3.org/ns/activitystreams#first"]![0] as Node
    const items = page["http://www.w3.org/ns/activitystreams#items"]![0]!["@list"] as ReadonlyArray<Node>
    return { doc, items }
  })

/** Re-finds an expanded annotation's selectors in the capture text, as an annotation tool would. */
const resolve = (annotation: Node, record: CaptureRecord) => {
  const target = annotation[`${OA}hasTarget`]![0] as Node
  const selectors = target[`${OA}hasSelector`] as ReadonlyArray<Node>
  const quote = selectors.find((s) => s["@type"]![0] === `${OA}TextQuoteSelector`)!
  const position = selectors.find((s) => s["@type"]![0] === `${OA}TextPositionSelector`)!
  const exact = quote[`${OA}exact`]![0]!["@value"] as string
  const prefix = quote[`${OA}prefix`]![0]!["@value"] as string
  const suffix = quote[`${OA}suffix`]![0]!["@value"] as string
  const start = Number(position[`${OA}start`]![0]!["@value"])
  const end = Number(position[`${OA}end`]![0]!["@value"])
  assert.strictEqual(position[`${OA}start`]![0]!["@type"], "http://www.w3.org/2001/XMLSchema#nonNegativeInteger")
  // The position counts code points: the slice of the text's code points is the quote.
  const codePoints = [...record.text]
  assert.strictEqual(codePoints.slice(start, end).join(""), exact)
  // The quote with its context occurs in the text, exactly where the position says.
  const at = record.text.indexOf(prefix + exact + suffix)
  assert.isAtLeast(at, 0)
  assert.strictEqual([...record.text.slice(0, at + prefix.length)].length, start)
  return {
    exact,
    source: (target[`${OA}hasSource`]![0] as Node)["@id"],
    digest: target["urn:citegate:vocab:captureSha256"]![0]!["@value"],
    sourceDate: ((target[`${OA}hasState`]![0] as Node)[`${OA}sourceDate`]![0]!["@value"]),
    body: ((annotation[`${OA}hasBody`]![0] as Node)[RDF_VALUE]![0]!["@value"]),
    motivation: (annotation[`${OA}motivatedBy`]![0] as Node)["@id"],
    start,
    end
  }
}

describe("export --format annotations", () => {
  it.scopedLive("each verified citation of a report or answer is a Web Annotation a JSON-LD processor reads back", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const reportFile = path.join(s.work, "report.json")
      yield* write(reportFile, {
        facts: [
          { state: "cited", label: "fleet_size", source: s.source, captureSha256: s.record.sha256, snippet: "fleet grew to 42 bikes in Q3" },
          { state: "unavailable", label: "fleet_note", reason: "not in the sources" }
        ]
      })
      const out = path.join(s.work, "report.jsonld")
      const ran = yield* cli(["export", "--format", "annotations", "--config", s.configFile, "--run-dir", s.runDir, "--report", reportFile, "--out", out])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stderr, /export: 1 annotation\(s\)/)
      const { doc, items } = yield* expandAnnotations(out)
      assert.strictEqual(doc["@context"][0], "http://www.w3.org/ns/anno.jsonld")
      assert.strictEqual(items.length, 1)
      assert.deepStrictEqual(items[0]!["@type"], [`${OA}Annotation`])
      const found = resolve(items[0]!, s.record)
      assert.deepStrictEqual(found, {
        exact: "fleet grew to 42 bikes in Q3",
        source: s.source,
        digest: s.record.sha256,
        sourceDate: s.record.accessedAt,
        body: "fleet_size",
        motivation: `${OA}commenting`,
        // 22 code points before the excerpt (25 UTF-16 units: two emoji and a bicycle count one each), 28 long.
        start: 22,
        end: 50
      })

      const answerFile = path.join(s.work, "answer.json")
      yield* write(answerFile, {
        format: "citegate.answer/1",
        claims: [{
          id: "fleet",
          text: "The fleet grew to 42 bikes in Q3.",
          citations: [{ source: s.source, captureSha256: s.record.sha256, quote: "fleet grew to 42 bikes" }]
        }]
      })
      const answerOut = path.join(s.work, "answer.jsonld")
      const answered = yield* cli(["export", "--format", "annotations", "--config", s.configFile, "--run-dir", s.runDir, "--answer", answerFile, "--out", answerOut])
      assert.strictEqual(answered.code, 0, answered.stderr)
      const fromAnswer = yield* expandAnnotations(answerOut)
      assert.strictEqual(fromAnswer.items.length, 1)
      const claim = resolve(fromAnswer.items[0]!, s.record)
      assert.strictEqual(claim.body, "The fleet grew to 42 bikes in Q3.")
      assert.strictEqual(claim.exact, "fleet grew to 42 bikes")
      assert.strictEqual(fromAnswer.items[0]!["urn:citegate:vocab:citation"]![0]!["@value"], "claims[0].citations[0]")

      // A rejected report exports nothing.
      const badFile = path.join(s.work, "bad.json")
      yield* write(badFile, {
        facts: [{ state: "cited", label: "fleet_size", source: s.source, captureSha256: s.record.sha256, snippet: "fleet grew to 43 bikes" }]
      })
      const badOut = path.join(s.work, "bad.jsonld")
      const rejected = yield* cli(["export", "--format", "annotations", "--config", s.configFile, "--run-dir", s.runDir, "--report", badFile, "--out", badOut])
      assert.strictEqual(rejected.code, 1)
      assert.match(rejected.stderr, /^ReportRejected: /m)
      assert.isFalse(yield* Effect.promise(() => fsp.access(badOut).then(() => true, () => false)))
    }))

  it.scopedLive("export --format warc through the CLI: written once, never over a file, never into the run", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const out = path.join(s.work, "run.warc")
      const ran = yield* cli(["export", "--format", "warc", "--run-dir", s.runDir, "--out", out])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stderr, /export: 1 capture\(s\) as 3 WARC record\(s\)/)
      const first = yield* Effect.promise(() => fsp.readFile(out))
      assert.include(first.toString("utf8"), `WARC-Payload-Digest: sha256:${s.record.sha256}\r\n`)
      const again = yield* cli(["export", "--format", "warc", "--run-dir", s.runDir, "--out", out])
      assert.strictEqual(again.code, 2)
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readFile(out)), first)
      const inside = yield* cli(["export", "--format", "warc", "--run-dir", s.runDir, "--out", path.join(s.runDir, "x.warc")])
      assert.strictEqual(inside.code, 2)
      assert.match(inside.stderr, /OutputRefused/)
    }))
})
