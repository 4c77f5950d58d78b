/**
 * The review page's browser tests (test/ui*.browser.test.ts) share this start: a completed run on the
 * service, a Chromium page that may fetch only from the service, records every script execution
 * (`window.__citegateExecuted`), dialog, page error, console error and CSP violation, and is signed in
 * with the admin token; and the helpers they poll and screenshot with.
 */
import { Effect } from "effect"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { call, tokens, waitForRun } from "../serverSupport.js"
import { browser } from "./browser.js"

export const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** With UI_SCREENSHOTS=1 the pages are saved to docs/ui/*.png (docs/ui.md shows them). */
export const screenshots = process.env["UI_SCREENSHOTS"] === "1"
export const screenshotDirectory = path.join(import.meta.dirname, "..", "..", "docs", "ui")
export const shot = (page: Page, name: string) =>
  screenshots
    ? promise(() => page.screenshot({ path: path.join(screenshotDirectory, `${name}.png`), fullPage: false }))
    : Effect.void

/**
 * Polls `expression` in the page until it is truthy (page.waitForFunction would evaluate it with
 * eval, which the page's Content-Security-Policy refuses; page.evaluate is not subject to it).
 */
export const waitFor = (page: Page, expression: string, timeoutMs = 10_000) =>
  promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!(await page.evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${expression}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })

/** Starts a run on the service with the admin token and waits until it completes; its id. */
export const completedRun = (service: { readonly base: string }) =>
  Effect.gen(function*() {
    const id = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id as string
    yield* waitForRun(service, id)
    return id
  })

/**
 * A page of a new browser context (1280×900) on `${base}/ui/`, signed in with the admin token, the
 * runs list shown. `expectedErrors` matches the console errors the test causes on purpose (the 401
 * before sign-in, say): any other is a problem.
 */
export const signedInPage = (service: { readonly base: string }, expectedErrors: RegExp) =>
  Effect.gen(function*() {
    const b = yield* browser
    const context = yield* Effect.acquireRelease(promise(() => b.newContext({ viewport: { width: 1280, height: 900 } })), (c) => promise(() => c.close()))
    const page = yield* promise(() => context.newPage())
    // Only the service: any other request is aborted (the page must fetch nothing from elsewhere).
    const foreign: Array<string> = []
    yield* promise(() =>
      page.route("**/*", (route) => {
        if (route.request().url().startsWith(service.base)) return route.continue()
        foreign.push(route.request().url())
        return route.abort()
      })
    )
    const executed: Array<string> = []
    yield* promise(() => page.exposeFunction("__citegateExecuted", (what: string) => void executed.push(what)))
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
    page.on("console", (message) => {
      if (message.type() === "error" && !expectedErrors.test(message.text())) problems.push(`console: ${message.text()}`)
    })
    page.on("dialog", (dialog) => {
      executed.push(`dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    // Recorded before any page script runs: every CSP or Trusted Types violation.
    yield* promise(() =>
      page.addInitScript(`window.__violations = []; document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI))`)
    )
    yield* promise(() => page.goto(`${service.base}/ui/`))
    yield* promise(() => page.fill("#token", tokens.admin))
    yield* promise(() => page.press("#token", "Enter"))
    yield* promise(() => page.waitForSelector("table.runs"))
    const evaluate = <A>(expression: string) => promise(() => page.evaluate(expression) as Promise<A>)
    return { page, executed, problems, foreign, evaluate }
  })
