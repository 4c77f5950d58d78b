/**
 * AnchorMismatch says how to repair the anchor (issue 23 §4): where the excerpt actually is (page,
 * heading path), how many pages the capture has, and its heading paths, bounded. Captures are taken
 * from a real server on 127.0.0.1 into a run directory, then verified through the Gate.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { CaptureRef, SourceUrl } from "../src/Domain.js"
import { AnchorMismatch } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import { maxListedHeadings } from "../src/internal/anchors.js"
import * as Render from "../src/render/Render.js"
import { testServer } from "./httpServer.js"
import { fixturePath, tempDirectory } from "./support.js"

const captured = (body: string | Buffer, contentType: string) =>
  Effect.gen(function*() {
    const server = yield* testServer((_req, res) => {
      res.writeHead(200, { "content-type": contentType })
      res.end(body)
    })
    const source = server.url("/doc") as SourceUrl
    const directory = yield* tempDirectory
    const ref = yield* Effect.flatMap(Capture.Capture, (capture) => capture.capture(source)).pipe(
      Effect.provide(Layer.provideMerge(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, contentTypes: ["text/markdown", "application/pdf"] }),
        CaptureStore.layerFileSystem({ directory })
      )),
      Effect.orDie
    )
    return { directory, ref }
  })

/** The one AnchorMismatch of a report citing `snippet` at `anchor`, and the report's text rendering. */
const mismatch = (directory: string, ref: CaptureRef, snippet: string, anchor: { page?: number; heading?: Array<string> }) =>
  Effect.gen(function*() {
    const gate = yield* Gate.Gate
    const outcome = yield* Effect.either(gate.checkJsonWithCaptures(JSON.stringify({
      facts: [{ state: "cited", label: "fact", source: ref.source, captureSha256: ref.sha256, snippet, ...anchor }]
    })))
    assert.strictEqual(outcome._tag, "Left")
    const error = (outcome as any).left.failures[0].error
    assert.instanceOf(error, AnchorMismatch)
    return { error: error as AnchorMismatch, text: Render.render("text", Render.fromOutcome(outcome)) }
  }).pipe(Effect.provide(Gate.layer({ runDirectory: directory, config: { sources: [ref.source], labels: ["fact"] } })))

describe("AnchorMismatch: where the excerpt is, and the capture's anchors", () => {
  it.scopedLive("a wrong heading: the excerpt's own heading path and every heading path of the capture", () =>
    Effect.gen(function*() {
      const { directory, ref } = yield* captured(fs.readFileSync(fixturePath("extraction", "report.md")), "text/markdown")
      const online = "Online orders made up 61% of Q3 2026 unit sales."
      const { error, text } = yield* mismatch(directory, ref, online, { heading: ["Northwind Outfitters Q3 2026", "Returns"] })
      assert.strictEqual(error.reason, "outside")
      assert.deepStrictEqual(error.foundHeading, ["Northwind Outfitters Q3 2026", "Sales", "Online"])
      assert.isTrue(error.headings!.some((path) => path.join(" > ") === "Northwind Outfitters Q3 2026 > Returns"))
      assert.isTrue(error.headings!.some((path) => path.join(" > ") === "Northwind Outfitters Q3 2026 > Sales > Online"))
      assert.strictEqual(error.headingsOmitted, undefined)
      assert.include(error.message, "(it is on heading Northwind Outfitters Q3 2026 > Sales > Online)")
      assert.include(text, "excerpt is on: heading Northwind Outfitters Q3 2026 > Sales > Online")
      assert.include(text, "headings in the capture: Northwind Outfitters Q3 2026; ")
      // A heading the capture does not have: the same hints.
      const none = yield* mismatch(directory, ref, online, { heading: ["Nowhere"] })
      assert.strictEqual(none.error.reason, "no-such-anchor")
      assert.deepStrictEqual(none.error.foundHeading, ["Northwind Outfitters Q3 2026", "Sales", "Online"])
    }))

  it.scopedLive("a wrong page: the page the excerpt is on and how many pages there are", () =>
    Effect.gen(function*() {
      const { directory, ref } = yield* captured(fs.readFileSync(fixturePath("extraction", "report.pdf")), "application/pdf")
      const inventory = "Inventory on hand at 30 September 2026 was 1,180 units."
      const { error, text } = yield* mismatch(directory, ref, inventory, { page: 2 })
      assert.strictEqual(error.reason, "outside")
      assert.isDefined(error.foundPage)
      assert.notStrictEqual(error.foundPage, 2)
      assert.isAtLeast(error.pages!, error.foundPage!)
      assert.include(text, `excerpt is on: page ${error.foundPage}`)
      assert.include(text, `the capture's page count: ${error.pages}`)
      const far = yield* mismatch(directory, ref, inventory, { page: 9 })
      assert.deepStrictEqual([far.error.reason, far.error.foundPage, far.error.pages], ["no-such-anchor", error.foundPage, error.pages])
    }))

  it.scopedLive("a quote across a page break: the hint names both pages, and the fix the range that verifies", () =>
    Effect.gen(function*() {
      const { directory, ref } = yield* captured(fs.readFileSync(fixturePath("extraction", "report.pdf")), "application/pdf")
      const record = JSON.parse(fs.readFileSync(`${directory}/${CaptureStore.recordFileName(ref.source)}`, "utf8"))
      const text: string = record.text
      const pages: Array<{ number: number; start: number; end: number }> = record.pages
      const brk = text.indexOf("\f")
      assert.isAbove(brk, 12)
      const across = text.slice(brk - 12, brk + 13)
      const first = pages.find((p) => p.start <= brk - 12 && brk - 12 < p.end)!.number
      const result = yield* mismatch(directory, ref, across, { page: first })
      assert.deepStrictEqual([result.error.reason, result.error.foundPage, result.error.foundLastPage], ["outside", first, first + 1])
      assert.include(result.error.message, `(it is on pages ${first}–${first + 1})`)
      assert.include(result.text, `excerpt is on: pages ${first}–${first + 1}`)
      assert.include(result.text, `"page": {"start": ${first}, "end": ${first + 2}}`)
      // A quote on one page names one page, and no last page.
      const inside = yield* mismatch(directory, ref, text.slice(brk + 1, brk + 20), { page: first })
      assert.strictEqual(inside.error.foundLastPage, undefined)
      assert.strictEqual(inside.error.foundPage, first + 1)
    }))

  it.scopedLive("the heading list is bounded: at most maxListedHeadings paths, the rest counted", () =>
    Effect.gen(function*() {
      const markdown = Array.from({ length: maxListedHeadings + 10 }, (_, i) => `# Part ${i + 1}\n\nBody of part ${i + 1} here.\n`).join("\n")
      const { directory, ref } = yield* captured(markdown, "text/markdown")
      const { error, text } = yield* mismatch(directory, ref, "Body of part 3 here.", { heading: ["Part 4"] })
      assert.strictEqual(error.headings!.length, maxListedHeadings)
      assert.deepStrictEqual(error.headings![0], ["Part 1"])
      assert.strictEqual(error.headingsOmitted, 10)
      assert.deepStrictEqual(error.foundHeading, ["Part 3"])
      assert.include(text, "; and 10 more")
    }))
})
