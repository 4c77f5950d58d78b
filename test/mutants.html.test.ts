/**
 * The whole HTML rendering, exactly: the page shell with its Content-Security-Policy, every fact
 * kind, the capture text cut at every span and page boundary (overlapping highlights, page
 * markers, a capture the renderer was not given), the per-excerpt `:target` rules, retractions,
 * and each rejected page. Expected markup is written out by hand from fixtures whose offsets are
 * counted by hand, so a dropped escape, a moved cut or a changed word fails here in-process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { type CaptureRecord, CaptureRecordV1, CaptureRecordV2, decodeOptions, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import { DuplicateLabel, InvalidReport, ReportRejected, SnippetAbsent, UnknownLabel, VerificationTimeout } from "../src/Errors.js"
import * as Html from "../src/render/Html.js"
import * as HtmlPage from "../src/render/HtmlPage.js"
import * as R from "../src/render/Rendering.js"
import { Rendering } from "../src/render/Rendering.js"
import { VerifiedReport } from "../src/verify/VerifiedReport.js"

const at = "2026-10-01T09:30:00.000Z" as Rfc3339Utc
const later = "2026-10-02T00:00:00.000Z" as Rfc3339Utc
const SA = "https://a.test/r.txt" as SourceUrl
const SB = "https://b.test/doc.pdf" as SourceUrl
const SC = "https://c.test/missing" as SourceUrl
const digestA = "0123456789abcdef".repeat(4)
const digestB = "fedcba9876543210".repeat(4)
const digestC = "a".repeat(64)
const bodyB = "ab".repeat(32)

// Offsets counted by hand: 0 '0', 1 '<', 2 'b', 3 '>', 4 CR, 5 LF, 6 '1', 7 ' ', 8 '&', 9 ' ', 10 '2',
// 11 U+202E, 12 '3', 13 ' ', 14 'e', 15 'n', 16 'd'; 17 code units, 19 UTF-8 bytes (U+202E takes 3).
const textA = "0<b>\r\n1 & 2\u202e3 end"
const recordA = Schema.decodeUnknownSync(CaptureRecordV1)({
  format: "citegate.capture/1",
  source: SA,
  sha256: digestA,
  accessedAt: at,
  contentType: "text/plain",
  byteLength: 19,
  text: textA
})
// "alp" is page 1 (0–3), "ha beta gamma" page 2 (3–16): page 2 starts where no excerpt does.
const recordB = Schema.decodeUnknownSync(CaptureRecordV2)({
  format: "citegate.capture/2",
  source: SB,
  sha256: digestB,
  accessedAt: at,
  extraction: "pdf/1",
  body: { sha256: bodyB, byteLength: 900, contentType: "application/pdf" },
  pages: [{ number: 1, start: 0, end: 3 }, { number: 2, start: 3, end: 16 }],
  text: "alpha beta gamma"
})

const citedFact = (label: string, source: SourceUrl, captureSha256: string, snippet: string) =>
  ({ state: "cited" as const, label: label as never, source, captureSha256: captureSha256 as never, snippet })

const report = (fields: Pick<VerifiedReport, "outcome" | "mode" | "facts" | "retractions">) =>
  new VerifiedReport({ format: "citegate.verified/1", proves: "provenance-only", semanticReview: "not-performed", ...fields })

const drop = report({
  outcome: "grounded",
  mode: "drop",
  facts: [
    { index: 0, fact: citedFact("q0\u202e", SA, digestA, "<b>"), evidence: { span: { start: 1, end: 4 }, occurrences: 1, accessedAt: at } },
    { index: 1, fact: { state: "unavailable", label: "u\u001b<" as never, reason: "r\u202e&" } },
    {
      index: 2,
      fact: citedFact("q2", SA, digestA, "1 & 2\u202e3"),
      evidence: { span: { start: 6, end: 13 }, occurrences: 2, accessedAt: at, ambiguous: true }
    },
    {
      index: 3,
      fact: citedFact("q3", SA, digestA, "2\u202e3 END"),
      evidence: {
        span: { start: 10, end: 17 },
        occurrences: 1,
        accessedAt: later,
        method: "normalized/1",
        ambiguous: false,
        selector: [
          { type: "TextQuoteSelector", exact: "2\u202e3 end", prefix: "", suffix: "" },
          { type: "TextPositionSelector", start: 10, end: 17 }
        ]
      }
    },
    {
      index: 4,
      fact: citedFact("q4", SB, digestB, "beta"),
      evidence: { span: { start: 6, end: 10 }, occurrences: 1, accessedAt: at, page: 2, heading: ["H", "S<\u202e"] }
    },
    {
      index: 5,
      fact: citedFact("q5", SC, digestC, "zeta"),
      evidence: { span: { start: 0, end: 4 }, occurrences: 3, accessedAt: at, method: "normalized/1" }
    }
  ],
  retractions: [
    { index: 6, label: "l<\u200b", error: new SnippetAbsent({ source: "s\"", captureSha256: digestA, snippet: "a  b\u200b" }) },
    { index: 7, label: "dup", error: new DuplicateLabel({ label: "dup", firstIndex: 0 }) }
  ]
})

const captures: ReadonlyMap<string, CaptureRecord> = new Map<string, CaptureRecord>([[SA, recordA], [SB, recordB]])

const provenance =
  `<p class="note">Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.</p>`
const unavailableNote = `<p class="note">Unavailable: the drafter&#39;s reason is an unverified explanation, not evidence.</p>`
const absentFix = "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable."

const dropBody = [
  `<h1>Verified report</h1>`,
  `<p class="outcome grounded">Outcome: grounded (drop mode): 5 verified citations, 1 unavailable.</p>`,
  provenance,
  `<section class="fact cited" id="fact-0">
<div class="label">1. q0\\u{202e}</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="0">&lt;b&gt;</blockquote>
<div class="citation">Source <code>https://a.test/r.txt</code> · capture sha256 <code>0123456789ab…</code> · accessed 2026-10-01T09:30:00.000Z · characters 1–4, 1 occurrence · <a href="#fact-0-excerpt">open in the captured text</a><sup><a href="#capture-1">[1]</a></sup></div>
</section>`,
  `<section class="fact unavailable" id="fact-1">
<div class="label">2. u\\u{001b}&lt;</div>
<div class="unavailable-tag">Unavailable</div>
<p>Reason given by the drafter (unverified explanation, not evidence): <span class="explanation">r\\u{202e}&amp;</span></p>
</section>`,
  `<section class="fact cited" id="fact-2">
<div class="label">3. q2</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="2">1 &amp; 2<span class="ctl">\\u{202e}</span>3</blockquote>
<div class="citation">Source <code>https://a.test/r.txt</code> · capture sha256 <code>0123456789ab…</code> · accessed 2026-10-01T09:30:00.000Z · characters 6–13, more than one occurrence · <a href="#fact-2-excerpt">open in the captured text</a><sup><a href="#capture-1">[1]</a></sup></div>
<div class="ambiguous">ambiguous: more than one occurrence, the first is shown</div>
</section>`,
  `<section class="fact cited" id="fact-3">
<div class="label">4. q3</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="3">2<span class="ctl">\\u{202e}</span>3 END</blockquote>
<div class="citation">Source <code>https://a.test/r.txt</code> · capture sha256 <code>0123456789ab…</code> · accessed 2026-10-02T00:00:00.000Z · characters 10–17, 1 occurrence · <a href="#fact-3-excerpt">open in the captured text</a><sup><a href="#capture-1">[1]</a></sup></div>
<div class="match normalized">matched under normalized/1 (opt-in), NOT verbatim: the quote equals the capture&#39;s text only after normalisation (case, spacing, quotes, dashes, compatibility forms)</div>
<div class="capture-reads">The capture's own text at this span: <q>2<span class="ctl">\\u{202e}</span>3 end</q></div>
</section>`,
  `<section class="fact cited" id="fact-4">
<div class="label">5. q4</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="4">beta</blockquote>
<div class="citation">Source <code>https://b.test/doc.pdf</code> · capture sha256 <code>fedcba987654…</code> · accessed 2026-10-01T09:30:00.000Z · characters 6–10, 1 occurrence · <span class="anchor-name">page 2, section H › S&lt;<span class="ctl">\\u{202e}</span></span> · <a href="#fact-4-excerpt">open in the captured text</a><sup><a href="#capture-2">[2]</a></sup></div>
</section>`,
  `<section class="fact cited" id="fact-5">
<div class="label">6. q5</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="5">zeta</blockquote>
<div class="citation">Source <code>https://c.test/missing</code> · capture sha256 <code>aaaaaaaaaaaa…</code> · accessed 2026-10-01T09:30:00.000Z · characters 0–4, more than one occurrence · <a href="#fact-5-excerpt">open in the captured text</a><sup><a href="#capture-3">[3]</a></sup></div>
<div class="match normalized">matched under normalized/1 (opt-in), NOT verbatim: the quote equals the capture&#39;s text only after normalisation (case, spacing, quotes, dashes, compatibility forms)</div>
</section>`,
  unavailableNote,
  `<h2>Retracted facts (drop mode)</h2>`,
  `<div class="failure" data-tag="SnippetAbsent">
<div><strong>Fact 7</strong> (label <code class="value">l&lt;\\u{200b}</code>): <code>SnippetAbsent</code>: Snippet not found verbatim</div>
<ul><li>source: <code class="value">s&quot;</code></li><li>capture: <code class="value">0123456789ab…</code></li><li>snippet: <code class="value">a  b\\u{200b}</code></li></ul>
<div>What to do: ${absentFix}</div>
</div>`,
  `<div class="failure" data-tag="DuplicateLabel">
<div><strong>Fact 8</strong> (label <code class="value">dup</code>): <code>DuplicateLabel</code>: Duplicate label</div>
<ul><li>label: <code class="value">dup</code></li><li>first used by fact: <code class="value">1</code></li></ul>
<div>What to do: Report each label once.</div>
</div>`,
  `<h2>Captured sources</h2>`,
  // Cuts at 0, 1, 4, 6, 10, 13 and 17 (twice: the text's end and fact 3's end). The CR is kept as
  // a character reference; 10–13 is covered by facts 2 and 3 and links to the first of them.
  `<section class="capture" id="capture-1">
<h3>[1] <code>https://a.test/r.txt</code></h3>
<p class="citation">sha256 <code>${digestA}</code> · accessed 2026-10-01T09:30:00.000Z · 19 bytes · text/plain</p>
<pre>0<span class="anchor" id="fact-0-excerpt"></span><mark data-facts="0"><a href="#fact-0" title="fact 1">&lt;b&gt;</a></mark>&#13;
<span class="anchor" id="fact-2-excerpt"></span><mark data-facts="2"><a href="#fact-2" title="fact 3">1 &amp; </a></mark><span class="anchor" id="fact-3-excerpt"></span><mark data-facts="2 3"><a href="#fact-2" title="fact 3, 4">2<span class="ctl">\\u{202e}</span>3</a></mark><mark data-facts="3"><a href="#fact-3" title="fact 4"> end</a></mark></pre>
</section>`,
  `<section class="capture" id="capture-2">
<h3>[2] <code>https://b.test/doc.pdf</code></h3>
<p class="citation">sha256 <code>${digestB}</code> · accessed 2026-10-01T09:30:00.000Z · 900 bytes · application/pdf · extraction pdf/1 · body sha256 <code>${bodyB}</code></p>
<pre><span class="page-marker" id="capture-2-page-1" data-page="1"></span>alp<span class="page-marker" id="capture-2-page-2" data-page="2"></span>ha <span class="anchor" id="fact-4-excerpt"></span><mark data-facts="4"><a href="#fact-4" title="fact 5">beta</a></mark> gamma</pre>
</section>`,
  `<section class="capture" id="capture-3">
<h3>[3] <code>https://c.test/missing</code></h3>
<p>Capture text not available to this renderer.</p>
</section>`
].join("\n")

const targeted = [0, 2, 3, 4, 5]
  .map((i) => `#fact-${i}-excerpt:target ~ mark[data-facts~="${i}"] { background: #ffb347; outline: 2px solid #d9480f; }`)
  .join("\n")

/** A page split along the exact shell (doctype, policy, referrer, title, style, body); null if the shell differs. */
const shell = (html: string) => {
  const m = new RegExp(
    "^<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n" +
      "<meta name=\"referrer\" content=\"no-referrer\">\n<title>([^<]*)</title>\n<style>([\\s\\S]*)</style>\n</head>\n<body>\n([\\s\\S]*)\n</body>\n</html>\n$"
  ).exec(html)
  assert.isNotNull(m, html.slice(0, 400))
  return { title: m![1]!, style: m![2]!, body: m![3]! }
}

/** Rules of the base style whose loss would change what a reader sees (page numbers, highlights, kept white space). */
const assertBaseStyle = (style: string) => {
  for (
    const rule of [
      `.page-marker::before { content: "page " attr(data-page); }`,
      `mark { background: #ffe066; }`,
      `blockquote.excerpt { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; font-family: Georgia, serif; }`,
      `code.value { white-space: pre-wrap; word-break: break-word; background: #f1f1f1; border-radius: 3px; }`,
      `.ctl { color: #c92a2a; font-size: 0.85em; }`
    ]
  ) assert.include(style, rule)
}

const baseStyleOf = () => shell(Html.render(Rendering.Rejected({ error: new VerificationTimeout({ timeoutMs: 1 }) }))).style

describe("HTML rendering, exactly", () => {
  it("the page shell: policy, referrer, escaped title, style and body as given", () => {
    assert.strictEqual(
      HtmlPage.page(`a<b>&"'`, "S{}", "<p>B</p>"),
      `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="referrer" content="no-referrer">
<title>a&lt;b&gt;&amp;&quot;&#39;</title>
<style>S{}</style>
</head>
<body>
<p>B</p>
</body>
</html>
`
    )
  })

  it("source text: escaped, invisible characters as styled marks, line breaks kept", () => {
    assert.strictEqual(HtmlPage.sourceText(""), "")
    assert.strictEqual(HtmlPage.sourceText("a<\r\n\t&"), "a&lt;&#13;\n\t&amp;")
    assert.strictEqual(
      HtmlPage.sourceText("\u202ex\u0000"),
      `<span class="ctl">\\u{202e}</span>x<span class="ctl">\\u{0000}</span>`
    )
  })

  it("a grounded drop-mode report: every fact kind, retractions, highlighted captures, targeted excerpts", () => {
    const page = shell(Html.render(Rendering.Verified({ report: drop, captures })))
    assert.strictEqual(page.title, "citegate: verified report")
    assert.strictEqual(page.body, dropBody)
    const base = baseStyleOf()
    assertBaseStyle(base)
    assert.strictEqual(page.style, `${base}\n${targeted}\n`)
  })

  it("no evidence, nothing cited: no sources section, no targeted rules", () => {
    const none = report({
      outcome: "no_evidence",
      mode: "reject",
      facts: [{ index: 0, fact: { state: "unavailable", label: "x" as never, reason: "y" } }],
      retractions: []
    })
    const page = shell(Html.render(Rendering.Verified({ report: none, captures: new Map() })))
    assert.strictEqual(page.title, "citegate: verified report")
    assert.strictEqual(page.style, baseStyleOf())
    assert.strictEqual(
      page.body,
      [
        `<h1>Verified report</h1>`,
        `<p class="outcome no_evidence">Outcome: no evidence (reject mode): no cited fact was verified; nothing here is grounded.</p>`,
        provenance,
        `<section class="fact unavailable" id="fact-0">
<div class="label">1. x</div>
<div class="unavailable-tag">Unavailable</div>
<p>Reason given by the drafter (unverified explanation, not evidence): <span class="explanation">y</span></p>
</section>`,
        unavailableNote
      ].join("\n")
    )
  })

  it("one citation, nothing unavailable: singular count and no unavailable note", () => {
    const one = report({
      outcome: "grounded",
      mode: "reject",
      facts: [{ index: 0, fact: citedFact("q", SA, digestA, "0"), evidence: { span: { start: 0, end: 1 }, occurrences: 1, accessedAt: at } }],
      retractions: []
    })
    const page = shell(Html.render(Rendering.Verified({ report: one, captures })))
    assert.strictEqual(
      page.body,
      [
        `<h1>Verified report</h1>`,
        `<p class="outcome grounded">Outcome: grounded (reject mode): 1 verified citation, 0 unavailable.</p>`,
        provenance,
        `<section class="fact cited" id="fact-0">
<div class="label">1. q</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="0">0</blockquote>
<div class="citation">Source <code>https://a.test/r.txt</code> · capture sha256 <code>0123456789ab…</code> · accessed 2026-10-01T09:30:00.000Z · characters 0–1, 1 occurrence · <a href="#fact-0-excerpt">open in the captured text</a><sup><a href="#capture-1">[1]</a></sup></div>
</section>`,
        `<h2>Captured sources</h2>`,
        `<section class="capture" id="capture-1">
<h3>[1] <code>https://a.test/r.txt</code></h3>
<p class="citation">sha256 <code>${digestA}</code> · accessed 2026-10-01T09:30:00.000Z · 19 bytes · text/plain</p>
<pre><span class="anchor" id="fact-0-excerpt"></span><mark data-facts="0"><a href="#fact-0" title="fact 1">0</a></mark>&lt;b&gt;&#13;
1 &amp; 2<span class="ctl">\\u{202e}</span>3 end</pre>
</section>`
      ].join("\n")
    )
    assert.strictEqual(page.style, `${baseStyleOf()}\n#fact-0-excerpt:target ~ mark[data-facts~="0"] { background: #ffb347; outline: 2px solid #d9480f; }\n`)
  })

  it("PDF pages: an empty last page (the text ends at its start) and an empty text keep their markers", () => {
    // A PDF whose second page has no text: the text is page 1, a form feed, and nothing; page 2 starts (and ends) at 4.
    const pdf = (text: string, pages: ReadonlyArray<{ number: number; start: number; end: number }>, source: string) =>
      Schema.decodeUnknownSync(CaptureRecordV2)({
        format: "citegate.capture/2",
        source,
        sha256: digestB,
        accessedAt: at,
        extraction: "pdf/1",
        body: { sha256: bodyB, byteLength: 10, contentType: "application/pdf" },
        pages,
        text
      })
    const twoPages = pdf("one\f", [{ number: 1, start: 0, end: 3 }, { number: 2, start: 4, end: 4 }], "https://p.test/two.pdf")
    const blank = pdf("", [{ number: 1, start: 0, end: 0 }], "https://p.test/blank.pdf")
    const r = report({
      outcome: "grounded",
      mode: "reject",
      facts: [
        { index: 0, fact: citedFact("q", twoPages.source, digestB, "one"), evidence: { span: { start: 0, end: 3 }, occurrences: 1, accessedAt: at, page: 1 } },
        // Cited only so that its capture is listed: the renderer does not re-check spans.
        { index: 1, fact: citedFact("r", blank.source, digestB, "x"), evidence: { span: { start: 0, end: 0 }, occurrences: 1, accessedAt: at } }
      ],
      retractions: []
    })
    const body = shell(Html.render(Rendering.Verified({ report: r, captures: new Map<string, CaptureRecord>([[twoPages.source, twoPages], [blank.source, blank]]) }))).body
    const pres = [...body.matchAll(/<pre>([\s\S]*?)<\/pre>/g)].map((m) => m[1])
    assert.deepStrictEqual(pres, [
      `<span class="page-marker" id="capture-1-page-1" data-page="1"></span><span class="anchor" id="fact-0-excerpt"></span><mark data-facts="0"><a href="#fact-0" title="fact 1">one</a></mark><span class="ctl">\\u{000c}</span><span class="page-marker" id="capture-1-page-2" data-page="2"></span>`,
      `<span class="page-marker" id="capture-2-page-1" data-page="1"></span><span class="anchor" id="fact-1-excerpt"></span>`
    ])
  })

  it("an invalid report: each issue's path and message, then the omitted count", () => {
    const error = new InvalidReport({ issues: [{ path: ["facts", 0, "<k\u202e>"], message: "bad\u001b<" }], omitted: 2 })
    const page = shell(Html.render(Rendering.Rejected({ error })))
    assert.strictEqual(page.title, "citegate: report rejected")
    assert.strictEqual(page.style, baseStyleOf())
    assert.strictEqual(
      page.body,
      `<h1>Report rejected</h1>
<p class="outcome rejected">The report is not a valid report. Nothing in it is accepted.</p>
<ul><li><code>facts[0].&lt;k\\u{202e}&gt;</code>: bad\\u{001b}&lt;</li><li>and 2 more issues not listed</li></ul>`
    )
    const two = shell(Html.render(Rendering.Rejected({ error: new InvalidReport({ issues: [{ path: [], message: "m" }, { path: [1], message: "n" }] }) })))
    assert.strictEqual(two.body.split("\n")[2], `<ul><li><code>(root)</code>: m</li><li><code>[1]</code>: n</li></ul>`)
  })

  it("a rejected report: failures counted (singular and plural), each failure's fields", () => {
    const two = new ReportRejected({
      failures: [
        { index: 0, label: "a", error: new UnknownLabel({ label: "z\u202e" }) },
        { index: 2, label: "b", error: new SnippetAbsent({ source: "https://x.test/a", captureSha256: digestB, snippet: "<s>" }) }
      ]
    })
    const page = shell(Html.render(Rendering.Rejected({ error: two })))
    assert.strictEqual(page.title, "citegate: report rejected")
    assert.strictEqual(page.style, baseStyleOf())
    assert.strictEqual(
      page.body,
      `<h1>Report rejected</h1>
<p class="outcome rejected">2 failures. Nothing in this report is accepted.</p>
<div class="failure" data-tag="UnknownLabel">
<div><strong>Fact 1</strong> (label <code class="value">a</code>): <code>UnknownLabel</code>: Unknown label</div>
<ul><li>label: <code class="value">z\\u{202e}</code></li></ul>
<div>What to do: Use one of the approved labels.</div>
</div>
<div class="failure" data-tag="SnippetAbsent">
<div><strong>Fact 3</strong> (label <code class="value">b</code>): <code>SnippetAbsent</code>: Snippet not found verbatim</div>
<ul><li>source: <code class="value">https://x.test/a</code></li><li>capture: <code class="value">fedcba987654…</code></li><li>snippet: <code class="value">&lt;s&gt;</code></li></ul>
<div>What to do: ${absentFix}</div>
</div>`
    )
    const one = new ReportRejected({ failures: [two.failures[0]!] })
    assert.strictEqual(
      shell(Html.render(Rendering.Rejected({ error: one }))).body.split("\n")[1],
      `<p class="outcome rejected">1 failure. Nothing in this report is accepted.</p>`
    )
  })

  it("a verification timeout: title, deadline and what to do", () => {
    const page = shell(Html.render(Rendering.Rejected({ error: new VerificationTimeout({ timeoutMs: 1500 }) })))
    assert.strictEqual(page.title, "citegate: report rejected")
    assertBaseStyle(page.style)
    assert.strictEqual(
      page.body,
      `<h1>Report rejected</h1>
<p class="outcome rejected">Verification timed out. Nothing in this report is accepted.</p>
<ul><li>deadline ms: <span class="value">1500</span></li></ul>
<div>What to do: Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large.</div>`
    )
  })
})

describe("the rendering value and its shared helpers", () => {
  const one = report({
    outcome: "grounded",
    mode: "reject",
    facts: [
      { index: 0, fact: citedFact("q", SA, digestA, "0"), evidence: { span: { start: 0, end: 1 }, occurrences: 1, accessedAt: at } },
      { index: 1, fact: { state: "unavailable", label: "x" as never, reason: "y" } },
      { index: 2, fact: { state: "unavailable", label: "z" as never, reason: "w" } }
    ],
    retractions: [{ index: 3, label: "u", error: new UnknownLabel({ label: "u" }) }]
  })

  it("fromOutcome: a success is Verified with its report and captures, a failure Rejected with its error", () => {
    const verified = R.fromOutcome(Either.right({ report: one, captures }))
    assert.strictEqual(verified._tag, "Verified")
    if (verified._tag !== "Verified") return
    assert.strictEqual(verified.report, one)
    assert.strictEqual(verified.captures, captures)
    const error = new VerificationTimeout({ timeoutMs: 9 })
    const rejected = R.fromOutcome(Either.left(error))
    assert.strictEqual(rejected._tag, "Rejected")
    if (rejected._tag !== "Rejected") return
    assert.strictEqual(rejected.error, error)
  })

  it("toResult: the JSON shape, which decodes strictly; a wrong status or format does not", () => {
    const verified = R.toResult(Rendering.Verified({ report: one, captures }))
    assert.strictEqual(R.resultFormat, "citegate.result/1")
    assert.deepStrictEqual(Object.keys(verified), ["format", "status", "report"])
    assert.strictEqual(verified.format, "citegate.result/1")
    assert.strictEqual(verified.status, "verified")
    const error = new VerificationTimeout({ timeoutMs: 9 })
    const rejected = R.toResult(Rendering.Rejected({ error }))
    assert.deepStrictEqual(Object.keys(rejected), ["format", "status", "error"])
    assert.strictEqual(rejected.status, "rejected")
    const decode = Schema.decodeUnknownEither(R.RenderedResult, decodeOptions)
    const encode = Schema.encodeSync(R.RenderedResult)
    const encodedRejected = encode(rejected)
    assert.deepStrictEqual(encodedRejected, { format: "citegate.result/1", status: "rejected", error: { _tag: "VerificationTimeout", timeoutMs: 9 } })
    assert.isTrue(Either.isRight(decode(encodedRejected)))
    const encodedVerified = encode(verified)
    assert.isTrue(Either.isRight(decode(encodedVerified)))
    assert.isTrue(Either.isLeft(decode({ ...encodedRejected, status: "verified" })))
    assert.isTrue(Either.isLeft(decode({ ...encodedVerified, status: "rejected" })))
    assert.isTrue(Either.isLeft(decode({ ...encodedRejected, format: "citegate.result/2" })))
    assert.isTrue(Either.isLeft(decode({ ...encodedVerified, format: "" })))
  })

  it("counts, plural, digest prefix, fact numbers", () => {
    assert.deepStrictEqual(R.counts(one), { cited: 1, unavailable: 2, retracted: 1 })
    assert.strictEqual(R.plural(1, "entry", "entries"), "1 entry")
    assert.strictEqual(R.plural(0, "entry", "entries"), "0 entries")
    assert.strictEqual(R.plural(2, "cat"), "2 cats")
    assert.strictEqual(R.digestPrefix(digestB), "fedcba987654")
    assert.strictEqual(R.factNumber(0), 1)
  })

  it("anchor text, notes and the capture's own text", () => {
    assert.strictEqual(R.anchorText({}), undefined)
    assert.strictEqual(R.anchorText({ page: 4 }), "page 4")
    assert.strictEqual(R.anchorText({ heading: ["A", "B", "C"] }), "section A › B › C")
    assert.strictEqual(R.anchorText({ page: 1, heading: ["A"] }), "page 1, section A")
    assert.strictEqual(R.normalizedNote({}), undefined)
    assert.strictEqual(R.normalizedNote({ method: "exact" }), undefined)
    assert.strictEqual(R.ambiguityNote({ occurrences: 4 }), undefined)
    assert.strictEqual(R.ambiguityNote({ occurrences: 4, ambiguous: false }), undefined)
    assert.strictEqual(R.ambiguityNote({ occurrences: 4, ambiguous: true }), "ambiguous: more than one occurrence, the first is shown")
    assert.strictEqual(R.captureReads({}), undefined)
    assert.strictEqual(R.captureReads({ selector: [{ exact: "E" }, null] }), "E")
    assert.strictEqual(R.unavailableNote, "Unavailable: the drafter's reason is an unverified explanation, not evidence.")
  })
})
