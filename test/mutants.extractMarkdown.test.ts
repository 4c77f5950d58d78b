/**
 * `markdown/1` on the extractor itself (its parser runs in the worker), and the
 * section rule shared with `html/1`. Offsets and paths are counted by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ExtractionTooLarge } from "../src/Errors.js"
import type { ExtractionLimits } from "../src/extract/Extraction.js"
import * as Markdown from "../src/extract/Markdown.js"
import { failureOf } from "./mutants.support.js"

const source = "https://example.com/notes.md"
const limits: ExtractionLimits = { maxPages: 10, maxCharacters: 10_000, maxDepth: 64 }

describe("sections", () => {
  it("a section runs to the next heading of the same or a higher level; paths are the open headings", () => {
    const anchors = Markdown.sections([
      { level: 1, text: "A", start: 0 },
      { level: 2, text: "B", start: 5 },
      { level: 3, text: "C", start: 8 },
      { level: 2, text: "D", start: 12 },
      { level: 3, text: "E", start: 15 },
      { level: 1, text: "F", start: 20 },
      { level: 3, text: "G", start: 25 },
      { level: 2, text: "H", start: 27 }
    ], 30)
    assert.deepStrictEqual(anchors, [
      { level: 1, text: "A", path: ["A"], start: 0, end: 20 },
      { level: 2, text: "B", path: ["A", "B"], start: 5, end: 12 },
      { level: 3, text: "C", path: ["A", "B", "C"], start: 8, end: 12 },
      { level: 2, text: "D", path: ["A", "D"], start: 12, end: 20 },
      { level: 3, text: "E", path: ["A", "D", "E"], start: 15, end: 20 },
      { level: 1, text: "F", path: ["F"], start: 20, end: 30 },
      { level: 3, text: "G", path: ["F", "G"], start: 25, end: 27 },
      { level: 2, text: "H", path: ["F", "H"], start: 27, end: 30 }
    ])
    assert.deepStrictEqual(Markdown.sections([], 9), [])
  })
})

describe("markdown/1", () => {
  it.live("the text is the body as is; ATX and setext headings are anchors", () =>
    Effect.gen(function*() {
      // Offsets: "# Title" 0, "Intro *text*" 8, blank line 21, "Part" 22 (setext, underline "----" 27),
      // "body" 32, "### Deep" 37, "x" 46, blank line 48, "Next" 49 (setext, "====" 54), "## *Em* `code`" 59, end 73.
      const text = "# Title\nIntro *text*\n\nPart\n----\nbody\n### Deep\nx\n\nNext\n====\n## *Em* `code`"
      const extracted = yield* Markdown.extract(source, text, limits)
      assert.deepStrictEqual(extracted, {
        extraction: "markdown/1",
        text,
        headings: [
          { level: 1, text: "Title", path: ["Title"], start: 0, end: 49 },
          { level: 2, text: "Part", path: ["Title", "Part"], start: 22, end: 49 },
          { level: 3, text: "Deep", path: ["Title", "Part", "Deep"], start: 37, end: 49 },
          { level: 1, text: "Next", path: ["Next"], start: 49, end: 73 },
          { level: 2, text: "Em code", path: ["Next", "Em code"], start: 59, end: 73 }
        ]
      })
    }))

  it.live("a leading BOM stays in the text and moves every heading by one code unit", () =>
    Effect.gen(function*() {
      // "\ufeff" 0, "# A" 1, "text" 5, "## B" 10, length 15.
      const text = "\ufeff# A\ntext\n## B\n"
      const extracted = yield* Markdown.extract(source, text, limits)
      assert.strictEqual(extracted.text, text)
      assert.deepStrictEqual(extracted.headings, [
        { level: 1, text: "A", path: ["A"], start: 1, end: 15 },
        { level: 2, text: "B", path: ["A", "B"], start: 10, end: 15 }
      ])
      // A BOM anywhere else is text: no shift.
      const later = yield* Markdown.extract(source, "x\n# A\ufeff", limits)
      assert.deepStrictEqual(later.headings, [{ level: 1, text: "A\ufeff", path: ["A\ufeff"], start: 2, end: 6 }])
    }))

  it.live("exactly maxCharacters passes; one more fails before parsing", () =>
    Effect.gen(function*() {
      const text = "# Heading\n" + "x".repeat(10) // 20 code units
      const extracted = yield* Markdown.extract(source, text, { ...limits, maxCharacters: 20 })
      assert.strictEqual(extracted.text, text)
      const error = yield* failureOf(Markdown.extract(source, text, { ...limits, maxCharacters: 19 }))
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual({ ...error }, {
        _tag: "ExtractionTooLarge",
        source,
        format: "markdown",
        cap: "maxCharacters",
        limit: 19
      })
    }))
})
