/**
 * Signed results in the service: `POST /v1/verify/report?sign=1` on a loopback port returns the
 * signed result under `attestation` when `verify.resultSigning.keyFile` is configured (checked by
 * the library against the exact request body), none for a refused report, and `409
 * ResultSigningUnavailable` without a key.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as ResultAttestation from "../src/evidence/ResultAttestation.js"
import { call, report, startService, tokens } from "./serverSupport.js"
import { signingService } from "./support/resultSigning.js"

describe("signed results in the service", () => {
  it.scopedLive("sign=1: a passed report carries its signed result; a refused one none; no key configured: 409", () =>
    Effect.gen(function*() {
      const { keys, runId, sales, service } = yield* signingService
      const body = report(sales, ["Net sales for Q3 2026 were 4,210 units"])
      const post = (s: typeof service, query: string, text: string) =>
        call(s, `/v1/verify/report?run=${runId}${query}`, { token: tokens.admin, body: text, headers: { "content-type": "application/json" } })

      const signed = yield* post(service, "&sign=1", body)
      assert.strictEqual(signed.status, 200, signed.text)
      assert.strictEqual(signed.json.status, "verified")
      const checked = ResultAttestation.checkResultAttestation({
        envelope: JSON.stringify(signed.json.attestation),
        input: body,
        name: "report",
        trusted: keys.trusted
      })
      if (Either.isLeft(checked)) return assert.fail(checked.left.message)
      assert.deepStrictEqual(checked.right.statement.predicate.run, { id: runId, store: "filesystem" })
      assert.strictEqual(checked.right.statement.predicate.captures.length, 1)

      const unsigned = yield* post(service, "", body)
      assert.isUndefined(unsigned.json.attestation)
      const refused = yield* post(service, "&sign=1", report(sales, ["not in the capture"]))
      assert.strictEqual(refused.json.status, "rejected")
      assert.isUndefined(refused.json.attestation)

      const plain = yield* startService({ sources: [sales], work: service.work })
      const noKey = yield* post(plain, "&sign=1", body)
      assert.deepStrictEqual([noKey.status, noKey.json._tag], [409, "ResultSigningUnavailable"])
    }))
})
