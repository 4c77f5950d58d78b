import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { marked, type Token } from "marked"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Gate from "../src/verify/Gate.js"
import { terminal } from "../src/render/Escape.js"
import * as Render from "../src/render/Render.js"
import { provenanceNote, Rendering, unavailableNote } from "../src/render/Rendering.js"
import * as MemoryStore from "../src/store/Memory.js"
import { accessedAt } from "./support.js"

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const OTHER = "https://evil.test/not-approved.txt"

/** Every inline and block construct Markdown (CommonMark + GFM) could make of untrusted text. */
const hostile = "Total 4,210 units at 10:30 (approx.) <script>alert(1)</script> <b>b</b> [x](javascript:alert(1)) " +
  "![i](https://evil.test/i.png) *em* **strong** _u_ __uu__ ~~del~~ ~d~ `code` ``co`de`` | a | b | &amp; &#60; " +
  "https://evil.test/p http://evil.test www.evil.test xwww.evil.test WWW.EVIL.TEST mail@evil.test <https://evil.test/auto> " +
  "<mail@evil.test> \\[y\\](https://evil.test) [ref][r] [^1] # not a heading #"
const hostileLines = `${hostile}\n# heading\n- item\n> quote\n    indented\n\`\`\`\n</code></pre><script>x()</script>\n\`\`\`\`\n===\n[r]: https://evil.test/ref`
const excerpt = `Net sales  were 4,210 units\n\`\`\`\n</code></pre><img src=x onerror=alert(1)>\n\`\`\`\`\`\n\ttabbed\r\nend`
const label = "q3 *net* <i>sales</i> [l](https://evil.test) _x_ #"
const unknownLabel = "<script>x()</script> [l](javascript:alert(1)) *e* `c` www.evil.test a@evil.test ~~d~~ | t |"

const record = makeCaptureRecord({
  source: SOURCE,
  text: `Header\n${excerpt}\n${hostile}\nTail`,
  accessedAt,
  contentType: "text/plain"
})

const renderings = Effect.gen(function*() {
  const config = (mode: "reject" | "drop") =>
    JSON.stringify({ sources: [SOURCE], labels: [label, "q4_forecast", "q3_returns", "q3_x"], verify: { mode } })
  const gate = (mode: "reject" | "drop") =>
    Effect.provide(Gate.Gate, Gate.layerWithStore(config(mode)).pipe(Layer.provide(MemoryStore.layer({ records: [record] }))))
  const draft = JSON.stringify({
    facts: [
      { state: "cited", label, source: SOURCE, captureSha256: record.sha256, snippet: excerpt },
      { state: "unavailable", label: "q4_forecast", reason: hostileLines },
      { state: "cited", label: "q3_returns", source: SOURCE, captureSha256: record.sha256, snippet: `Net sales were  ${hostileLines}` },
      { state: "cited", label: unknownLabel, source: OTHER, captureSha256: record.sha256, snippet: "x" }
    ]
  })
  const dropped = yield* Effect.flatMap(gate("drop"), (g) => g.checkJsonWithCaptures(draft))
  const rejected = yield* Effect.flatMap(gate("reject"), (g) => Effect.flip(g.checkJson(draft)))
  const invalid = yield* Effect.flatMap(
    gate("reject"),
    (g) => Effect.flip(g.checkJson(JSON.stringify({ facts: [{ state: "unavailable", label: "q3_x", reason: "r", [hostile]: 1 }] })))
  )
  return {
    verified: Render.render("markdown", Rendering.Verified(dropped)),
    rejected: Render.render("markdown", Rendering.Rejected({ error: rejected })),
    invalid: Render.render("markdown", Rendering.Rejected({ error: invalid }))
  }
})

/** Every token of a parsed document, depth first. */
const allTokens = (tokens: ReadonlyArray<Token>): Array<Token> =>
  tokens.flatMap((token) => {
    const t = token as Token & { tokens?: Array<Token>; items?: Array<Token> }
    return [token, ...allTokens(t.tokens ?? []), ...allTokens(t.items ?? [])]
  })

/** The text a token shows, escapes resolved. */
const shown = (token: Token): string => {
  const t = token as Token & { tokens?: Array<Token>; text?: string }
  return t.tokens !== undefined ? t.tokens.map(shown).join("") : (t.text ?? "")
}

const ownEmphasis = new Set([
  "Verified excerpt",
  "Unavailable.",
  "Outcome: grounded",
  "Outcome: no evidence",
  provenanceNote,
  unavailableNote
])

const assertInert = (markdown: string, allowedLinks: ReadonlyArray<string>) => {
  const tokens = allTokens(marked.lexer(markdown, { gfm: true }))
  for (const token of tokens) {
    assert.notInclude(["html", "image", "table", "blockquote", "hr", "def", "del"], token.type, `${token.type}: ${token.raw}`)
    if (token.type === "link") assert.include(allowedLinks, (token as Token & { href: string }).href, token.raw)
    if (token.type === "strong" || token.type === "em") assert.isTrue(ownEmphasis.has(shown(token)), token.raw)
  }
  const html = marked.parse(markdown, { gfm: true, async: false })
  assert.notMatch(html, /<(script|img|b|i|del|table|blockquote)[\s>]/i, html)
  return tokens
}

describe("Markdown rendering under a CommonMark + GFM parser", () => {
  it.effect("no markup, link, image or HTML forms from untrusted text; the only link is the verified source", () =>
    Effect.gen(function*() {
      const { invalid, rejected, verified } = yield* renderings
      const tokens = assertInert(verified, [SOURCE])
      assert.deepStrictEqual(
        tokens.filter((t) => t.type === "link").map((t) => (t as Token & { href: string }).href),
        [SOURCE]
      )
      assertInert(rejected, [])
      assertInert(invalid, [])
    }))

  it.effect("untrusted text reads as given: escaped only where Markdown needs it", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* renderings
      // Ordinary punctuation is left alone in the source text.
      assert.include(verified, "Total 4,210 units at 10:30 (approx.)")
      assert.notInclude(verified, "4\\,210")
      assert.include(verified, `Source: <${SOURCE}>`)
      // What a reader sees is the value itself (controls and line breaks shown as \u{…}, as in the text rendering).
      const tokens = allTokens(marked.lexer(verified, { gfm: true }))
      const reason = tokens.find((t) => t.type === "paragraph" && t.raw.startsWith("**Unavailable.**"))!
      assert.strictEqual(
        shown(reason),
        `Unavailable. Reason given by the drafter (unverified explanation, not evidence): ${terminal(hostileLines)}`
      )
      const heading = tokens.find((t) => t.type === "heading" && shown(t).startsWith("Fact 1:"))!
      assert.strictEqual(shown(heading), `Fact 1: ${label}`)
      const rejectedTokens = allTokens(marked.lexer(rejected, { gfm: true }))
      const labels = rejectedTokens.filter((t) => t.type === "codespan").map((t) => (t as Token & { text: string }).text)
      assert.include(labels, unknownLabel)
      assert.include(labels, OTHER)
    }))

  it.effect("snippets are code blocks: every space, tab and line of them kept, and their fence cannot be closed from inside", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* renderings
      const blocks = (markdown: string) =>
        allTokens(marked.lexer(markdown, { gfm: true })).filter((t) => t.type === "code").map((t) => (t as Token & { text: string }).text)
      const visible = (s: string) => s.split("\n").map(terminal).join("\n")
      assert.deepStrictEqual(blocks(verified), [visible(excerpt), visible(`Net sales were  ${hostileLines}`)])
      assert.include(blocks(verified)[0], "Net sales  were")
      assert.include(blocks(rejected), visible(`Net sales were  ${hostileLines}`))
      // Rendered as preformatted text, where a browser does not collapse the double space.
      const html = marked.parse(rejected, { gfm: true, async: false })
      assert.match(html, /<pre><code class="language-text">Net sales were {2}Total/)
    }))

  it.effect("counts are pluralised, facts numbered from 1, no unavailable note without an unavailable fact", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* renderings
      assert.include(verified, "1 verified citation, 1 unavailable")
      assert.include(verified, "## Fact 1: ")
      assert.include(verified, "## Fact 2: q4_forecast")
      assert.include(verified, unavailableNote)
      assert.include(rejected, "in 2 facts")
      assert.match(rejected, /### Fact 3: `SnippetAbsent`/)
      const onlyCited = Render.render(
        "markdown",
        Rendering.Verified({
          report: (yield* Effect.provide(
            Effect.flatMap(Gate.Gate, (g) =>
              g.checkJson(JSON.stringify({
                facts: [{ state: "cited", label: "q3_x", source: SOURCE, captureSha256: record.sha256, snippet: "Header" }]
              }))),
            Gate.layerWithStore({ sources: [SOURCE], labels: ["q3_x"] }).pipe(Layer.provide(MemoryStore.layer({ records: [record] })))
          )),
          captures: new Map()
        })
      )
      assert.notInclude(onlyCited, unavailableNote)
      assert.include(onlyCited, "1 verified citation, 0 unavailable")
      assert.include(onlyCited, "1 occurrence")
    }))
})
