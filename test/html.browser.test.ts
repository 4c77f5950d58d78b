import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { chromium } from "playwright-core"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import { accessedAt, gateFor, runDirectoryWith, tempDirectory } from "./support.js"

// Debian's chromium package (installed by .ci/run); no browser is downloaded.
const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

// Without Chromium the test is skipped, with the reason printed, so `npm test` passes on a fresh
// machine; under CI (where .ci/run installs Chromium) a missing browser is a failure instead.
const inCi = (process.env["CI"] ?? "") !== "" && process.env["CI"] !== "false" && process.env["CI"] !== "0"
const chromiumPresent = fs.existsSync(executablePath)
const skipped = !chromiumPresent && !inCi
if (skipped) {
  console.warn(
    `SKIPPED test/html.browser.test.ts: Chromium not found at ${executablePath} ` +
      "(apt-get install chromium, or set CHROMIUM_PATH); with CI set, this is a failure."
  )
}

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

const browser = Effect.acquireRelease(
  Effect.promise(async () => {
    const found = await fsp.access(executablePath).then(() => true, () => false)
    assert.isTrue(found, `Chromium not found at ${executablePath}: apt-get install chromium, or set CHROMIUM_PATH`)
  }).pipe(Effect.zipRight(Effect.promise(() =>
    chromium.launch({
      executablePath,
      args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  ))),
  (b) => Effect.promise(() => b.close())
)

describe("HTML rendering in headless Chromium", () => {
  it.scopedLive.skipIf(skipped)("no script from a source or report runs, and each highlight equals its snippet", () =>
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
      // Only the renderer's own in-page footnote links exist.
      for (const href of state.links) assert.match(href ?? "", /^#fact-\d+-excerpt$/)
      assert.deepStrictEqual(state.highlighted, snippets)
      assert.deepStrictEqual(state.quotes, snippets)
      assert.deepStrictEqual(state.anchors, snippets.map(() => true))
    }))
})
