import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { cases, classes, evaluate } from "./reviewEvaluation.js"

const docs = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "docs", "review.md"), "utf8")

/** Floors per class: a change to the adapter that loses precision or recall below them fails here. */
const floors = { precision: 0.95, recall: 0.9 }

describe("number adapter evaluation (fixtures/review/cases.json)", () => {
  it("at least 300 labelled cases, every class represented", () => {
    assert.isAtLeast(cases.length, 300)
    for (const cls of classes) assert.isAtLeast(cases.filter((c) => c.class === cls).length, 25, cls)
  })

  it("precision and recall per class stay above their floors", () => {
    const { rows } = evaluate()
    for (const row of rows) {
      assert.isAtLeast(row.precision, floors.precision, `${row.class} precision`)
      assert.isAtLeast(row.recall, floors.recall, `${row.class} recall`)
    }
  })

  it("docs/review.md states the table as measured and lists every error", () => {
    const { errors, rows } = evaluate()
    for (const row of rows) {
      const line = `| ${row.class} | ${row.cases} | ${row.predicted} | ${row.truePositives} | ${row.precision.toFixed(3)} | ${row.recall.toFixed(3)} | ${row.needsReview} |`
      assert.include(docs, line, row.class)
    }
    for (const error of errors) assert.include(docs, `| ${error.case.id} |`, error.case.id)
    const listed = docs.match(/^\| (?:correct|wrong-[a-z-]+|missing)-\d+ \|/gmu) ?? []
    assert.strictEqual(listed.length, errors.length, "every listed error is an error today")
  })
})
