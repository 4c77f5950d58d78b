/**
 * The one gate of the browser tests (test/*.browser.test.ts): Debian's chromium (installed by
 * .ci/run; no browser is downloaded), at CHROMIUM_PATH or /usr/bin/chromium. Without it, every test
 * of a browser file is skipped with the reason printed, so `npm test` passes on a fresh machine; under
 * CI a missing browser is a failure instead. Files gate their whole `describe` on `skipped(...)`, so a
 * test added later is gated too.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { chromium } from "playwright-core"

export const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

export const inCi = (process.env["CI"] ?? "") !== "" && process.env["CI"] !== "false" && process.env["CI"] !== "0"

/** Whether the browser tests of `file` are skipped here; prints why when they are. */
export const skipped = (file: string): boolean => {
  const skip = !fs.existsSync(executablePath) && !inCi
  if (skip) {
    console.warn(
      `SKIPPED ${file}: Chromium not found at ${executablePath} ` +
        "(apt-get install chromium, or set CHROMIUM_PATH); with CI set, this is a failure."
    )
  }
  return skip
}

/** A headless Chromium for the scope; fails the test, naming the path, when there is none (under CI). */
export const browser = Effect.acquireRelease(
  Effect.sync(() => {
    assert.isTrue(
      fs.existsSync(executablePath),
      `Chromium not found at ${executablePath}: apt-get install chromium, or set CHROMIUM_PATH`
    )
  }).pipe(Effect.zipRight(Effect.promise(() =>
    chromium.launch({
      executablePath,
      args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  ))),
  (b) => Effect.promise(() => b.close())
)
