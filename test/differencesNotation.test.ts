/**
 * A diagnostic's `differences` is written in escape notation (`\u{a0}` for a
 * no-break space, `\\` for a backslash of either text). Every rendering shows
 * that notation once: a no-break space reads `\u{a0}`, never `\\u{a0}`.
 */
import { assert, describe, it } from "@effect/vitest"
import { nearestPassage } from "../src/anchor/Diagnostic.js"
import { differences } from "../src/anchor/Differences.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import * as Repair from "../src/render/Repair.js"
import { accessedAt } from "./support.js"

const record = makeCaptureRecord({
  source: "https://reports.harbour.test/transit.txt" as SourceUrl,
  text: "Ridership reached 48.2\u00a0million trips in 2026, stored under C:\\data\\2026.",
  accessedAt,
  contentType: "text/plain"
})

const absent = (snippet: string) => {
  const nearest = nearestPassage(record.text, snippet)
  assert.isDefined(nearest)
  return new SnippetAbsent({ source: record.source, captureSha256: record.sha256, snippet, nearest: nearest! })
}

const rejected = (error: SnippetAbsent) =>
  Rendering.Rejected({
    error: new ReportRejected({ failures: [{ index: 0, label: "ridership", error }] as unknown as ReportRejected["failures"] })
  })

describe("differences in escape notation", () => {
  it("a backslash of either text is doubled, so each single backslash begins an escape", () => {
    assert.strictEqual(differences("C:\\data", "C:\\date"), "C:\\\\[-data-]{+date+}")
    assert.strictEqual(differences("a\\b", "a b"), "a[-\\\\-]{+\u2420+}b")
  })

  it("text, Markdown, HTML and repair renderings show a no-break space as \\u{a0}, escaped once", () => {
    const error = absent("Ridership reached 48.2 million trips in 2026")
    assert.include(error.nearest!.differences, "{+\\u{a0}+}")
    const rendering = rejected(error)
    for (const format of ["text", "markdown", "html"] as const) {
      const out = Render.render(format, rendering)
      assert.include(out, "{+\\u{a0}+}", format)
      assert.notInclude(out, "\\\\u{a0}", format)
    }
    const repair = Repair.renderReport(rejected(error))
    assert.include(repair, "{+\\u{a0}+}")
    assert.notInclude(repair, "\\\\u{a0}")
  })

  it("a literal backslash still reads as one doubled backslash, and controls stay visible", () => {
    const error = absent("stored under C:\\data\\2025.")
    const text = Render.render("text", rejected(error))
    assert.include(text, "C:\\\\data\\\\")
    assert.notInclude(text, "C:\\\\\\\\data")
  })
})
