/**
 * Recorded human review over HTTP on 127.0.0.1: the reviewer is the token's name (a `reviewer` in the
 * body is refused), a token reads and reviews only its runs, decisions show in `POST /v1/verify/report`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, report, sources, startService, tokens, waitForRun } from "./serverSupport.js"

describe("POST/GET /v1/runs/{id}/reviews", () => {
  it.scopedLive("records with the token's identity, lists, scopes by the token's runs, and shows beside provenance", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [sales] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(started.status, 202, started.text)
      const runId = started.json.id as string
      yield* waitForRun(service, runId)
      const reportText = report(sales, ["Net sales for Q3 2026 were 4,210 units"])
      const post = (token: string, body: unknown) =>
        call(service, `/v1/runs/${runId}/reviews`, { token, body: JSON.stringify(body), headers: { "content-type": "application/json" } })

      const recorded = yield* post(tokens.admin, { report: reportText, fact: 0, decision: "wrong-period", note: "<i>Q2</i>" })
      assert.strictEqual(recorded.status, 201, recorded.text)
      assert.strictEqual(recorded.json.record.reviewer, "admin")
      assert.strictEqual(recorded.json.record.fact.excerpt, "Net sales for Q3 2026 were 4,210 units")

      // The reviewer is never taken from the request.
      const forged = yield* post(tokens.admin, { report: reportText, fact: 0, decision: "supported", reviewer: "someone-else" })
      assert.strictEqual(forged.status, 400)
      assert.strictEqual(forged.json._tag, "DecisionInvalid")
      // A token that may not read the run may not review it, nor list its decisions.
      const outsider = yield* post(tokens.reader, { report: reportText, fact: 0, decision: "supported" })
      assert.strictEqual(outsider.status, 403)
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/reviews`, { token: tokens.reader })).status, 403)
      const notVerified = yield* post(tokens.admin, { report: reportText, fact: 3, decision: "supported" })
      assert.strictEqual(notVerified.status, 422)
      assert.strictEqual(notVerified.json._tag, "DecisionFactNotVerified")

      const listed = yield* call(service, `/v1/runs/${runId}/reviews`, { token: tokens.admin })
      assert.strictEqual(listed.status, 200, listed.text)
      assert.deepStrictEqual(listed.json.decisions.map((d: any) => [d.seq, d.record.decision, d.record.reviewer]), [[1, "wrong-period", "admin"]])

      const verified = yield* call(service, `/v1/verify/report?run=${runId}`, {
        token: tokens.admin,
        body: reportText,
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(verified.status, 200, verified.text)
      assert.strictEqual(verified.json.humanReview.facts[0].current.record.decision, "wrong-period")
      assert.strictEqual(verified.json.humanReview.facts[0].current.record.note, "<i>Q2</i>")
    }))
})
