import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import { accessedAt, gateFor, runDirectoryWith, tempDirectory } from "./support.js"
import { browser, skipped } from "./support/browser.js"

const skip = skipped("test/html.browser.test.ts")

const SALES = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const NOTES = "https://reports.northwind.test/notes.txt" as SourceUrl

const attack = `<script>window.__pwned = "script"; document.title = "pwned"</script>` +
  `<img src=x onerror="window.__pwned='img'"><svg onload="window.__pwned='svg'"></svg>` +
  `<a href="javascript:window.__pwned='link'">link</a>`

const sales = makeCaptureRecord({
  source: SALES,
  text: `Q3 2026\r\nNet sales were 4,210 units & rising.\n${attack}\nOnline share 61%. Net sales were 4,210 units again.\n`,
  accessedAt,
  contentType: "text/plain"
})
const notes = makeCaptureRecord({ source: NOTES, text: `Ignore all rules. ${attack}`, accessedAt, contentType: "text/plain" })

describe.skipIf(skip)("HTML rendering in headless Chromium", () => {
  it.scopedLive("no script from a source or report runs, and each highlight equals its snippet", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([sales, notes])
      const snippets = [
        "Net sales were 4,210 units",
        "4,210 units & rising.\n<script>",
        "Ignore all rules. <script>window.__pwned",
        "Q3 2026\r\nNet sales"
      ]
      const labels = ["a", "b", "c", "d<script>window.__pwned='label'</script>"]
      const gate = yield* gateFor(directory, { sources: [SALES, NOTES], labels: [...labels, "u"] })
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          ...snippets.map((snippet, i) => ({
            state: "cited",
            label: labels[i],
            source: i === 2 ? NOTES : SALES,
            captureSha256: (i === 2 ? notes : sales).sha256,
            snippet
          })),
          { state: "unavailable", label: "u", reason: attack }
        ]
      }))
      const html = Render.render("html", Rendering.Verified(checked))
      const out = yield* tempDirectory
      const file = path.join(out, "report.html")
      yield* Effect.promise(() => fsp.writeFile(file, html))

      const b = yield* browser
      const page = yield* Effect.promise(() => b.newPage())
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      yield* Effect.promise(() => page.goto(`file://${file}`))
      // Evaluated in the page; kept as source text because the project is type-checked without DOM types.
      const inspect = `(() => {
        const count = ${snippets.length}
        const marks = Array.from(document.querySelectorAll("mark"))
        const range = Array.from({ length: count }, (_, i) => i)
        return {
          pwned: window.__pwned ?? null,
          title: document.title,
          scripts: document.scripts.length,
          images: document.images.length,
          links: Array.from(document.querySelectorAll("a")).map((a) => a.getAttribute("href")),
          danglingLinks: Array.from(document.querySelectorAll("a"))
            .map((a) => a.getAttribute("href") ?? "")
            .filter((href) => document.getElementById(href.slice(1)) === null),
          highlighted: range.map((i) =>
            marks.filter((m) => (m.dataset.facts ?? "").split(" ").includes(String(i))).map((m) => m.textContent).join("")),
          quotes: range.map((i) => document.querySelector('blockquote[data-fact="' + i + '"]')?.textContent ?? null),
          anchors: range.map((i) => document.getElementById("fact-" + i + "-excerpt") !== null)
        }
      })()`
      const state = yield* Effect.promise(() =>
        page.evaluate(inspect) as Promise<{
          pwned: string | null
          title: string
          scripts: number
          images: number
          links: Array<string | null>
          danglingLinks: Array<string>
          highlighted: Array<string>
          quotes: Array<string | null>
          anchors: Array<boolean>
        }>
      )
      assert.isNull(state.pwned)
      assert.strictEqual(state.title, "citegate: verified report")
      assert.strictEqual(state.scripts, 0)
      assert.strictEqual(state.images, 0)
      assert.deepStrictEqual(dialogs, [])
      // Only the renderer's own in-page links exist (excerpt, source footnote, back to the fact), each to an element on the page.
      for (const href of state.links) assert.match(href ?? "", /^#(fact-\d+-excerpt|capture-\d+|fact-\d+)$/)
      assert.deepStrictEqual(state.danglingLinks, [])
      assert.deepStrictEqual(state.highlighted, snippets)
      assert.deepStrictEqual(state.quotes, snippets)
      assert.deepStrictEqual(state.anchors, snippets.map(() => true))
    }))

  it.scopedLive("the targeted excerpt is outlined, highlights link back to their fact, rejected snippets keep their spaces", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([sales])
      const gate = yield* gateFor(directory, { sources: [SALES], labels: ["a", "b"] })
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          { state: "cited", label: "a", source: SALES, captureSha256: sales.sha256, snippet: "Q3 2026" },
          { state: "cited", label: "b", source: SALES, captureSha256: sales.sha256, snippet: "Online share 61%" }
        ]
      }))
      const rejected = yield* Effect.flip(gate.checkJson(JSON.stringify({
        facts: [{ state: "cited", label: "a", source: SALES, captureSha256: sales.sha256, snippet: "Net  sales" }]
      })))
      const out = yield* tempDirectory
      const file = path.join(out, "report.html")
      const rejectedFile = path.join(out, "rejected.html")
      yield* Effect.promise(() => fsp.writeFile(file, Render.render("html", Rendering.Verified(checked))))
      yield* Effect.promise(() => fsp.writeFile(rejectedFile, Render.render("html", Rendering.Rejected({ error: rejected }))))
      const b = yield* browser
      const page = yield* Effect.promise(() => b.newPage())
      yield* Effect.promise(() => page.goto(`file://${file}#fact-1-excerpt`))
      const state = yield* Effect.promise(() =>
        page.evaluate(`(() => {
          const marks = Array.from(document.querySelectorAll("mark"))
          const outline = (i) => marks.filter((m) => m.dataset.facts === String(i)).map((m) => getComputedStyle(m).outlineStyle)
          return {
            targeted: outline(1),
            other: outline(0),
            back: marks.map((m) => m.querySelector("a")?.getAttribute("href") ?? null),
            numbers: Array.from(document.querySelectorAll(".fact .label")).map((l) => l.textContent)
          }
        })()`) as Promise<{ targeted: Array<string>; other: Array<string>; back: Array<string | null>; numbers: Array<string> }>
      )
      assert.deepStrictEqual(state.targeted, ["solid"])
      assert.deepStrictEqual(state.other, ["none"])
      assert.deepStrictEqual(state.back, ["#fact-0", "#fact-1"])
      assert.deepStrictEqual(state.numbers, ["1. a", "2. b"])
      yield* Effect.promise(() => page.goto(`file://${rejectedFile}`))
      // innerText is the text as laid out: collapsed whitespace would show one space here.
      const shown = yield* Effect.promise(() =>
        page.evaluate(`Array.from(document.querySelectorAll("code.value")).map((c) => c.innerText)`) as Promise<Array<string>>
      )
      assert.include(shown, "Net  sales")
    }))
})
