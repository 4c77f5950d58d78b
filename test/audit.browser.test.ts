import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as AuditRender from "../src/audit/Render.js"
import { auditResult, changedNew, changedOld, hostile, hostileNew } from "./auditResultFixture.js"
import { tempDirectory } from "./support.js"
import { browser, skipped } from "./support/browser.js"

const skip = skipped("test/audit.browser.test.ts")

/** How a browser shows source text: invisible and bidi characters as their `\u{…}` escapes. */
const shown = (s: string) => s.replace(/\u202E/g, "\\u{202e}")

describe.skipIf(skip)("audit HTML in headless Chromium", () => {
  it.scopedLive("a hostile excerpt runs no script; each side shows its passage with exactly the changed words highlighted", () =>
    Effect.gen(function*() {
      const html = AuditRender.render("html", auditResult())
      const out = yield* tempDirectory
      const file = path.join(out, "audit.html")
      yield* Effect.promise(() => fsp.writeFile(file, html))

      const b = yield* browser
      const page = yield* Effect.promise(() => b.newPage({ viewport: { width: 1200, height: 900 } }))
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      const requests: Array<string> = []
      page.on("request", (request) => requests.push(request.url()))
      yield* Effect.promise(() => page.goto(`file://${file}`))
      // Evaluated in the page; source text because the project is type-checked without DOM types.
      const inspect = `(() => {
        const changed = Array.from(document.querySelectorAll('section[data-status="changed"]'))
        const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top } }
        return {
          title: document.title,
          scripts: document.scripts.length,
          images: document.images.length,
          handlers: Array.from(document.querySelectorAll("*")).filter((el) => Array.from(el.attributes).some((a) => a.name.startsWith("on"))).length,
          sides: changed.map((section) => {
            const old = section.querySelector('[data-side="old"]')
            const neu = section.querySelector('[data-side="new"]')
            return {
              oldText: old.textContent,
              newText: neu.textContent,
              deleted: Array.from(old.querySelectorAll("del.chg")).map((e) => e.textContent),
              inserted: Array.from(neu.querySelectorAll("ins.chg")).map((e) => e.textContent),
              insertedBackground: neu.querySelector("ins.chg") ? getComputedStyle(neu.querySelector("ins.chg")).backgroundColor : null,
              oldBox: box(old),
              newBox: box(neu)
            }
          })
        }
      })()`
      const state = yield* Effect.promise(() =>
        page.evaluate(inspect) as Promise<{
          title: string
          scripts: number
          images: number
          handlers: number
          sides: Array<{
            oldText: string
            newText: string
            deleted: Array<string>
            inserted: Array<string>
            insertedBackground: string | null
            oldBox: { left: number; right: number; top: number }
            newBox: { left: number; right: number; top: number }
          }>
        }>
      )
      assert.strictEqual(state.title, "citegate: drift audit (drifted)")
      assert.strictEqual(state.scripts, 0)
      assert.strictEqual(state.images, 0)
      assert.strictEqual(state.handlers, 0)
      assert.deepStrictEqual(dialogs, [])
      // Nothing but the page itself was loaded (the hostile <img src=x> is text).
      assert.deepStrictEqual(requests, [`file://${file}`])
      assert.strictEqual(state.sides.length, 2)
      const [limit, attack] = state.sides
      assert.strictEqual(limit!.oldText, changedOld)
      assert.strictEqual(limit!.newText, changedNew)
      assert.deepStrictEqual(limit!.deleted, ["30"])
      assert.deepStrictEqual(limit!.inserted, ["20"])
      assert.notStrictEqual(limit!.insertedBackground, "rgba(0, 0, 0, 0)")
      assert.strictEqual(attack!.oldText, shown(hostile))
      assert.strictEqual(attack!.newText, shown(hostileNew))
      assert.deepStrictEqual(attack!.deleted, ["30"])
      assert.deepStrictEqual(attack!.inserted, ["20"])
      // Side by side: the new passage is to the right of the old one, on the same row.
      for (const side of state.sides) {
        assert.isAtMost(side.oldBox.right, side.newBox.left)
        assert.strictEqual(side.oldBox.top, side.newBox.top)
      }
    }))
})
