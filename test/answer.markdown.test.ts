import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { marked, type Token } from "marked"
import * as Answer from "../src/answer/Answer.js"
import * as AnswerRender from "../src/answer/Render.js"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import { terminal } from "../src/render/Escape.js"
import { provenanceNote } from "../src/render/Rendering.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt } from "./support.js"

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl

/** Inline and block constructs Markdown (CommonMark + GFM) could make of untrusted text. */
const hostile = "- Total 4,210 units <script>alert(1)</script> <b>b</b> [x](javascript:alert(1)) ![i](https://evil.test/i.png) " +
  "*em* **strong** _u_ ~~del~~ `code` | a | b | &amp; https://evil.test/p www.evil.test mail@evil.test <https://evil.test/auto>"
const quote = "Net sales  were 4,210 units\n```\n</code></pre><img src=x onerror=alert(1)>\n`````"

const record = makeCaptureRecord({ source: SOURCE, text: `Header\n${quote}\nTail`, accessedAt, contentType: "text/plain" })
const config = { sources: [SOURCE], labels: ["unused"] } as unknown as PipelineConfig

const rendered = Effect.gen(function*() {
  const manifest = yield* Manifest.make(config)
  const answers = yield* Answer.Answers
  const text = JSON.stringify({
    format: "citegate.answer/1",
    manifest: manifest.digest,
    claims: [
      { id: "kept", text: hostile, citations: [{ source: 1, quote }, { source: 1, quote: `${hostile} absent` }] },
      { id: "gone <i>x</i>", text: `# ${hostile}`, citations: [{ source: 1, quote: "not in the capture" }] }
    ],
    uncited: [`${hostile} and it goes on long enough to be flagged.`]
  })
  const bound = Either.getOrThrow(Answer.fromJson(text, manifest))
  const { answer, captures } = yield* answers.verify(bound)
  return { answer, markdown: AnswerRender.render("markdown", AnswerRender.AnswerRendering.Verified({ answer, captures })) }
}).pipe(Effect.provide(Answer.layer({ mode: "drop", uncited: "report" }).pipe(
  Layer.provide(Verifier.layer),
  Layer.provide(Policy.layer(config)),
  Layer.provideMerge(MemoryStore.layer({ records: [record] }).pipe(Layer.orDie))
)))

const allTokens = (tokens: ReadonlyArray<Token>): Array<Token> =>
  tokens.flatMap((token) => {
    const t = token as Token & { tokens?: Array<Token>; items?: Array<Token> }
    return [token, ...allTokens(t.tokens ?? []), ...allTokens(t.items ?? [])]
  })

const shown = (token: Token): string => {
  const t = token as Token & { tokens?: Array<Token>; text?: string }
  return t.tokens !== undefined ? t.tokens.map(shown).join("") : (t.text ?? "")
}

describe("answer Markdown under a CommonMark + GFM parser", () => {
  it.effect("no markup, link, image or HTML forms from untrusted text; removed claims are the only strike-through", () =>
    Effect.gen(function*() {
      const { answer, markdown } = yield* rendered
      assert.deepStrictEqual(answer.removed.map((c) => c.id), ["gone <i>x</i>"])
      const tokens = allTokens(marked.lexer(markdown, { gfm: true }))
      const ownEmphasis = (s: string) =>
        s === provenanceNote || /^Claim \d+\.$/.test(s) || /^\[\d+\]$/.test(s) || s.startsWith("GROUNDED") ||
        /^Retracted citation \d+:$/.test(s)
      for (const token of tokens) {
        assert.notInclude(["html", "image", "table", "blockquote", "hr", "def", "list_item_task"], token.type, `${token.type}: ${token.raw}`)
        if (token.type === "link") assert.strictEqual((token as Token & { href: string }).href, SOURCE, token.raw)
        if (token.type === "strong" || token.type === "em") assert.isTrue(ownEmphasis(shown(token)), token.raw)
      }
      // The one strike-through is the removed claim's text, exactly as a reader sees it.
      const struck = tokens.filter((t) => t.type === "del")
      assert.deepStrictEqual(struck.map(shown), [terminal(`# ${hostile}`)])
      // The grounded claim's text reads as given.
      const claim = tokens.find((t) => t.type === "paragraph" && t.raw.startsWith("**Claim 1.**"))!
      assert.strictEqual(shown(claim), `Claim 1. ${hostile} [1]`)
      // The quote is a code block holding every character and space.
      const code = tokens.filter((t) => t.type === "code").map((t) => (t as Token & { text: string }).text)
      assert.include(code, quote)
      const html = marked.parse(markdown, { gfm: true, async: false })
      assert.notMatch(html, /<(script|img|b|i|table|blockquote)[\s>]/i)
    }))
})
