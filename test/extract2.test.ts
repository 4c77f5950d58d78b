/**
 * `html/2` and `markdown/2`, one test per rule, through the dispatcher a
 * capture uses (`Extraction.extract` by content type), so each also pins
 * that new captures get the new ids. Expectations are written by hand from
 * the rules (src/extract/Html2.ts, src/extract/MarkdownRender.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { BodyRun } from "../src/Domain.js"
import * as Extraction from "../src/extract/Extraction.js"

const source = "https://example.test/page"
const limits: Extraction.ExtractionLimits = { maxPages: 10, maxCharacters: 100_000, maxDepth: 64 }
const run = (contentType: string, body: string) => Extraction.extract(source, contentType, new TextEncoder().encode(body), limits)
const html = (body: string) => run("text/html; charset=utf-8", `<!doctype html><body>${body}</body>`)
const htmlText = (body: string) => Effect.map(html(body), (e) => e.text)
const markdown = (body: string) => run("text/markdown; charset=utf-8", body)
const markdownText = (body: string) => Effect.map(markdown(body), (e) => e.text)

/** Where a text offset is in the body, by the map: inside a run exactly, between runs at the next run's start. */
const toBody = (map: ReadonlyArray<BodyRun>, offset: number): number => {
  for (const [t, b, n] of map) {
    if (offset < t) return b
    if (offset < t + n) return b + (offset - t)
  }
  const last = map[map.length - 1]
  return last === undefined ? 0 : last[1] + last[2]
}

describe("html/2", () => {
  it.effect("new HTML captures are html/2", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* html("<p>x</p>")).extraction, "html/2")
      assert.strictEqual((yield* run("application/xhtml+xml", "<p>x</p>")).extraction, "html/2")
    }))

  it.effect("no-break spaces are white space: 48.2&nbsp;million is quoted with a plain space", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* htmlText("<p>48.2&nbsp;million</p>"), "48.2 million")
      // A run of them with ASCII spaces is one space, trimmed at line ends; narrow no-break and figure spaces are
      // kept, as a browser's copy keeps them.
      assert.strictEqual(yield* htmlText("<p>&nbsp;7\u202f% and 1\u2007000 &nbsp; units&nbsp;</p>"), "7\u202f% and 1\u2007000 units")
      // Inside pre each is one space, nothing collapses.
      assert.strictEqual(yield* htmlText("<pre>a&nbsp;&nbsp;b</pre>"), "a  b")
    }))

  it.effect("a table row is one line, its cells separated by a tab", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* htmlText("<p>a</p><table><caption>Fares</caption><tr><th>Ticket</th><th>Adult</th></tr><tr><td>Bus</td><td>2.40</td></tr></table><p>b</p>"),
        "a\nFares\nTicket\tAdult\nBus\t2.40\nb"
      )
      // An empty cell keeps its place (a tab), empty cells at the end add nothing; blocks inside a cell are spaces.
      assert.strictEqual(
        yield* htmlText("<table><tr><td>x</td></tr><tr><td></td><td><p>one</p><p>two<br>three</p></td><td></td></tr></table>"),
        "x\n\tone two three"
      )
    }))

  it.effect("superscripts and subscripts keep their meaning: 10<sup>6</sup> is 10^6, never 106", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* htmlText("<p>Energy 10<sup>6</sup> joules</p>"), "Energy 10^6 joules")
      assert.strictEqual(yield* htmlText("<p>H<sub>2</sub>O and 10<sup>-5</sup> and 1<sup>st</sup></p>"), "H_2O and 10^-5 and 1^st")
      // More than one word is bracketed; a script of symbols only is written as it is.
      assert.strictEqual(yield* htmlText("<p>2<sup>n+1</sup>, x<sup><i>a</i> b</sup>y, Brand<sup>®</sup></p>"), "2^(n+1), x^(a b)y, Brand®")
      // A footnote mark through a link: one text node below single-child elements.
      assert.strictEqual(yield* htmlText("<p>4,210<sup><a href=#n1>1</a></sup> units</p>"), "4,210^1 units")
      assert.notInclude(yield* htmlText("<p>Energy 10<sup>6</sup> joules</p>"), "106")
    }))

  it.effect("content no reader sees is not text: hiding styles, SVG title and desc, MathML annotations", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* htmlText(
          `<p>a<span style="font-size:0">X1</span><span style="font-size: 0px !important">X2</span>` +
            `<span style="display:none">X3</span><span style="color:red;visibility: hidden">X4</span>` +
            `<span style="font-size:0.5em">c</span>b</p><svg><title>X5</title><desc>X6</desc><text>drawn</text></svg>` +
            `<math><semantics><mi>x</mi><annotation encoding="TeX">X7</annotation><annotation-xml>X8</annotation-xml></semantics></math>`
        ),
        "acb\ndrawnx"
      )
      // Kept: a closed details element's content (one click shows it) and aria-hidden content (shown on screen).
      assert.strictEqual(yield* htmlText(`<details><summary>S</summary>closed</details><span aria-hidden="true">icon</span>`), "S\nclosed\nicon")
    }))
})

describe("markdown/2", () => {
  it.live("new Markdown captures are markdown/2, the rendered text", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* markdown("x")).extraction, "markdown/2")
    }))

  it.live("emphasis, strong and code spans are not text: pay half fare", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* markdownText("Seniors *pay* **half fare**, _see_ `code  span` \\*here\\*."), "Seniors pay half fare, see code span *here*.")
      assert.strictEqual(yield* markdownText("48.2&nbsp;million and 48.2\u00a0million"), "48.2 million and 48.2 million")
    }))

  it.live("links are their text; images and definitions are not text; references are decoded", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* markdownText("Run by [the Authority](https://a.test \"t\") ![logo](l.png) &amp; [its staff][s] &copy; 2026.\n\n[s]: https://s.test"),
        "Run by the Authority & its staff © 2026."
      )
    }))

  it.live("list items and block quotes are lines without their markers; soft breaks are spaces, hard breaks lines", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* markdownText("- one\n- two\n  continued\n\n1. first\n2. second\n\n> quoted\n> on  two lines\\\n> hard"),
        "one\ntwo continued\nfirst\nsecond\nquoted on two lines\nhard"
      )
      assert.strictEqual(yield* markdownText("```\n  a  b\n```\n\n    indented\n      code"), "  a  b\nindented\n  code")
    }))

  it.live("a GFM table row is one line, its cells separated by a tab; pipes and the delimiter row are not text", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* markdownText("Fares:\n\n| Ticket | Adult | Reduced |\n|---|--:|---|\n| Bus | €2.40 | |\n| | **€2.80** | €1.40 |\n\nAfter."),
        "Fares:\nTicket\tAdult\tReduced\nBus\t€2.40\n\t€2.80\t€1.40\nAfter."
      )
    }))

  it.live("raw HTML: tags and comments are not text, superscripts keep their meaning", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* markdownText("E = 10<sup>6</sup> J, H<sub>2</sub>O, 2<sup>n+1</sup>"), "E = 10^6 J, H_2O, 2^(n+1)")
      assert.strictEqual(yield* markdownText("a\n\n<!-- note -->\n\n<div>\nb <b>c</b>\n</div>\n\n<script>x</script>\n\nd"), "a\nb c\nd")
    }))

  it.live("hidden raw HTML and comments are not text", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* markdownText(
          "Seen <span style=\"display:none\">X1 <span>X2</span> X3</span> too <b>bold</b>.\n\n<div hidden>\nX4\n</div>\n\n" +
            "<div style='font-size:0'>X5</div>\n\n<!-- X6 -->\n\nUnclosed <span hidden>X7\n\nNext."
        ),
        "Seen too bold.\nUnclosed\nNext."
      )
    }))

  it.live("the body map is exact: every run equals the body, every heading maps to its text in the body", () =>
    Effect.gen(function*() {
      const body = "\ufeff# Sales *report*\n\nNet sales were **4,210 units** &amp; more\nin [Q3](https://x.test).\n\n" +
        "> ## Quoted\n> text\n\nSetext\n======\n\n- item\n"
      const extracted = yield* markdown(body)
      const map = extracted.bodyMap!
      assert.strictEqual(extracted.text, "Sales report\nNet sales were 4,210 units & more in Q3.\nQuoted\ntext\nSetext\nitem")
      for (const [t, b, n] of map) assert.strictEqual(extracted.text.slice(t, t + n), body.slice(b, b + n), `run ${t}`)
      // Runs in order, never overlapping.
      for (let i = 1; i < map.length; i++) {
        assert.isTrue(map[i]![0] >= map[i - 1]![0] + map[i - 1]![2] && map[i]![1] >= map[i - 1]![1] + map[i - 1]![2])
      }
      // Each heading's start maps to the heading's first character in the body, after its marks.
      const headings = extracted.headings!
      assert.deepStrictEqual(headings.map((h) => h.text), ["Sales report", "Quoted", "Setext"])
      assert.deepStrictEqual(headings.map((h) => toBody(map, h.start)), [
        body.indexOf("Sales *report*"),
        body.indexOf("Quoted"),
        body.indexOf("Setext")
      ])
      // A quote's range maps back to the body range it came from, markup inside included.
      const quote = "4,210 units & more in Q3"
      const start = extracted.text.indexOf(quote)
      const bodyStart = toBody(map, start)
      const bodyEnd = toBody(map, start + quote.length - 1) + 1
      assert.strictEqual(body.slice(bodyStart, bodyEnd), "4,210 units** &amp; more\nin [Q3")
      // Every code unit of the text outside the runs is a separator, a space or a decoded reference.
      const covered = new Set<number>()
      for (const [t, , n] of map) for (let k = t; k < t + n; k++) covered.add(k)
      const written = [...extracted.text].flatMap((c, k) => covered.has(k) ? [] : [c])
      assert.deepStrictEqual(written, ["\n", "&", " ", "\n", "\n", "\n", "\n"])
    }))
})
