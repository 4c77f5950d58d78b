/**
 * The review page's report, PDF, drift and upload views in headless Chromium against the real service
 * on 127.0.0.1: a report fact opens the PDF page that holds its span, drawn by pdf.js from the stored
 * body, with the sentence marked in view (previous / next across pages); decisions recorded from the
 * page and the log updated; the drift audit side by side with word diffs and material flags; an
 * answer and a report uploaded as files; hostile sources inert; keyboard-only use; CSRF refusal.
 *
 * With UI_SCREENSHOTS=1 the pages are saved to docs/ui/*.png (docs/ui.md shows them).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { testServer } from "./httpServer.js"
import { makePdf } from "./pdfWriter.js"
import { call, startService, tokens } from "./serverSupport.js"
import { skipped } from "./support/browser.js"
import { completedRun, promise, shot, signedInPage, waitFor as waitInPage } from "./support/reviewPage.js"

const quote = "Inventory at the end of Q3 was 1,120 units"
const filler = (page: number, lines: number) => Array.from({ length: lines }, (_, i) => `Page ${page}, line ${i + 1}: nothing of note here.`)

/** Three pages of 48 lines; the quote on page 1 (line 6), page 2 (line 21) and page 3 (line 45, near the foot). */
const pageLines = [
  [...filler(1, 5), `${quote}.`, ...filler(1, 42)],
  [...filler(2, 10), "<script>window.__citegateExecuted(\"pdf\")</script>", ...filler(2, 9), `Again: ${quote}.`, ...filler(2, 27)],
  [...filler(3, 44), `Finally: ${quote}.`, ...filler(3, 3)]
]
/** The quote's line on page 3 (0-based), for the highlight's expected position. */
const quoteLine = 44
const pdf = makePdf(pageLines, { javascript: "app.alert('pdf script ran')" })

const salesOf = (version: 1 | 2) => `Quarterly report.\nNet sales were ${version === 1 ? "4,210" : "4,410"} units in Q3.\nNothing else.\n`
const hostileOf = (version: 1 | 2) =>
  `Hostile source.\n<img src=x onerror="window.__citegateExecuted('${version === 1 ? "img" : "drift"}')"> shown as text.\n<a href="javascript:window.__citegateExecuted('link')">open</a>\n`

const answerOf = (digest: string) => `Sales were 4,210 units.[1]{c1}\nEVI1\nMANIFEST ${digest}\nc1|1|"Net sales were 4,210 units"\nEND_EVI1\n`

/** Polls `expression` in the page, allowing for the PDF worker's cold start. */
const waitFor = (page: Page, expression: string, timeoutMs = 15_000) => waitInPage(page, expression, timeoutMs)

/** Sources, the service, two runs (the sources change between them), a browser page signed in. */
const setup = Effect.gen(function*() {
  let version: 1 | 2 = 1
  const server = yield* testServer((req, res) => {
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { "content-type": type })
      res.end(body)
    }
    if (req.url === "/sales.txt") return send("text/plain; charset=utf-8", salesOf(version))
    if (req.url === "/report.pdf") return send("application/pdf", pdf)
    if (req.url === "/hostile.txt") return send("text/plain; charset=utf-8", hostileOf(version))
    res.writeHead(404).end()
  })
  const service = yield* startService({
    sources: [server.url("/sales.txt"), server.url("/report.pdf"), server.url("/hostile.txt")],
    config: {
      labels: ["q3_net_sales", "q3_inventory", "q4_forecast", "hostile_markup"],
      verify: { ambiguous: "accept" },
      // Generous: the PDF's extraction runs in a worker that starts cold on a loaded machine.
      capture: { timeoutMs: 30_000, contentTypes: ["text/plain", "application/pdf"] }
    }
  })
  const runId = yield* completedRun(service)
  version = 2
  const newRunId = yield* completedRun(service)
  const manifest = (yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })).json.manifest
  const digests = (manifest.sources as Array<{ status: string; captureSha256: string }>).map((s) => s.captureSha256)
  assert.deepStrictEqual((manifest.sources as Array<{ status: string }>).map((s) => s.status), ["captured", "captured", "captured"], JSON.stringify(manifest.sources))
  const report = JSON.stringify({
    facts: [
      { state: "cited", label: "q3_net_sales", source: server.url("/sales.txt"), captureSha256: digests[0], snippet: "Net sales were 4,210 units" },
      { state: "cited", label: "q3_inventory", source: server.url("/report.pdf"), captureSha256: digests[1], snippet: quote, page: 3 },
      { state: "unavailable", label: "q4_forecast", reason: "not published yet" },
      { state: "cited", label: "hostile_markup", source: server.url("/hostile.txt"), captureSha256: digests[2], snippet: "<img src=x onerror=\"window.__citegateExecuted('img')\">" }
    ]
  }, null, 2)
  // Expected refusals (no session yet: 401; the test's own request without a CSRF token: 403).
  const { evaluate, executed, foreign, page, problems } = yield* signedInPage(service, /Failed to load resource: the server responded with a status of (401|403)/)
  const verifyReport = Effect.gen(function*() {
    yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}/report`))
    yield* promise(() => page.waitForSelector("#report-input"))
    yield* promise(() => page.fill("#report-input", report))
    yield* promise(() => page.click("#report-submit"))
    yield* waitFor(page, `document.querySelectorAll("#facts > li").length === 4`)
  })
  return { service, runId, newRunId, manifest, report, page, executed, problems, foreign, evaluate, verifyReport }
})

/** The marked sentence on the drawn page: in the scrolled view, focused, where the text line is, over drawn text. */
const highlight = `(() => {
  const view = document.getElementById("pdf-view"), box = document.getElementById("pdf-highlight"), canvas = view.querySelector("canvas")
  if (box === null || view.getAttribute("aria-busy") === "true") return null
  const r = box.getBoundingClientRect(), v = view.getBoundingClientRect(), c = canvas.getBoundingClientRect()
  const scale = c.width / 612
  const ctx = canvas.getContext("2d"), ratio = canvas.width / c.width
  const pixels = ctx.getImageData(Math.floor((r.left - c.left) * ratio), Math.floor((r.top - c.top) * ratio), Math.max(1, Math.floor(r.width * ratio)), Math.max(1, Math.floor(r.height * ratio))).data
  let dark = 0
  for (let i = 0; i < pixels.length; i += 4) if (pixels[i] < 100 && pixels[i + 3] > 0) dark++
  return {
    page: view.getAttribute("data-page"),
    inView: r.top >= v.top && r.bottom <= v.bottom && r.left >= v.left && r.right <= v.right,
    inWindow: r.top >= 0 && r.bottom <= innerHeight,
    scrollTop: view.scrollTop,
    topInPoints: (r.top - c.top) / scale,
    widthInPoints: r.width / scale,
    dark,
    focused: document.activeElement === box,
    position: document.getElementById("occurrence-position").textContent,
    textHidden: document.getElementById("source-text").hidden
  }
})()`

describe.skipIf(skipped("test/ui.review.browser.test.ts"))("the review page's report, PDF, drift and upload views in Chromium", { timeout: 180_000 }, () => {
  it.scopedLive("a PDF fact opens page 3 drawn from the stored body, the sentence marked and in view; previous / next across pages", () =>
    Effect.gen(function*() {
      const { evaluate, foreign, page, problems, verifyReport } = yield* setup
      yield* verifyReport
      yield* promise(() => page.click(`#facts button.fn[data-footnote="2"]`))
      yield* waitFor(page, `(${highlight})?.page === "3"`)
      const shown = (yield* evaluate<any>(highlight))!
      // The line's baseline is 720 - 14 * line points up the page; its box starts one font size (12) above it.
      const expectedTop = 792 - (720 - 14 * quoteLine) - 12
      assert.deepStrictEqual([shown.inView, shown.inWindow, shown.focused, shown.textHidden], [true, true, true, true], JSON.stringify(shown))
      assert.isAbove(shown.scrollTop, 0, "the page view scrolled down to the sentence near the page's foot")
      assert.approximately(shown.topInPoints, expectedTop - 1, 4, JSON.stringify(shown))
      assert.isAbove(shown.widthInPoints, 150, "the box spans the quote's words")
      assert.isAbove(shown.dark, 50, "text is drawn under the box")
      assert.strictEqual(shown.position, "Occurrence 3 of 3, page 3 of 3")
      yield* shot(page, "pdf")
      yield* promise(() => page.click("#occurrence-previous"))
      yield* waitFor(page, `(${highlight})?.page === "2"`)
      const second = (yield* evaluate<any>(highlight))!
      assert.deepStrictEqual([second.inView, second.position], [true, "Occurrence 2 of 3, page 2 of 3"])
      assert.approximately(second.topInPoints, 792 - (720 - 14 * 20) - 13, 4)
      yield* promise(() => page.click("#occurrence-previous"))
      yield* waitFor(page, `(${highlight})?.page === "1"`)
      yield* promise(() => page.click("#occurrence-previous"))
      yield* waitFor(page, `(${highlight})?.page === "3"`)
      // The text fact opens as extracted text, as before.
      yield* promise(() => page.click(`#facts button.fn[data-footnote="1"]`))
      yield* waitFor(page, `document.querySelector("#source-text mark.current")?.textContent === "Net sales were 4,210 units"`)
      assert.isTrue(yield* evaluate<boolean>(`document.getElementById("pdf-view").hidden`))
      assert.deepStrictEqual([problems, foreign, yield* evaluate<Array<string>>("window.__violations")], [[], [], []])
    }))

  it.scopedLive("decisions are recorded from the page (cookie and CSRF token) and the log updates; a request without the token is refused", () =>
    Effect.gen(function*() {
      const { evaluate, page, problems, runId, service, verifyReport } = yield* setup
      yield* verifyReport
      assert.deepStrictEqual(
        yield* evaluate<Array<string>>(`Array.from(document.querySelectorAll("#facts > li")).map((li) => li.getAttribute("data-fact") + ":" + li.getAttribute("data-outcome"))`),
        ["0:verified", "1:verified", "2:unavailable", "3:verified"]
      )
      yield* promise(() => page.selectOption("#decision-2", "wrong-unit"))
      yield* promise(() => page.fill("#note-2", "checked on page 3"))
      yield* promise(() => page.click("#record-2"))
      yield* waitFor(page, `document.querySelectorAll("#decisions tbody tr").length === 1`)
      assert.strictEqual(yield* evaluate<string>(`document.getElementById("review-result-2").textContent`), "Recorded: wrong-unit (#1)")
      const row = yield* evaluate<Array<string>>(`Array.from(document.querySelectorAll("#decisions tbody tr td")).map((td) => td.textContent)`)
      assert.deepStrictEqual(row.slice(0, 5), ["1", "2 q3_inventory", "wrong-unit", "checked on page 3", "admin"])
      yield* promise(() => page.selectOption("#decision-2", "supported"))
      yield* promise(() => page.click("#record-2"))
      yield* waitFor(page, `document.querySelectorAll("#decisions tbody tr").length === 2`)
      assert.deepStrictEqual(
        yield* evaluate<Array<string>>(`Array.from(document.querySelectorAll("#decisions tbody tr")).map((tr) => tr.getAttribute("data-status") + " " + tr.cells[2].textContent)`),
        ["superseded wrong-unit (superseded by 2)", "current supported"]
      )
      yield* shot(page, "report")
      // Stored: the service's own log, read with the bearer token, names the token as the reviewer.
      const log = (yield* call(service, `/v1/runs/${runId}/reviews`, { token: tokens.admin })).json
      assert.deepStrictEqual(log.decisions.map((d: any) => [d.seq, d.record.decision, d.record.reviewer, d.record.fact.index]), [[1, "wrong-unit", "admin", 1], [2, "supported", "admin", 1]])
      // The same POST from the page without the CSRF token is refused and records nothing.
      const refused = yield* evaluate<[number, string]>(`fetch("/v1/runs/${runId}/reviews", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ report: document.getElementById("report-input").value, fact: 1, decision: "unsure" }) }).then(async (r) => [r.status, (await r.json())._tag])`)
      assert.deepStrictEqual(refused, [403, "CsrfRejected"])
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/reviews`, { token: tokens.admin })).json.decisions.length, 2)
      // After a reload the verified report shows each fact's current decision.
      yield* promise(() => page.click("#report-submit"))
      yield* waitFor(page, `document.querySelector('#facts > li[data-fact="1"] p.help')?.textContent === "Current decision: supported by admin"`)
      assert.deepStrictEqual(problems, [])
    }))

  it.scopedLive("drift: the audit against the newer run, old and new side by side, changed words marked, material flags", () =>
    Effect.gen(function*() {
      const { evaluate, newRunId, page, problems, report, runId, service } = yield* setup
      yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}`))
      yield* promise(() => page.click("#drift-link"))
      yield* promise(() => page.waitForSelector("#drift-against"))
      yield* promise(() => page.selectOption("#drift-against", newRunId))
      yield* promise(() => page.fill("#drift-report", report))
      yield* promise(() => page.click("#drift-submit"))
      yield* waitFor(page, `document.querySelectorAll("#drift-findings section.finding").length === 3`)
      assert.match(yield* evaluate<string>(`document.getElementById("drift-status").textContent`), /^Outcome: drifted; 3 citations: 1 unchanged, 0 relocated, 2 changed \(1 material\), 0 deleted, 0 source missing$/)
      const findings = yield* evaluate<Array<any>>(`Array.from(document.querySelectorAll("#drift-findings section.finding")).map((s) => ({
        status: s.getAttribute("data-status"),
        old: Array.from(s.querySelectorAll("[data-side=old] del.chg")).map((d) => d.textContent),
        new: Array.from(s.querySelectorAll("[data-side=new] ins.chg")).map((d) => d.textContent),
        flags: Array.from(s.querySelectorAll("ul.material li")).map((li) => li.getAttribute("data-kind") + " " + li.textContent)
      }))`)
      assert.deepStrictEqual(findings[0], { status: "changed", old: ["4,210"], new: ["4,410"], flags: ["numbers numbers: 4,210 → 4,410"] })
      assert.deepStrictEqual(findings[1], { status: "unchanged", old: [], new: [], flags: [] })
      // The hostile source's change is shown as text on both sides.
      assert.deepStrictEqual([findings[2].status, findings[2].old, findings[2].new], ["changed", ["img"], ["drift"]])
      yield* shot(page, "drift")
      assert.deepStrictEqual(problems, [])
    }))

  it.scopedLive("an answer and a report uploaded as files verify as pasted ones do", () =>
    Effect.gen(function*() {
      const { evaluate, manifest, page, report, runId, service } = yield* setup
      yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}`))
      yield* promise(() => page.waitForSelector("#answer-file"))
      const answer = answerOf(manifest.digest)
      yield* promise(() => page.setInputFiles("#answer-file", { name: "answer.evi1", mimeType: "text/plain", buffer: Buffer.from(answer) }))
      yield* waitFor(page, `document.getElementById("answer-input").value.length > 0`)
      assert.strictEqual(yield* evaluate<string>(`document.getElementById("answer-input").value`), answer)
      assert.match(yield* evaluate<string>(`document.querySelector("form.answer-form [role=status]").textContent`), /^Loaded answer\.evi1 \(\d+ bytes\)$/)
      yield* promise(() => page.click("form.answer-form button[type=submit]"))
      yield* waitFor(page, `document.getElementById("stream-status")?.textContent === "Done: grounded"`)
      assert.strictEqual(yield* evaluate<string>(`document.querySelector('#answer-text button.fn[data-footnote="1"]').getAttribute("data-outcome")`), "verified")
      yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}/report`))
      yield* promise(() => page.waitForSelector("#report-file"))
      yield* promise(() => page.setInputFiles("#report-file", { name: "report.json", mimeType: "application/json", buffer: Buffer.from(report) }))
      yield* waitFor(page, `document.getElementById("report-input").value.length > 0`)
      yield* promise(() => page.click("#report-submit"))
      yield* waitFor(page, `document.querySelectorAll("#facts > li").length === 4`)
      assert.strictEqual(yield* evaluate<string>(`document.getElementById("report-status").textContent`), "Verified: grounded; 4 facts, 0 retracted")
    }))

  it.scopedLive("hostile sources stay inert on the report, PDF and drift pages", () =>
    Effect.gen(function*() {
      const { evaluate, executed, foreign, newRunId, page, problems, runId, service, verifyReport } = yield* setup
      yield* verifyReport
      assert.include(yield* evaluate<string>(`document.querySelector('#facts > li[data-fact="3"]').textContent`), "<img src=x onerror=")
      yield* promise(() => page.click(`#facts button.fn[data-footnote="4"]`))
      yield* waitFor(page, `document.querySelector("#source-text mark.current")?.textContent.startsWith("<img")`)
      // The PDF with a script line and a JavaScript open action: drawn, never run.
      yield* promise(() => page.click(`#facts button.fn[data-footnote="2"]`))
      yield* waitFor(page, `(${highlight})?.page === "3"`)
      yield* promise(() => page.click("#occurrence-previous"))
      yield* waitFor(page, `(${highlight})?.page === "2"`)
      yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}/drift`))
      yield* promise(() => page.waitForSelector("#drift-against"))
      yield* promise(() => page.selectOption("#drift-against", newRunId))
      yield* promise(() => page.click("#drift-submit"))
      yield* waitFor(page, `document.querySelectorAll("#drift-findings section.finding").length === 3`)
      assert.include(yield* evaluate<string>(`document.getElementById("drift-findings").textContent`), "onerror=\"window.__citegateExecuted('drift')\"")
      yield* promise(() => page.waitForTimeout(300))
      assert.deepStrictEqual(
        yield* evaluate<Array<number>>(`[document.scripts.length, document.images.length, document.querySelectorAll("[onerror], [onclick], a[href^='javascript' i], iframe, object, embed").length]`),
        [1, 0, 0]
      )
      assert.deepStrictEqual(executed, [], "no script from a source ran")
      assert.deepStrictEqual(foreign, [], "nothing was fetched from elsewhere")
      // pdf.js ran under the strict policy without a single violation (no eval, its worker from this origin).
      assert.deepStrictEqual(yield* evaluate<Array<string>>("window.__violations"), [])
      assert.deepStrictEqual(problems, [])
    }))

  it.scopedLive("keyboard only: Tab reaches the report form, each fact and its decision controls; Enter opens the PDF page; [ / ] and Escape; a decision recorded by keys", () =>
    Effect.gen(function*() {
      const { evaluate, page, verifyReport } = yield* setup
      yield* verifyReport
      yield* promise(() => page.focus("#report-submit"))
      const active = `(() => { const a = document.activeElement; const s = getComputedStyle(a); return { id: a.id, footnote: a.getAttribute("data-footnote"), outline: s.outlineStyle + " " + s.outlineWidth } })()`
      const reached: Array<string> = []
      for (let i = 0; i < 12; i++) {
        yield* promise(() => page.keyboard.press("Tab"))
        const focus = yield* evaluate<any>(active)
        reached.push(focus.footnote !== null ? `fn${focus.footnote}` : focus.id)
        assert.strictEqual(focus.outline, "solid 3px", `focus visible on ${reached.at(-1)}`)
        if (focus.footnote === "2") break
      }
      assert.deepStrictEqual(reached, ["fn1", "decision-1", "note-1", "record-1", "fn2"])
      yield* promise(() => page.keyboard.press("Enter"))
      yield* waitFor(page, `(${highlight})?.page === "3" && document.activeElement.id === "pdf-highlight"`)
      yield* promise(() => page.keyboard.press("["))
      yield* waitFor(page, `(${highlight})?.page === "2" && document.activeElement.id === "pdf-highlight"`)
      yield* promise(() => page.keyboard.press("]"))
      yield* waitFor(page, `(${highlight})?.page === "3" && document.activeElement.id === "pdf-highlight"`)
      yield* promise(() => page.keyboard.press("Escape"))
      assert.strictEqual((yield* evaluate<any>(active)).footnote, "2")
      yield* promise(() => page.keyboard.press("Tab"))
      assert.strictEqual((yield* evaluate<any>(active)).id, "decision-2")
      yield* promise(() => page.keyboard.press("ArrowDown"))
      yield* promise(() => page.keyboard.press("Tab"))
      yield* promise(() => page.keyboard.type("by keyboard"))
      yield* promise(() => page.keyboard.press("Tab"))
      assert.strictEqual((yield* evaluate<any>(active)).id, "record-2")
      yield* promise(() => page.keyboard.press("Enter"))
      yield* waitFor(page, `document.querySelectorAll("#decisions tbody tr").length === 1`)
      assert.deepStrictEqual(
        (yield* evaluate<Array<string>>(`Array.from(document.querySelectorAll("#decisions tbody tr td")).map((td) => td.textContent)`)).slice(2, 4),
        ["wrong-metric", "by keyboard"]
      )
    }))
})
