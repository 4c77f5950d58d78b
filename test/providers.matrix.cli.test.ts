/**
 * The provider matrix through the CLI: each row of `providerMatrix.ts` (provider format × case) as
 * `run-pipeline verify-answer --format-in <format>` on a spawned built CLI, in drop mode with the
 * row's `answers.citations` policy in the config file; its exit code and JSON rendering checked.
 * The cases that do not apply to a provider are listed, with why, in `providerMatrix.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { setup, verifyCli } from "./providerEdges.js"
import { checkJson, rows } from "./providerMatrix.js"

describe("run-pipeline verify-answer --format-in <provider>: the matrix", () => {
  for (const row of rows) {
    it.scopedLive(`${row.format} · ${row.case} (answers.citations ${row.policy})`, () =>
      Effect.gen(function*() {
        const s = yield* setup(row.policy)
        const file = yield* s.write(`answer.${row.format}`, row.input)
        const ran = yield* verifyCli(s, row.format, file)
        assert.strictEqual(ran.code, row.expect.exit, ran.stderr)
        checkJson(row, JSON.parse(ran.stdout), assert)
      }), { timeout: 60_000 })
  }
})
