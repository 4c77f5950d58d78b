/**
 * The renderings of src/answer/Render.ts written out by hand, line by line, from
 * the format rules (footnote numbering, plurals, escaping per format, the notes),
 * for every hand-built rendering of mutants.answerRender.support: unlike the
 * golden file, no expected value here was produced by the renderer.
 */
import { assert, describe, it } from "@effect/vitest"
import * as AnswerRender from "../src/answer/Render.js"
import { InvalidAnswer, StaleManifest } from "../src/Errors.js"
import { renderings, shaA } from "./mutants.answerRender.support.js"

const A = "https://answers.northwind.test/a.txt"
const B = "https://answers.northwind.test/b.txt"
const at = "2026-10-01T09:30:00.000Z"
const prov =
  "Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed."
const normalized =
  "matched under normalized/1 (opt-in), NOT verbatim: the quote equals the capture's text only after normalisation (case, spacing, quotes, dashes, compatibility forms)"
const absentFix = "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or drop the claim."
const anchorFix = "Captures carry PDF pages and heading paths but no content blocks: cite the quote with its page or heading, or without an anchor."
const spanFix = "The quote is elsewhere in the capture: cite code points 10–21 (end exclusive; the first occurrence), or give the quote without indices."
const staleFix = "Draft against this run's manifest and name its digest (MANIFEST line or --manifest-digest); numbers are never re-bound."
const orphanFix = "Put the sources directly before the claim id: [n]{cX}."
// The EVI1 fix as Describe gives it: `… escape only \", \\ and \n.`
const malformedFix = String.raw`Evidence lines are cX|n|"quote" between EVI1 and END_EVI1; escape only \", \\ and \n.`

const lines = (...ls: Array<string>) => ls.join("\n")

// The page shell and style, as the answer pages must carry them (CSP: nothing loaded, no script).
const style = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
.outcome { padding: .75rem 1rem; border-radius: 6px; font-weight: 600; }
.outcome.grounded { background: #e7f6ea; border: 1px solid #3a9d52; }
.outcome.no_evidence, .outcome.rejected { background: #fdecea; border: 1px solid #c0392b; }
.note { color: #555; font-style: italic; }
p.claim, p.removed { white-space: pre-wrap; }
del { color: #8a1c1c; }
blockquote.quote { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; }
code.value { white-space: pre-wrap; word-break: break-word; background: #f1f1f1; }
.failure { border-left: 4px solid #c0392b; padding-left: .75rem; margin: .5rem 0; }
sup a { text-decoration: none; }
`
/** The CSS a page with captured sources adds: the capture box, highlights, and footnote k's target outline. */
const capturesStyle = (...footnotes: Array<number>) => `
.capture pre { white-space: pre-wrap; word-break: break-word; background: #fafafa; border: 1px solid #ddd; padding: 1rem; max-height: 30rem; overflow: auto; }
mark { background: #ffe066; }
mark a { color: inherit; text-decoration: none; }
.ctl { color: #c92a2a; font-size: 0.85em; }
.page-marker { display: block; border-top: 1px dashed #999; color: #666; font: 12px system-ui, sans-serif; user-select: none; }
.page-marker::before { content: "page " attr(data-page); }
${footnotes.map((n) => `#fn-${n}-excerpt:target ~ mark[data-facts~="${n}"] { background: #ffb347; outline: 2px solid #d9480f; }`).join("\n")}
`
const notAvailable = (k: number, source: string) => [
  `<section class="capture" id="capture-${k}">`,
  `<h3>[${k}] <code>${source}</code></h3>`,
  "<p>Capture text not available to this renderer.</p>",
  "</section>"
]
const pageStyled = (title: string, extra: string, ...body: Array<string>) =>
  lines(
    "<!doctype html>",
    "<html lang=\"en\">",
    "<head>",
    "<meta charset=\"utf-8\">",
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
    "<meta name=\"referrer\" content=\"no-referrer\">",
    `<title>${title}</title>`,
    `<style>${style}${extra}</style>`,
    "</head>",
    "<body>",
    ...body,
    "</body>",
    "</html>",
    ""
  )
const page = (title: string, ...body: Array<string>) =>
  lines(
    "<!doctype html>",
    "<html lang=\"en\">",
    "<head>",
    "<meta charset=\"utf-8\">",
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
    "<meta name=\"referrer\" content=\"no-referrer\">",
    `<title>${title}</title>`,
    `<style>${style}</style>`,
    "</head>",
    "<body>",
    ...body,
    "</body>",
    "</html>",
    ""
  )
const failure = (tag: string, heading: string, title: string, fields: Array<[string, string]>, fix: string) =>
  lines(
    `<div class="failure" data-tag="${tag}">`,
    `<div>${heading}<code>${tag}</code>: ${title}</div>`,
    `<ul>${fields.map(([n, v]) => `<li>${n}: <code class="value">${v}</code></li>`).join("")}</ul>`,
    `<div>What to do: ${fix}</div>`,
    "</div>"
  )

describe("text", () => {
  it("a grounded answer in drop mode: claims with footnote marks, retractions, footnotes with notes, removed claims, uncited sentences", () => {
    assert.strictEqual(
      AnswerRender.render("text", renderings.grounded),
      lines(
        "citegate answer: GROUNDED (drop mode): 2 of 3 claims grounded, 3 of 5 citations verified, 1 removed",
        prov,
        "",
        "\"Sales *rose* to 4,210.\"[1]  (claim \"c<1>\")",
        "    RETRACTED citation 2: SnippetAbsent: Quote not found verbatim",
        "\"Stock fell.\"[2][3]  (claim \"c3\")",
        "",
        "Footnotes:",
        "[1] VERIFIED QUOTE \"4,210 units\"",
        `    source  ${A}`,
        `    capture sha256 a1a1a1a1a1a1…  accessed ${at}  span 10–21`,
        "[2] VERIFIED QUOTE \"stock \\\"fell\\\"\"",
        `    source  ${B}`,
        `    capture sha256 b2b2b2b2b2b2…  accessed ${at}  span 0–12`,
        "    AMBIGUOUS ambiguous: more than one occurrence, the first is shown",
        `    MATCH     ${normalized}`,
        "[3] VERIFIED QUOTE \"fell\"",
        `    source  ${A}`,
        `    capture sha256 a1a1a1a1a1a1…  accessed ${at}  span 30–34`,
        "",
        "Removed claims (1), with their text:",
        "  REMOVED \"c2\": \"- Returns <b>doubled</b>.\"",
        "    citation 1: SnippetAbsent: Quote not found verbatim",
        `      source: ${A}`,
        "      capture: a1a1a1a1a1a1…",
        "      quote: \"doubled\"",
        `      fix: ${absentFix}`,
        "    citation 2: AnchorUnsupported: Anchor cannot be checked",
        `      source: ${B}`,
        "      anchor: page",
        "      value: 2–3",
        `      fix: ${anchorFix}`,
        "",
        "Uncited factual-looking sentences (2):",
        "  UncitedSentence: \"An uncited <i>factual</i> sentence of some length here.\"",
        "  UncitedSentence (line 3): \"Another one on a line.\"",
        ""
      )
    )
  })

  it("no evidence: the headline, no claims, an empty footnote list; one of one: singular nouns", () => {
    assert.strictEqual(
      AnswerRender.render("text", renderings.noEvidence),
      lines(
        "citegate answer: NO EVIDENCE (reject mode): no claim was grounded; nothing here is grounded",
        prov,
        "",
        "(no grounded claims)",
        "",
        "Footnotes:",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("text", renderings.oneOfOne),
      lines(
        "citegate answer: GROUNDED (reject mode): 1 of 1 claim grounded, 1 of 1 citation verified, 0 removed",
        prov,
        "",
        "\"One.\"[1]  (claim \"only\")",
        "",
        "Footnotes:",
        "[1] VERIFIED QUOTE \"one\"",
        `    source  ${A}`,
        `    capture sha256 a1a1a1a1a1a1…  accessed ${at}  span 0–3`,
        ""
      )
    )
  })

  it("rejections: each failed citation with its fields (controls made visible), uncited sentences; EVI1 issues without their line field; a stale manifest", () => {
    assert.strictEqual(
      AnswerRender.render("text", renderings.rejected),
      lines(
        "citegate answer: REJECTED: AnswerRejected: Answer rejected; nothing in this answer is accepted",
        "  claim \"c<1>\" citation 2: SpanMismatch: Quote is not at the cited position",
        `      source: ${A}`,
        "      capture: a1a1a1a1a1a1…",
        "      claimed code points: 3–14",
        "      first found at code point: 10",
        "      quote: \"4,210\\u{000a}units\"",
        `      fix: ${spanFix}`,
        "  claim \"c3\" citation 1: SnippetAbsent: Quote not found verbatim",
        `      source: ${B}`,
        "      capture: b2b2b2b2b2b2…",
        "      quote: \"<q>\\u{202e}\"",
        `      fix: ${absentFix}`,
        "  UncitedSentence (line 4): \"Uncited <u>and</u> long.\"",
        "  UncitedSentence: \"No line.\"",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("text", renderings.evi1),
      lines(
        "citegate answer: REJECTED: Evi1Invalid: EVI1 protocol violated; nothing in this answer is accepted",
        "  line 3: Evi1MalformedLine: Malformed line",
        "      detail: bad <line>",
        `      fix: ${malformedFix}`,
        "  line 5: Evi1OrphanMarker: Claim id without citation",
        "      claim: c9",
        `      fix: ${orphanFix}`,
        "  and 7 more issues not listed",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("text", renderings.stale),
      lines(
        "citegate answer: REJECTED: StaleManifest: Answer drafted against another manifest; nothing in this answer is accepted",
        "  answer names: b2b2b2b2b2b2…",
        `  this run's manifest: ${"a1".repeat(32)}`,
        `  fix: ${staleFix}`,
        ""
      )
    )
    // No manifest named: the other title, and "(none)" for the digest.
    const unnamed = AnswerRender.AnswerRendering.Rejected({ error: new StaleManifest({ named: null, current: shaA }) })
    assert.strictEqual(
      AnswerRender.render("text", unnamed),
      lines(
        "citegate answer: REJECTED: StaleManifest: Answer names no manifest; nothing in this answer is accepted",
        "  answer names: (none)",
        `  this run's manifest: ${"a1".repeat(32)}`,
        `  fix: ${staleFix}`,
        ""
      )
    )
  })
})

describe("text: an invalid answer", () => {
  it("each issue's path and message; a top-level key named sentence reads like any other path", () => {
    const invalid = new InvalidAnswer({ issues: [{ path: ["sentence"], message: "is unexpected" }, { path: ["claims", 0, "id"], message: "is missing" }], omitted: 2 })
    assert.strictEqual(
      AnswerRender.render("text", AnswerRender.AnswerRendering.Rejected({ error: invalid })),
      lines(
        "citegate answer: REJECTED: InvalidAnswer: Invalid answer; nothing in this answer is accepted",
        "  sentence: is unexpected",
        "  claims[0].id: is missing",
        "  …: and 2 more issues not listed",
        "  fix: Correct the answer at the paths shown.",
        ""
      )
    )
  })
})

describe("Markdown", () => {
  it("a grounded answer: claim numbers start the lines, footnotes as code blocks with their notes, removed claims struck out", () => {
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.grounded),
      lines(
        "# Verified answer",
        "",
        "**GROUNDED (drop mode): 2 of 3 claims grounded, 3 of 5 citations verified, 1 removed**",
        "",
        `*${prov}*`,
        "",
        "**Claim 1.** Sales \\*rose\\* to 4,210. \\[1\\]",
        "",
        "- *Retracted citation 2:* SnippetAbsent: Quote not found verbatim",
        "",
        "**Claim 2.** Stock fell. \\[2\\]\\[3\\]",
        "",
        "## Footnotes",
        "",
        "**\\[1\\]** verified quote (verbatim from the capture):",
        "",
        "```text",
        "4,210 units",
        "```",
        "",
        `Source: <${A}>  `,
        `Capture: sha256 \`a1a1a1a1a1a1\`…, accessed ${at}, characters 10–21`,
        "",
        "**\\[2\\]** verified quote (NOT verbatim: matched under normalized/1), as the answer gives it:",
        "",
        "```text",
        "stock \"fell\"",
        "```",
        "",
        `Source: <${B}>  `,
        `Capture: sha256 \`b2b2b2b2b2b2\`…, accessed ${at}, characters 0–12`,
        "",
        "**ambiguous: more than one occurrence, the first is shown.**",
        "",
        `**${normalized}.**`,
        "",
        "**\\[3\\]** verified quote (verbatim from the capture):",
        "",
        "```text",
        "fell",
        "```",
        "",
        `Source: <${A}>  `,
        `Capture: sha256 \`a1a1a1a1a1a1\`…, accessed ${at}, characters 30–34`,
        "",
        "## Removed claims (1)",
        "",
        "~~- Returns \\<b\\>doubled\\</b\\>.~~ (claim `c2`): removed, no citation verified",
        "",
        "### Citation 1: `SnippetAbsent`",
        "",
        `- source: \`${A}\``,
        "- capture: `a1a1a1a1a1a1…`",
        "",
        "The quote, exactly as given:",
        "",
        "```text",
        "doubled",
        "```",
        "",
        `- what to do: ${absentFix}`,
        "",
        "### Citation 2: `AnchorUnsupported`",
        "",
        `- source: \`${B}\``,
        "- anchor: `page`",
        "- value: `2–3`",
        `- what to do: ${anchorFix}`,
        "",
        "## Uncited factual-looking sentences (2)",
        "",
        "- sentence: An uncited \\<i\\>factual\\</i\\> sentence of some length here.",
        "- line 3, sentence: Another one on a line.",
        ""
      )
    )
  })

  it("no evidence: no footnote section; one of one", () => {
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.noEvidence),
      lines(
        "# Verified answer",
        "",
        "**NO EVIDENCE (reject mode): no claim was grounded; nothing here is grounded**",
        "",
        `*${prov}*`,
        "",
        "*No grounded claims.*",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.oneOfOne),
      lines(
        "# Verified answer",
        "",
        "**GROUNDED (reject mode): 1 of 1 claim grounded, 1 of 1 citation verified, 0 removed**",
        "",
        `*${prov}*`,
        "",
        "**Claim 1.** One. \\[1\\]",
        "",
        "## Footnotes",
        "",
        "**\\[1\\]** verified quote (verbatim from the capture):",
        "",
        "```text",
        "one",
        "```",
        "",
        `Source: <${A}>  `,
        `Capture: sha256 \`a1a1a1a1a1a1\`…, accessed ${at}, characters 0–3`,
        ""
      )
    )
  })

  it("rejections: a section per failed citation with the quote as a block; EVI1 issues per line; a stale manifest", () => {
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.rejected),
      lines(
        "# Answer rejected",
        "",
        "`AnswerRejected`: Answer rejected. Nothing in this answer is accepted.",
        "",
        "## Claim `c<1>`, citation 2: `SpanMismatch`",
        "",
        `- source: \`${A}\``,
        "- capture: `a1a1a1a1a1a1…`",
        "- claimed code points: `3–14`",
        "- first found at code point: `10`",
        "",
        "The quote, exactly as given:",
        "",
        "```text",
        "4,210",
        "units",
        "```",
        "",
        `- what to do: ${spanFix}`,
        "",
        "## Claim `c3`, citation 1: `SnippetAbsent`",
        "",
        `- source: \`${B}\``,
        "- capture: `b2b2b2b2b2b2…`",
        "",
        "The quote, exactly as given:",
        "",
        "```text",
        "<q>\\u{202e}",
        "```",
        "",
        `- what to do: ${absentFix}`,
        "",
        "- UncitedSentence (line 4): Uncited \\<u\\>and\\</u\\> long.",
        "- UncitedSentence: No line.",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.evi1),
      lines(
        "# Answer rejected",
        "",
        "`Evi1Invalid`: EVI1 protocol violated. Nothing in this answer is accepted.",
        "",
        "## Line 3: `Evi1MalformedLine`",
        "",
        "- line: `3`",
        "- detail: `bad <line>`",
        // Escape.markdown runs `terminal` first (a backslash doubled), then escapes each backslash and `|`.
        String.raw`- what to do: Evidence lines are cX\|n\|"quote" between EVI1 and END_EVI1; escape only \\\\", \\\\\\\\ and \\\\n.`,
        "",
        "## Line 5: `Evi1OrphanMarker`",
        "",
        "- line: `5`",
        "- claim: `c9`",
        "- what to do: Put the sources directly before the claim id: \\[n\\]{cX}.",
        "",
        "*and 7 more issues not listed*",
        ""
      )
    )
    assert.strictEqual(
      AnswerRender.render("markdown", renderings.stale),
      lines(
        "# Answer rejected",
        "",
        "`StaleManifest`: Answer drafted against another manifest. Nothing in this answer is accepted.",
        "",
        "- answer names: `b2b2b2b2b2b2…`",
        `- this run's manifest: \`${"a1".repeat(32)}\``,
        `- what to do: ${staleFix}`,
        ""
      )
    )
  })
})

describe("HTML", () => {
  it("a grounded answer: the whole page", () => {
    assert.strictEqual(
      AnswerRender.render("html", renderings.grounded),
      pageStyled(
        "citegate: verified answer",
        capturesStyle(1, 2, 3),
        "<h1>Verified answer</h1>",
        "<p class=\"outcome grounded\">GROUNDED (drop mode): 2 of 3 claims grounded, 3 of 5 citations verified, 1 removed</p>",
        `<p class="note">${prov}</p>`,
        "<p class=\"claim\" id=\"claim-0\" data-claim=\"c&lt;1&gt;\">Sales *rose* to 4,210.<sup><a href=\"#fn-1\" id=\"ref-1\">[1]</a></sup></p>",
        failure("SnippetAbsent", "Retracted citation 2: ", "Quote not found verbatim", [["source", A], ["capture", "a1a1a1a1a1a1…"], ["quote", "5,000"]], absentFix),
        "<p class=\"claim\" id=\"claim-2\" data-claim=\"c3\">Stock fell.<sup><a href=\"#fn-2\" id=\"ref-2\">[2]</a></sup><sup><a href=\"#fn-3\" id=\"ref-3\">[3]</a></sup></p>",
        "<h2>Footnotes</h2>",
        "<ol class=\"footnotes\">",
        "<li id=\"fn-1\"><blockquote class=\"quote\">4,210 units</blockquote>",
        `Source <code>${A}</code> · capture sha256 <code>a1a1a1a1a1a1…</code> · accessed ${at} · characters 10–21` +
          ` <a href="#ref-1">↩</a></li>`,
        "<li id=\"fn-2\"><blockquote class=\"quote\">stock &quot;fell&quot;</blockquote>",
        `Source <code>${B}</code> · capture sha256 <code>b2b2b2b2b2b2…</code> · accessed ${at} · characters 0–12` +
          " · <strong>ambiguous: more than one occurrence, the first is shown</strong>" +
          ` · <strong>${normalized.replace("'", "&#39;")}</strong>` +
          ` <a href="#ref-2">↩</a></li>`,
        "<li id=\"fn-3\"><blockquote class=\"quote\">fell</blockquote>",
        `Source <code>${A}</code> · capture sha256 <code>a1a1a1a1a1a1…</code> · accessed ${at} · characters 30–34` +
          ` <a href="#ref-3">↩</a></li>`,
        "</ol>",
        "<h2>Removed claims (1)</h2>",
        "<p class=\"removed\" data-claim=\"c2\"><del>- Returns &lt;b&gt;doubled&lt;/b&gt;.</del> (removed: no citation verified)</p>",
        failure("SnippetAbsent", "Citation 1: ", "Quote not found verbatim", [["source", A], ["capture", "a1a1a1a1a1a1…"], ["quote", "doubled"]], absentFix),
        failure("AnchorUnsupported", "Citation 2: ", "Anchor cannot be checked", [["source", B], ["anchor", "page"], ["value", "2–3"]], anchorFix),
        "<h2>Uncited factual-looking sentences (2)</h2>",
        "<ul>",
        "<li><code class=\"value\">An uncited &lt;i&gt;factual&lt;/i&gt; sentence of some length here.</code></li>",
        "<li>line 3: <code class=\"value\">Another one on a line.</code></li>",
        "</ul>",
        "<h2>Captured sources</h2>",
        ...notAvailable(1, A),
        ...notAvailable(2, B)
      )
    )
  })

  it("no evidence and one of one: the whole pages", () => {
    assert.strictEqual(
      AnswerRender.render("html", renderings.noEvidence),
      page(
        "citegate: verified answer",
        "<h1>Verified answer</h1>",
        "<p class=\"outcome no_evidence\">NO EVIDENCE (reject mode): no claim was grounded; nothing here is grounded</p>",
        `<p class="note">${prov}</p>`
      )
    )
    assert.strictEqual(
      AnswerRender.render("html", renderings.oneOfOne),
      pageStyled(
        "citegate: verified answer",
        capturesStyle(1),
        "<h1>Verified answer</h1>",
        "<p class=\"outcome grounded\">GROUNDED (reject mode): 1 of 1 claim grounded, 1 of 1 citation verified, 0 removed</p>",
        `<p class="note">${prov}</p>`,
        "<p class=\"claim\" id=\"claim-0\" data-claim=\"only\">One.<sup><a href=\"#fn-1\" id=\"ref-1\">[1]</a></sup></p>",
        "<h2>Footnotes</h2>",
        "<ol class=\"footnotes\">",
        "<li id=\"fn-1\"><blockquote class=\"quote\">one</blockquote>",
        `Source <code>${A}</code> · capture sha256 <code>a1a1a1a1a1a1…</code> · accessed ${at} · characters 0–3` +
          ` <a href="#ref-1">↩</a></li>`,
        "</ol>",
        "<h2>Captured sources</h2>",
        ...notAvailable(1, A)
      )
    )
  })

  it("rejections: every failure escaped, uncited sentences described, EVI1 issues by line with the omitted count, a stale manifest", () => {
    assert.strictEqual(
      AnswerRender.render("html", renderings.rejected),
      page(
        "citegate: answer rejected",
        "<h1>Answer rejected</h1>",
        "<p class=\"outcome rejected\"><code>AnswerRejected</code>: Answer rejected. Nothing in this answer is accepted.</p>",
        failure(
          "SpanMismatch",
          "Claim <code class=\"value\">c&lt;1&gt;</code>, citation 2: ",
          "Quote is not at the cited position",
          [["source", A], ["capture", "a1a1a1a1a1a1…"], ["claimed code points", "3–14"], ["first found at code point", "10"], ["quote", "4,210\\u{000a}units"]],
          "The quote is elsewhere in the capture: cite code points 10–21 (end exclusive; the first occurrence), or give the quote without indices."
        ),
        failure(
          "SnippetAbsent",
          "Claim <code class=\"value\">c3</code>, citation 1: ",
          "Quote not found verbatim",
          [["source", B], ["capture", "b2b2b2b2b2b2…"], ["quote", "&lt;q&gt;\\u{202e}"]],
          absentFix
        ),
        failure(
          "UncitedSentence",
          "",
          "Uncited factual-looking sentence",
          [["line", "4"], ["sentence", "Uncited &lt;u&gt;and&lt;/u&gt; long."]],
          "Cite the sentence with a verbatim quote, or remove it."
        ),
        failure("UncitedSentence", "", "Uncited factual-looking sentence", [["sentence", "No line."]], "Cite the sentence with a verbatim quote, or remove it.")
      )
    )
    assert.strictEqual(
      AnswerRender.render("html", renderings.evi1),
      page(
        "citegate: answer rejected",
        "<h1>Answer rejected</h1>",
        "<p class=\"outcome rejected\"><code>Evi1Invalid</code>: EVI1 protocol violated. Nothing in this answer is accepted.</p>",
        failure(
          "Evi1MalformedLine",
          "Line 3: ",
          "Malformed line",
          [["line", "3"], ["detail", "bad &lt;line&gt;"]],
          String.raw`Evidence lines are cX|n|&quot;quote&quot; between EVI1 and END_EVI1; escape only \&quot;, \\ and \n.`
        ),
        failure("Evi1OrphanMarker", "Line 5: ", "Claim id without citation", [["line", "5"], ["claim", "c9"]], orphanFix),
        "<p>and 7 more issues not listed</p>"
      )
    )
    assert.strictEqual(
      AnswerRender.render("html", renderings.stale),
      page(
        "citegate: answer rejected",
        "<h1>Answer rejected</h1>",
        "<p class=\"outcome rejected\"><code>StaleManifest</code>: Answer drafted against another manifest. Nothing in this answer is accepted.</p>",
        failure(
          "StaleManifest",
          "",
          "Answer drafted against another manifest",
          [["answer names", "b2b2b2b2b2b2…"], ["this run&#39;s manifest", "a1".repeat(32)]],
          staleFix.replace("'", "&#39;")
        )
      )
    )
  })
})
