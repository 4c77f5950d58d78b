/**
 * The drift audit's errors (src/audit/): `AuditError`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CitationError } from "./Answer.js"
import { VerificationTimeout } from "./Verify.js"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Drift audit (src/audit/)
// ---------------------------------------------------------------------------

/** One old citation that no longer verifies against the old run: which one (`fact 3 "label"`, `claim c1 citation 0`), and why. */
export const BaselineFailure = Schema.Struct({
  citation: Schema.String,
  error: CitationError
}).annotations({ identifier: "BaselineFailure" })
export type BaselineFailure = typeof BaselineFailure.Type

/**
 * The old report or answer does not verify against the old run any more (a capture missing, altered or
 * replaced): there is no verified baseline to compare the new run with. Every failure is listed.
 */
export class AuditBaselineRejected extends TaggedError<AuditBaselineRejected>()("AuditBaselineRejected", {
  failures: Schema.NonEmptyArray(BaselineFailure)
}) {
  override get message() {
    const n = this.failures.length
    return `The audited citations do not verify against the old run: ${n} failure${n === 1 ? "" : "s"}: ` +
      this.failures.slice(0, 20).map((f) => `${f.citation}: ${f.error._tag}`).join(", ") + (n > 20 ? ", …" : "")
  }
}

/** The audit did not finish within its deadline (`audit.timeoutMs`): no finding is reported, none is half-made. */
export class AuditTimeout extends TaggedError<AuditTimeout>()("AuditTimeout", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The audit did not finish within ${this.timeoutMs} ms; no finding is reported`
  }
}

/** Why a drift audit produced no result. */
export const AuditError = Schema.Union(AuditBaselineRejected, VerificationTimeout, AuditTimeout)
export type AuditError = typeof AuditError.Type
