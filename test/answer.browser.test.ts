import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Answer from "../src/answer/Answer.js"
import * as AnswerRender from "../src/answer/Render.js"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt, tempDirectory } from "./support.js"
import { browser, skipped } from "./support/browser.js"

const skip = skipped("test/answer.browser.test.ts")

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const attack = `<script>window.__pwned = "script"; document.title = "pwned"</script>` +
  `<img src=x onerror="window.__pwned='img'"><svg onload="window.__pwned='svg'"></svg>` +
  `<a href="javascript:window.__pwned='link'">link</a>`
const quotes = ["Net sales were 4,210 units & rising.\n" + attack, "Q3 2026\r\nNet sales"]
const record = makeCaptureRecord({
  source: SOURCE,
  text: `Q3 2026\r\nNet sales were 4,210 units & rising.\n${attack}\nTail\n`,
  accessedAt,
  contentType: "text/plain"
})
const config = { sources: [SOURCE], labels: ["unused"] } as unknown as PipelineConfig

describe.skipIf(skip)("answer HTML in headless Chromium", () => {
  it.scopedLive("no script from an answer or a source runs; footnotes hold the quotes, the removed claim is struck out", () =>
    Effect.gen(function*() {
      const { answer, captures } = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(config)
        const answers = yield* Answer.Answers
        const bound = Either.getOrThrowWith(Answer.fromJson(JSON.stringify({
          format: "citegate.answer/1",
          manifest: manifest.digest,
          claims: [
            { id: `<img src=x onerror="window.__pwned=1">`, text: `Sales ${attack}`, citations: quotes.map((quote) => ({ source: 1, quote })) },
            { id: "gone", text: `Removed ${attack}`, citations: [{ source: 1, quote: `absent ${attack}` }] }
          ],
          uncited: [`An uncited sentence long enough to be flagged ${attack}.`]
        }), manifest), (e) => new Error(e.message))
        return yield* answers.verify(bound)
      }).pipe(Effect.provide(Answer.layer({ mode: "drop", uncited: "report" }).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(config)),
        Layer.provideMerge(MemoryStore.layer({ records: [record] }).pipe(Layer.orDie))
      )))
      const html = AnswerRender.render("html", AnswerRender.AnswerRendering.Verified({ answer, captures }))
      const file = path.join(yield* tempDirectory, "answer.html")
      yield* Effect.promise(() => fsp.writeFile(file, html))

      const b = yield* browser
      const page = yield* Effect.promise(() => b.newPage())
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      yield* Effect.promise(() => page.goto(`file://${file}`))
      // Evaluated in the page; source text because the project is type-checked without DOM types.
      const state = yield* Effect.promise(() =>
        page.evaluate(`(() => ({
          pwned: window.__pwned ?? null,
          title: document.title,
          scripts: document.scripts.length,
          images: document.images.length,
          links: Array.from(document.querySelectorAll("a")).map((a) => a.getAttribute("href")),
          ids: Array.from(document.querySelectorAll("[id]")).map((e) => e.id),
          marks: Array.from(document.querySelectorAll("section.capture mark")).map((m) => [m.getAttribute("data-facts"), m.textContent]),
          quotes: Array.from(document.querySelectorAll("ol.footnotes blockquote.quote")).map((q) => q.textContent),
          claim: document.querySelector("p.claim")?.firstChild?.textContent ?? null,
          struck: Array.from(document.querySelectorAll("p.removed del")).map((d) => d.textContent)
        }))()`) as Promise<{
          pwned: string | null
          title: string
          scripts: number
          images: number
          links: Array<string | null>
          ids: Array<string>
          marks: Array<[string | null, string | null]>
          quotes: Array<string | null>
          claim: string | null
          struck: Array<string | null>
        }>
      )
      assert.isNull(state.pwned)
      assert.strictEqual(state.title, "citegate: verified answer")
      assert.strictEqual(state.scripts, 0)
      assert.strictEqual(state.images, 0)
      assert.deepStrictEqual(dialogs, [])
      // Only links inside the page, each to an element it has: footnotes, their highlights in the captured sources.
      for (const href of state.links) {
        assert.match(href ?? "", /^#((fn|ref)-\d+|fn-\d+-excerpt|capture-\d+)$/)
        assert.include(state.ids, href!.slice(1))
      }
      // The capture text is shown with every verified quote highlighted.
      // Footnote 1's highlight pieces, in order, spell its quote (the attack is shown as text, never run).
      const first = state.marks.filter(([facts]) => (facts ?? "").split(" ").includes("1")).map(([, text]) => text).join("")
      assert.strictEqual(first, quotes[0])
      assert.isTrue(state.marks.some(([facts]) => (facts ?? "").split(" ").includes("2")))
      assert.deepStrictEqual(state.quotes, quotes)
      assert.strictEqual(state.claim, `Sales ${attack}`)
      assert.deepStrictEqual(state.struck, [`Removed ${attack}`])
    }), 60_000)
})
