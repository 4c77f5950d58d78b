/**
 * The review page in headless Chromium against the real service on 127.0.0.1: sign-in (the session
 * cookie, HttpOnly), the runs list and one run, an answer pasted and verified live (a retraction shown
 * as it happens), a footnote opening its capture with the span highlighted and scrolled into view,
 * previous / next occurrence, hostile sources shown as text and never run (the test page records any
 * script execution), keyboard-only navigation with visible focus, the review decision's refusal.
 *
 * With UI_SCREENSHOTS=1 the pages are saved to docs/ui/*.png (docs/ui.md shows them).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import { testServer } from "./httpServer.js"
import { call, heldEachSource, startService, tokens } from "./serverSupport.js"
import { skipped } from "./support/browser.js"
import { completedRun, promise, screenshotDirectory, screenshots, shot, signedInPage, waitFor } from "./support/reviewPage.js"

const filler = (what: string, lines: number) => Array.from({ length: lines }, (_, i) => `Line ${i + 1} of the ${what}, which says nothing of note.\n`).join("")

/** Sales: the quote "sales were 4,210 units" twice, far down the text (the viewer must scroll). */
const salesText = `Quarterly report.\n${filler("preamble", 120)}Net sales were 4,210 units in Q3.\n${filler("middle", 60)}Again: net sales were 4,210 units in Q3.\n${filler("appendix", 60)}`

/** A plain-text source holding markup that would run if it were ever parsed as HTML, and a bidi override. */
const hostileText = [
  "Hostile source.",
  "<script>window.__citegateExecuted(\"script\")</script>",
  "<img src=x onerror=\"window.__citegateExecuted('img')\">",
  "<a href=\"javascript:window.__citegateExecuted('link')\">open</a>",
  "The file is named \u202Egnp.exe for sure.",
  ""
].join("\n")

const pageHtml = "<!doctype html><html><head><title>Stock</title></head><body><h1>Inventory</h1>" +
  "<p>Inventory at the end of Q3 was 1,120 units.</p><p><a href=\"javascript:window.__citegateExecuted('html-link')\">details</a></p></body></html>"

const answerBody = [
  "Sales were 4,210 units.[1]{c1} The source shows <img src=x onerror=\"window.__citegateExecuted('answer')\"> markup.[2]{c2}",
  "Inventory was 1,120 units.[3]{c3} Returns were 9%.[1]{c4}",
  ""
].join("\n")

const evidenceLines = [
  "c1|1|\"sales were 4,210 units\"",
  "c2|2|\"<script>window.__citegateExecuted(\\\"script\\\")</script>\"",
  "c3|3|\"Inventory at the end of Q3 was 1,120 units\"",
  "c4|1|\"Returns were 9% of units sold\""
]

const answerOf = (digest: string) => `${answerBody}EVI1\nMANIFEST ${digest}\n${evidenceLines.join("\n")}\nEND_EVI1\n`

/** Sources, the service, a completed run, a browser page signed in; executions and errors recorded. */
const setup = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    const send = (type: string, text: string) => {
      res.writeHead(200, { "content-type": type })
      res.end(text)
    }
    if (req.url === "/sales.txt") return send("text/plain; charset=utf-8", salesText)
    if (req.url === "/hostile.txt") return send("text/plain; charset=utf-8", hostileText)
    if (req.url === "/stock.html") return send("text/html; charset=utf-8", pageHtml)
    res.writeHead(404).end()
  })
  const service = yield* startService({
    sources: [server.url("/sales.txt"), server.url("/hostile.txt"), server.url("/stock.html")],
    config: { verify: { ambiguous: "accept" }, capture: { timeoutMs: 10_000, contentTypes: ["text/plain", "text/html"] } }
  })
  const runId = yield* completedRun(service)
  const digest = (yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })).json.manifest.digest as string
  // The page's expected refusal (no session yet: 401) is not a problem.
  const { evaluate, executed, foreign, page, problems } = yield* signedInPage(service, /Failed to load resource: the server responded with a status of 401/)
  const pasteAndVerify = Effect.gen(function*() {
    yield* promise(() => page.click(`a[href="#/runs/${runId}"]`))
    yield* promise(() => page.waitForSelector("#answer-input"))
    yield* promise(() => page.fill("#answer-input", answerOf(digest)))
    yield* promise(() => page.click("form.answer-form button[type=submit]"))
    yield* waitFor(page, `document.getElementById("stream-status")?.textContent.startsWith("Done")`)
  })
  return { service, runId, digest, page, executed, problems, foreign, evaluate, pasteAndVerify }
})

/** Where the current mark sits: inside the scrolled capture text and the window, and how far it scrolled. */
const currentMark = `(() => {
  const mark = document.querySelector("#source-text mark.current")
  const box = document.getElementById("source-text")
  if (mark === null) return null
  const r = mark.getBoundingClientRect(), c = box.getBoundingClientRect()
  return {
    text: mark.textContent,
    occurrence: mark.getAttribute("data-occurrence"),
    inBox: r.top >= c.top && r.bottom <= c.bottom,
    inWindow: r.top >= 0 && r.bottom <= innerHeight,
    scrollTop: box.scrollTop,
    position: document.getElementById("occurrence-position").textContent,
    focused: document.activeElement === mark
  }
})()`

const outcomes = `Array.from(document.querySelectorAll("#answer-text button.fn")).map((b) => b.getAttribute("data-footnote") + ":" + b.getAttribute("data-outcome"))`

describe.skipIf(skipped("test/ui.browser.test.ts"))("the review page in Chromium", { timeout: 120_000 }, () => {
  it.scopedLive("sign-in sets an HttpOnly cookie; the runs list and the run's sources, states and manifest", () =>
    Effect.gen(function*() {
      const { digest, evaluate, foreign, page, problems, runId, service } = yield* setup
      yield* shot(page, "runs")
      assert.strictEqual(yield* evaluate<string>("document.cookie"), "", "the session cookie is HttpOnly")
      assert.strictEqual(yield* evaluate<string>("document.getElementById('token')"), null, "the token field is gone")
      const cookies = yield* promise(() => page.context().cookies(service.base))
      assert.deepStrictEqual(cookies.map((c) => [c.name, c.httpOnly, c.sameSite]), [["citegate_session", true, "Strict"]])
      yield* promise(() => page.click(`a[href="#/runs/${runId}"]`))
      yield* promise(() => page.waitForSelector("table.sources"))
      const rows = yield* evaluate<Array<string>>(`Array.from(document.querySelectorAll("table.sources tbody tr")).map((r) => r.getAttribute("data-outcome") + " " + r.cells[1].textContent)`)
      assert.strictEqual(rows.length, 3)
      assert.isTrue(rows.every((r) => r.startsWith("captured http://127.0.0.1:")), rows.join("\n"))
      assert.include(yield* evaluate<string>(`document.querySelector("code.digest").textContent`), digest)
      yield* shot(page, "run")
      // The only run: its drift page says there is nothing to audit against and sends nothing.
      yield* promise(() => page.click("#drift-link"))
      yield* promise(() => page.waitForSelector("#drift-against"))
      assert.deepStrictEqual(
        yield* evaluate<[string, Array<boolean>, number]>(
          `[document.getElementById("drift-status").textContent, ["drift-against", "drift-report", "drift-file", "drift-submit"].map((id) => document.getElementById(id).disabled), document.querySelectorAll("#drift-against option").length]`
        ),
        ["No other run to audit against: start a newer run of these sources, then come back.", [true, true, true, true], 0]
      )
      // Signing out ends the session: the page asks for a token again, and the old cookie reads nothing.
      const before = yield* promise(() => page.context().cookies(service.base))
      yield* promise(() => page.click("#logout"))
      yield* promise(() => page.waitForSelector("#token"))
      const refused = yield* call(service, `/v1/runs/${runId}`, { headers: { cookie: `${before[0]!.name}=${before[0]!.value}` } })
      assert.strictEqual(refused.status, 401)
      assert.deepStrictEqual([problems, foreign], [[], []], JSON.stringify([problems, foreign]))
    }))

  it.scopedLive("a run waiting for a capture slot: its page says queued, follows its events, and shows it completed", () =>
    Effect.gen(function*() {
      // Each response held until released: the first run keeps the one slot, the second waits.
      const source = yield* heldEachSource
      const service = yield* startService({ sources: [source.url], server: { maxActiveRuns: 1 } })
      yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const queued = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id as string
      const { evaluate, foreign, page, problems } = yield* signedInPage(service, /Failed to load resource: the server responded with a status of 401/)
      yield* promise(() => page.click(`a[href="#/runs/${queued}"]`))
      yield* promise(() => page.waitForSelector("table.sources"))
      const progress = `[document.querySelector("dd .status").textContent, document.querySelector('section[aria-label="Capture progress"] h2')?.textContent ?? null, Array.from(document.querySelectorAll("ol.events li")).map((li) => li.textContent.split(" ")[0])]`
      assert.deepStrictEqual(yield* evaluate(progress), ["queued", "Queued", []])
      // The first run ends; the second takes the slot, and its page shows it running.
      yield* source.releaseNext
      yield* waitFor(page, `document.querySelectorAll("ol.events li").length === 1`)
      assert.deepStrictEqual(yield* evaluate(progress), ["running", "Capturing", ["started"]])
      // Its `done` reloads the page: completed, nothing left to follow.
      yield* source.releaseNext
      yield* waitFor(page, `document.querySelector("dd .status")?.textContent === "completed"`)
      assert.deepStrictEqual(yield* evaluate(progress), ["completed", null, []])
      assert.deepStrictEqual([problems, foreign], [[], []], JSON.stringify([problems, foreign]))
    }))

  it.scopedLive("a pasted answer verifies live: footnotes by outcome, the retracted sentence struck, counts; a footnote opens the span in view", () =>
    Effect.gen(function*() {
      const { evaluate, page, pasteAndVerify, problems, runId } = yield* setup
      yield* pasteAndVerify
      assert.deepStrictEqual(yield* evaluate<Array<string>>(outcomes), ["1:verified", "2:verified", "3:verified", "4:retracted"])
      assert.strictEqual(yield* evaluate<string>(`document.getElementById("stream-status").textContent`), "Done: grounded")
      assert.match(yield* evaluate<string>(`document.querySelector("#answer-text del").textContent`), /Returns were 9%\./)
      assert.match(yield* evaluate<string>(`document.getElementById("counts").textContent`), /^4 citations: 3 verified, 0 normalized \(NOT verbatim\), 1 retracted, 0 pending$/)
      assert.include(yield* evaluate<string>(`document.querySelector("#footnotes li[data-outcome=retracted]").textContent`), "SnippetAbsent")

      // Footnote 1: the sales capture, the first of two occurrences, scrolled into view.
      yield* promise(() => page.click(`#answer-text button.fn[data-footnote="1"]`))
      yield* promise(() => page.waitForSelector("#source-text mark.current"))
      const first = (yield* evaluate<any>(currentMark))!
      assert.deepStrictEqual([first.text, first.position, first.inBox, first.inWindow, first.focused], ["sales were 4,210 units", "Occurrence 1 of 2", true, true, true])
      assert.isAbove(first.scrollTop, 0, "the capture text scrolled to the span")
      yield* shot(page, "answer")
      yield* promise(() => page.click("#occurrence-next"))
      const second = (yield* evaluate<any>(currentMark))!
      assert.deepStrictEqual([second.text, second.position, second.occurrence, second.inBox], ["sales were 4,210 units", "Occurrence 2 of 2", "2", true])
      assert.isAbove(second.scrollTop, first.scrollTop)
      yield* promise(() => page.click("#occurrence-previous"))
      assert.strictEqual((yield* evaluate<any>(currentMark))!.position, "Occurrence 1 of 2")

      // Footnote 3: the HTML capture, as its extracted text.
      yield* promise(() => page.click(`#answer-text button.fn[data-footnote="3"]`))
      yield* waitFor(page, `document.querySelector("#source-text mark.current")?.textContent === "Inventory at the end of Q3 was 1,120 units"`)
      const html = (yield* evaluate<any>(currentMark))!
      assert.deepStrictEqual([html.position, html.inBox, html.inWindow], ["Occurrence 1 of 1", true, true])
      assert.notInclude(yield* evaluate<string>(`document.getElementById("source-text").textContent`), "<h1>", "extracted text, not the markup")

      // Decisions on an answer's citations are not recorded: the viewer points to the report page, which records them.
      assert.match(yield* evaluate<string>(`document.getElementById("answer-review-note").textContent`), /are not recorded by this service; verify a report to record a decision/)
      assert.strictEqual(yield* evaluate<string>(`document.querySelector("#answer-review-note a").getAttribute("href")`), `#/runs/${runId}/report`)
      yield* shot(page, "source")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
    }))

  it.scopedLive("live: the page shows footnotes pending while the answer arrives, then the citations and the retraction as they happen", () =>
    Effect.gen(function*() {
      const { digest, evaluate, page, runId, service } = yield* setup
      // A backend POSTs the model's output in two parts; the browser follows the stream by its id.
      const url = new URL(`${service.base}/v1/stream/answer?run=${runId}`)
      const line = (text: string) => `${JSON.stringify({ type: "delta", text })}\n`
      const request = http.request({ host: "127.0.0.1", port: Number(url.port), method: "POST", path: `${url.pathname}${url.search}`, headers: { authorization: `Bearer ${tokens.admin}` } })
      yield* Effect.addFinalizer(() => Effect.sync(() => request.destroy()))
      const responded = new Promise<http.IncomingMessage>((resolve) => request.on("response", resolve))
      request.on("error", () => {})
      request.write(line(answerBody))
      const response = yield* promise(() => responded)
      response.resume()
      const streamId = String(response.headers["citegate-stream-id"])
      yield* promise(() => page.goto(`${service.base}/ui/#/runs/${runId}/streams/${streamId}`))
      yield* waitFor(page, `document.querySelectorAll("#answer-text button.fn").length === 4`)
      assert.deepStrictEqual(yield* evaluate<Array<string>>(outcomes), ["1:pending", "2:pending", "3:pending", "4:pending"])
      assert.strictEqual(yield* evaluate<string>(`document.getElementById("stream-status").textContent`), "Verifying…")
      yield* shot(page, "live")
      request.end(`${line(`EVI1\nMANIFEST ${digest}\n${evidenceLines.join("\n")}\nEND_EVI1\n`)}`)
      yield* waitFor(page, `document.querySelector('#answer-text button.fn[data-footnote="4"]')?.getAttribute("data-outcome") === "retracted"`)
      yield* waitFor(page, `document.getElementById("stream-status").textContent === "Done: grounded"`)
      assert.deepStrictEqual(yield* evaluate<Array<string>>(outcomes), ["1:verified", "2:verified", "3:verified", "4:retracted"])
    }))

  it.scopedLive("hostile sources and answers are shown as text and never run", () =>
    Effect.gen(function*() {
      const { evaluate, executed, foreign, page, pasteAndVerify, problems } = yield* setup
      yield* pasteAndVerify
      yield* promise(() => page.click(`#answer-text button.fn[data-footnote="2"]`))
      yield* waitFor(page, `document.querySelector("#source-text mark.current")?.textContent.startsWith("<script>")`)
      const shown = yield* evaluate<string>(`document.getElementById("source-text").textContent`)
      assert.include(shown, "<img src=x onerror=\"window.__citegateExecuted('img')\">")
      assert.include(shown, "<a href=\"javascript:window.__citegateExecuted('link')\">open</a>")
      // The bidi override is shown as a token, not obeyed: the text reads in stored order.
      assert.include(shown, "named ⟨U+202E⟩gnp.exe for sure")
      assert.include(yield* evaluate<string>(`document.getElementById("answer-text").textContent`), "<img src=x onerror=")
      // Nothing of the sources became an element: one script (the page's own), no image, no link to javascript:.
      assert.deepStrictEqual(
        yield* evaluate<Array<number>>(`[document.scripts.length, document.images.length, document.querySelectorAll("[onerror], [onclick], a[href^='javascript' i], iframe, object, embed").length]`),
        [1, 0, 0]
      )
      // Click everything the sources could have made clickable: still nothing runs.
      yield* promise(() => page.click("#source-text mark.current"))
      // The page cannot turn a string into markup even if it tried: Trusted Types are required, and the one policy creates no HTML.
      assert.strictEqual(yield* evaluate<string>(`(() => { try { document.body.insertAdjacentHTML("beforeend", "<img src=x onerror=window.__citegateExecuted('tt')>"); return "parsed" } catch (e) { return e.name } })()`), "TypeError")
      yield* promise(() => page.waitForTimeout(300))
      assert.deepStrictEqual(executed, [], "no script from a source or an answer ran")
      assert.deepStrictEqual(foreign, [], "nothing was fetched from elsewhere")
      // The one violation is the test's own insertAdjacentHTML above.
      const violations = yield* evaluate<Array<string>>("window.__violations")
      assert.deepStrictEqual(violations, ["require-trusted-types-for trusted-types-sink"], JSON.stringify(violations))
      assert.deepStrictEqual(problems.filter((p) => !p.includes("TrustedHTML")), [])
    }))

  it.scopedLive("keyboard only: Tab to a footnote, n / p between footnotes, Enter opens the span, ] / [ between occurrences, Escape back; focus visible", () =>
    Effect.gen(function*() {
      const { evaluate, page, pasteAndVerify } = yield* setup
      yield* pasteAndVerify
      const active = `(() => { const a = document.activeElement; const s = getComputedStyle(a); return { tag: a.tagName, footnote: a.getAttribute("data-footnote"), occurrence: a.getAttribute("data-occurrence"), outline: s.outlineStyle + " " + s.outlineWidth } })()`
      let focus: any = undefined
      for (let i = 0; i < 20; i++) {
        yield* promise(() => page.keyboard.press("Tab"))
        focus = yield* evaluate<any>(active)
        if (focus.footnote !== null) break
      }
      assert.deepStrictEqual([focus.tag, focus.footnote, focus.outline], ["BUTTON", "1", "solid 3px"], "Tab reaches the first footnote, focus visible")
      yield* promise(() => page.keyboard.press("n"))
      assert.strictEqual((yield* evaluate<any>(active)).footnote, "2")
      yield* promise(() => page.keyboard.press("p"))
      assert.strictEqual((yield* evaluate<any>(active)).footnote, "1")
      yield* promise(() => page.keyboard.press("Enter"))
      yield* promise(() => page.waitForSelector("#source-text mark.current"))
      const opened = yield* evaluate<any>(active)
      assert.deepStrictEqual([opened.tag, opened.occurrence, opened.outline], ["MARK", "1", "solid 3px"])
      assert.isTrue((yield* evaluate<any>(currentMark))!.inBox)
      yield* promise(() => page.keyboard.press("]"))
      assert.deepStrictEqual([(yield* evaluate<any>(active)).occurrence, (yield* evaluate<any>(currentMark))!.inBox], ["2", true])
      yield* promise(() => page.keyboard.press("["))
      assert.strictEqual((yield* evaluate<any>(active)).occurrence, "1")
      yield* promise(() => page.keyboard.press("Escape"))
      assert.deepStrictEqual([(yield* evaluate<any>(active)).tag, (yield* evaluate<any>(active)).footnote], ["BUTTON", "1"])
      // Roles for assistive technology: the regions and the live status.
      assert.deepStrictEqual(
        yield* evaluate<Array<string | null>>(`[document.getElementById("answer").getAttribute("role"), document.getElementById("source").getAttribute("role"), document.getElementById("stream-status").getAttribute("role"), document.querySelector('#answer-text button.fn[data-footnote="4"]').getAttribute("aria-label")]`),
        ["region", "region", "status", "Footnote 4: retracted"]
      )
    }))
})

// The screenshots directory exists for UI_SCREENSHOTS=1 runs.
if (screenshots) fs.mkdirSync(screenshotDirectory, { recursive: true })
