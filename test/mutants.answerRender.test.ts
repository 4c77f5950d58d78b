/**
 * Mutation-killing tests for src/answer/Render.ts: the exact text, Markdown and
 * HTML of hand-built renderings (every section: footnotes, notes, retractions,
 * removed claims, uncited sentences, each kind of rejection), and the JSON.
 *
 * The expected outputs are in mutants.answerRender.golden.json: written once by
 * the renderer and read line by line before they were kept (escaping of every
 * untrusted value, numbering, plurals, the notes). A change to a rendering
 * shows up here as a diff to review, and the file is then rewritten.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { readFileSync } from "node:fs"
import * as AnswerRender from "../src/answer/Render.js"
import { decodeOptions } from "../src/Domain.js"
import { evi1, grounded, rejected, renderings, stale } from "./mutants.answerRender.support.js"

const golden: Record<string, Record<"text" | "markdown" | "html", string>> = JSON.parse(
  readFileSync(new URL("./mutants.answerRender.golden.json", import.meta.url), "utf8")
)

describe("answer renderings, exactly", () => {
  for (const [name, rendering] of Object.entries(renderings)) {
    for (const format of ["text", "markdown", "html"] as const) {
      it(`${name} as ${format}`, () => {
        assert.strictEqual(AnswerRender.render(format, rendering), golden[name]![format])
      })
    }
  }

  it("spot checks of the golden files, written out by hand", () => {
    const text = golden.grounded!.text
    assert.include(text, "citegate answer: GROUNDED (drop mode): 2 of 3 claims grounded, 3 of 5 citations verified, 1 removed\n")
    assert.include(text, "\"Stock fell.\"[2][3]  (claim \"c3\")\n")
    assert.include(text, "    RETRACTED citation 2: SnippetAbsent: Quote not found verbatim\n")
    assert.include(text, "    AMBIGUOUS ambiguous: more than one occurrence, the first is shown\n")
    assert.include(golden.oneOfOne!.text, "1 of 1 claim grounded, 1 of 1 citation verified, 0 removed")
    assert.include(golden.rejected!.text, "      quote: \"<q>\\u{202e}\"\n")
    assert.include(golden.evi1!.text, "\n  and 7 more issues not listed\n")
    assert.include(golden.grounded!.markdown, "**Claim 2.** Stock fell. \\[2\\]\\[3\\]\n")
    assert.include(golden.grounded!.markdown, "~~- Returns \\<b\\>doubled\\</b\\>.~~ (claim `c2`): removed, no citation verified")
    assert.include(golden.grounded!.html, "<p class=\"claim\" id=\"claim-2\" data-claim=\"c3\">Stock fell.<sup><a href=\"#fn-2\" id=\"ref-2\">[2]</a></sup><sup><a href=\"#fn-3\" id=\"ref-3\">[3]</a></sup></p>")
    assert.include(golden.grounded!.html, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">")
    assert.include(golden.grounded!.html, "blockquote.quote { margin: .5rem 0;")
    assert.include(golden.rejected!.html, "<code class=\"value\">&lt;q&gt;\\u{202e}</code>")
    assert.notInclude(golden.rejected!.html, "\u202e")
  })
})

describe("the JSON rendering", () => {
  it("verified and rejected results decode to the same values", () => {
    const verified = JSON.parse(AnswerRender.render("json", renderings.grounded))
    assert.deepStrictEqual([verified.format, verified.status], ["citegate.answer-result/1", "verified"])
    const decoded = Schema.decodeUnknownSync(AnswerRender.RenderedAnswer, decodeOptions)(verified)
    assert.deepStrictEqual(decoded, { format: "citegate.answer-result/1", status: "verified", answer: grounded })
    for (const error of [rejected, evi1, stale]) {
      const json = JSON.parse(AnswerRender.render("json", AnswerRender.AnswerRendering.Rejected({ error })))
      assert.deepStrictEqual([json.format, json.status, json.error._tag], ["citegate.answer-result/1", "rejected", error._tag])
      const back = Schema.decodeUnknownSync(AnswerRender.RenderedAnswer, decodeOptions)(json)
      assert.strictEqual(back.status, "rejected")
      if (back.status === "rejected") assert.deepStrictEqual(back.error, error)
    }
    assert.isTrue(AnswerRender.render("json", renderings.stale).endsWith("}\n"))
    assert.include(AnswerRender.render("json", renderings.stale), "\n  \"format\": \"citegate.answer-result/1\",\n")
    assert.deepStrictEqual(AnswerRender.toResult(renderings.stale), { format: "citegate.answer-result/1", status: "rejected", error: stale })
  })
})
