/**
 * `run-pipeline review` as a user runs it (the built CLI in its own process): record decisions about
 * a verified report's facts, list the log, see the decisions beside provenance in `verify`, and the
 * typed refusals with their exit codes, nothing written.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { cited, fixturePath, runDirectoryWith, salesRecord, unavailable } from "./support.js"

const config = fixturePath("pipeline.json")

const setup = Effect.gen(function*() {
  const run = yield* runDirectoryWith([salesRecord])
  const report = path.join(run, "..", `${path.basename(run)}-report.json`)
  yield* Effect.acquireRelease(
    Effect.promise(() =>
      fsp.writeFile(report, JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units"), unavailable("q4_forecast", "not out")]
      }))
    ),
    () => Effect.promise(() => fsp.rm(report, { force: true }))
  )
  return { run, report }
})

describe("run-pipeline review", () => {
  it.scopedLive("record, supersede, list, and verify shows the current decision in its own section", () =>
    Effect.gen(function*() {
      const { report, run } = yield* setup
      const base = ["review", "record", "--config", config, "--run-dir", run, "--report", report, "--fact", "1"]
      const first = yield* cli([...base, "--decision", "wrong-metric", "--note", "inventory <b>count</b>", "--reviewer", "alice"])
      assert.strictEqual(first.code, 0, first.stderr)
      assert.match(first.stdout, /^recorded #1: fact 1 "q3_net_sales": wrong-metric by alice/)
      const second = yield* cli([...base, "--decision", "supported", "--reviewer", "bob"])
      assert.strictEqual(second.code, 0, second.stderr)
      assert.include(second.stdout, "recorded #2")

      const listed = yield* cli(["review", "list", "--run-dir", run, "--format", "json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      const log = JSON.parse(listed.stdout)
      assert.strictEqual(log.format, "citegate.review-decisions/1")
      assert.deepStrictEqual(log.decisions.map((d: any) => [d.seq, d.record.decision, d.record.reviewer, d.supersededBy]), [
        [1, "wrong-metric", "alice", 2],
        [2, "supported", "bob", null]
      ])
      const text = yield* cli(["review", "list", "--run-dir", run])
      assert.include(text.stdout, "[superseded by #2]")
      assert.include(text.stdout, "note \"inventory <b>count</b>\"")

      const verify = yield* cli(["verify", "--config", config, "--run-dir", run, "--report", report, "--format", "html"])
      assert.strictEqual(verify.code, 0, verify.stderr)
      assert.include(verify.stdout, `<section class="human-review"`)
      assert.include(verify.stdout, "SUPPORTED</strong> (supersedes 1 earlier decision, kept in the log)")
      assert.notInclude(verify.stdout, "was not performed")
    }))

  it.scopedLive("refusals: DecisionInvalid exits 2, DecisionFactNotVerified exits 1; nothing is written", () =>
    Effect.gen(function*() {
      const { report, run } = yield* setup
      const base = ["review", "record", "--config", config, "--run-dir", run, "--report", report, "--reviewer", "alice"]
      const invalid = yield* cli([...base, "--fact", "1", "--decision", "looks-fine"])
      assert.strictEqual(invalid.code, 2)
      assert.include(invalid.stderr, "review: DecisionInvalid:")
      const unavailableFact = yield* cli([...base, "--fact", "2", "--decision", "supported"])
      assert.strictEqual(unavailableFact.code, 1)
      assert.include(unavailableFact.stderr, "review: DecisionFactNotVerified: Fact 2 cannot be reviewed (unavailable)")
      assert.isFalse(fs.existsSync(path.join(run, "reviews")))
      const help = yield* cli(["review", "record", "--help"])
      assert.include(help.stdout, "--decision")
      assert.include(help.stdout, "wrong-metric")
    }))
})
