/**
 * Page and heading anchors of v2 captures (`src/internal/anchors.ts`), checked directly on
 * hand-made records: which ranges a fact's named page or heading covers, and which page and
 * innermost heading a verified span is reported on. Expected values are written by hand or found
 * by a plain linear scan in the test, never by the code under test.
 */
import { assert, describe, it } from "@effect/vitest"
import type { CaptureRecord, HeadingAnchor, PageAnchor, Span } from "../src/Domain.js"
import { locate, namedAnchors } from "../src/internal/anchors.js"

const v1: CaptureRecord = {
  format: "citegate.capture/1",
  source: "https://example.test/a.txt",
  sha256: "0".repeat(64),
  accessedAt: "2026-11-30T00:00:00Z",
  contentType: "text/plain; charset=utf-8",
  byteLength: 100,
  text: "x".repeat(100)
} as CaptureRecord

const v2 = (anchors: { readonly pages?: ReadonlyArray<PageAnchor>; readonly headings?: ReadonlyArray<HeadingAnchor> }) =>
  ({
    format: "citegate.capture/2",
    source: "https://example.test/a.pdf",
    sha256: "1".repeat(64),
    accessedAt: "2026-11-30T00:00:00Z",
    extraction: "pdf/1",
    body: { sha256: "2".repeat(64), byteLength: 100, contentType: "application/pdf" },
    ...anchors,
    text: "x".repeat(100)
  }) as CaptureRecord

const heading = (path: ReadonlyArray<string>, start: number, end: number): HeadingAnchor => ({
  level: path.length,
  text: path[path.length - 1] ?? "",
  path,
  start,
  end
})

/** Seven contiguous pages of uneven lengths covering [0, 70), and the text ending there. */
const pageBounds = [0, 4, 15, 16, 30, 47, 52, 70] as const
const pages: ReadonlyArray<PageAnchor> = pageBounds.slice(0, -1).map((start, i) => ({ number: i + 1, start, end: pageBounds[i + 1]! }))

const headings: ReadonlyArray<HeadingAnchor> = [
  heading(["Results"], 0, 50),
  heading(["Results", "Q3"], 10, 30),
  heading(["Results", "Q3", "Detail"], 12, 20),
  heading(["Results", "Q4"], 30, 50),
  heading(["Outlook"], 50, 60),
  // A second section under the same path (a repeated heading text).
  heading(["Results"], 60, 80)
]

const span = (start: number, end: number): Span => ({ start, end })

describe("namedAnchors", () => {
  it("is undefined when the fact names neither a page nor a heading, whatever the record", () => {
    assert.isUndefined(namedAnchors(v1, {}))
    assert.isUndefined(namedAnchors(v2({ pages, headings }), {}))
    assert.isUndefined(namedAnchors(v2({ pages, headings }), { page: undefined, heading: undefined }))
  })

  it("a page names its range; a page the capture lacks names none", () => {
    const record = v2({ pages, headings })
    assert.deepStrictEqual(namedAnchors(record, { page: 1 }), [{ label: "page 1", ranges: [[0, 4]] }])
    assert.deepStrictEqual(namedAnchors(record, { page: 3 }), [{ label: "page 3", ranges: [[15, 16]] }])
    assert.deepStrictEqual(namedAnchors(record, { page: 7 }), [{ label: "page 7", ranges: [[52, 70]] }])
    assert.deepStrictEqual(namedAnchors(record, { page: 8 }), [{ label: "page 8", ranges: [] }])
    assert.deepStrictEqual(namedAnchors(record, { page: 0 }), [{ label: "page 0", ranges: [] }])
    assert.deepStrictEqual(namedAnchors(v2({ headings }), { page: 1 }), [{ label: "page 1", ranges: [] }])
  })

  it("a heading path names every section with exactly that path, in order", () => {
    const record = v2({ pages, headings })
    assert.deepStrictEqual(namedAnchors(record, { heading: ["Results"] }), [{ label: "heading Results", ranges: [[0, 50], [60, 80]] }])
    assert.deepStrictEqual(namedAnchors(record, { heading: ["Results", "Q3"] }), [{ label: "heading Results > Q3", ranges: [[10, 30]] }])
    assert.deepStrictEqual(namedAnchors(record, { heading: ["Results", "Q3", "Detail"] }), [
      { label: "heading Results > Q3 > Detail", ranges: [[12, 20]] }
    ])
    // A prefix, an extension, a sibling and a path in another order name nothing.
    for (const path of [["Results", "Q"], ["Q3"], ["Results", "Q3", "Detail", "More"], ["Q3", "Results"], ["Outlook", "Q3"]]) {
      assert.deepStrictEqual(namedAnchors(record, { heading: path }), [{ label: `heading ${path.join(" > ")}`, ranges: [] }], path.join("/"))
    }
    assert.deepStrictEqual(namedAnchors(record, { heading: [] }), [{ label: "heading ", ranges: [] }])
    assert.deepStrictEqual(namedAnchors(v2({ pages }), { heading: ["Results"] }), [{ label: "heading Results", ranges: [] }])
  })

  it("a fact naming both gets the page first, then the heading", () => {
    assert.deepStrictEqual(namedAnchors(v2({ pages, headings }), { page: 2, heading: ["Outlook"] }), [
      { label: "page 2", ranges: [[4, 15]] },
      { label: "heading Outlook", ranges: [[50, 60]] }
    ])
  })

  it("a v1 capture has no anchors: the named ones have no ranges", () => {
    assert.deepStrictEqual(namedAnchors(v1, { page: 1, heading: ["Results"] }), [
      { label: "page 1", ranges: [] },
      { label: "heading Results", ranges: [] }
    ])
  })
})

describe("locate", () => {
  /** The page holding `at`, by a linear scan. */
  const pageAt = (at: number) => pages.find((p) => p.start <= at && at < p.end)?.number

  it("a span is on the page holding its first code unit: every offset of every page", () => {
    const record = v2({ pages })
    for (let start = 0; start < 70; start++) {
      for (const end of [start + 1, Math.min(start + 9, 70)]) {
        assert.deepStrictEqual(locate(record, span(start, end)), { page: pageAt(start)! }, `${start}-${end}`)
      }
    }
    assert.strictEqual(pageAt(4), 2)
    assert.strictEqual(pageAt(51), 6)
  })

  it("an empty span at the end of the text is on the last page; past it, or before the first page, on none", () => {
    assert.deepStrictEqual(locate(v2({ pages }), span(70, 70)), { page: 7 })
    assert.deepStrictEqual(locate(v2({ pages }), span(70, 71)), {})
    assert.deepStrictEqual(locate(v2({ pages }), span(75, 80)), {})
    const late = pages.map((p) => ({ ...p, start: p.start + 5, end: p.end + 5 }))
    assert.deepStrictEqual(locate(v2({ pages: late }), span(0, 3)), {})
    assert.deepStrictEqual(locate(v2({ pages: late }), span(4, 6)), {})
    assert.deepStrictEqual(locate(v2({ pages: late }), span(5, 6)), { page: 1 })
    assert.deepStrictEqual(locate(v2({ pages: [{ number: 1, start: 0, end: 10 }] }), span(10, 10)), { page: 1 })
    assert.deepStrictEqual(locate(v2({ pages: [{ number: 1, start: 0, end: 10 }] }), span(9, 10)), { page: 1 })
  })

  it("text between pages is on none of them", () => {
    // Pages with gaps (text the extraction put between them).
    const gapped: ReadonlyArray<PageAnchor> = [
      { number: 1, start: 0, end: 10 },
      { number: 2, start: 12, end: 20 },
      { number: 3, start: 25, end: 30 },
      { number: 4, start: 33, end: 40 },
      { number: 5, start: 41, end: 50 }
    ]
    const record = v2({ pages: gapped })
    const expected = (at: number) => gapped.find((p) => p.start <= at && at < p.end)?.number
    for (let start = 0; start < 52; start++) {
      const page = expected(start)
      assert.deepStrictEqual(locate(record, span(start, start + 1)), page === undefined ? {} : { page }, String(start))
    }
    assert.isUndefined(expected(10))
    assert.isUndefined(expected(22))
  })

  it("the innermost heading section holding the whole span, bounds inclusive of the section's ends", () => {
    const record = v2({ headings })
    assert.deepStrictEqual(locate(record, span(12, 18)), { heading: ["Results", "Q3", "Detail"] })
    assert.deepStrictEqual(locate(record, span(12, 20)), { heading: ["Results", "Q3", "Detail"] })
    assert.deepStrictEqual(locate(record, span(11, 20)), { heading: ["Results", "Q3"] })
    assert.deepStrictEqual(locate(record, span(12, 21)), { heading: ["Results", "Q3"] })
    assert.deepStrictEqual(locate(record, span(10, 30)), { heading: ["Results", "Q3"] })
    assert.deepStrictEqual(locate(record, span(25, 35)), { heading: ["Results"] })
    assert.deepStrictEqual(locate(record, span(30, 31)), { heading: ["Results", "Q4"] })
    assert.deepStrictEqual(locate(record, span(0, 50)), { heading: ["Results"] })
    assert.deepStrictEqual(locate(record, span(45, 55)), {})
    assert.deepStrictEqual(locate(record, span(55, 58)), { heading: ["Outlook"] })
    assert.deepStrictEqual(locate(record, span(70, 80)), { heading: ["Results"] })
    assert.deepStrictEqual(locate(record, span(80, 81)), {})
    // The innermost wins whichever order the sections are listed in.
    assert.deepStrictEqual(locate(v2({ headings: [...headings].reverse() }), span(12, 18)), { heading: ["Results", "Q3", "Detail"] })
  })

  it("both anchors together; none for a v1 capture or a v2 capture without anchors", () => {
    assert.deepStrictEqual(locate(v2({ pages, headings }), span(12, 14)), { page: 2, heading: ["Results", "Q3", "Detail"] })
    assert.deepStrictEqual(locate(v2({ pages, headings }), span(75, 78)), { heading: ["Results"] })
    assert.deepStrictEqual(locate(v2({}), span(0, 5)), {})
    assert.deepStrictEqual(locate(v2({ pages: [], headings: [] }), span(0, 5)), {})
    assert.deepStrictEqual(locate(v1, span(0, 5)), {})
  })
})
