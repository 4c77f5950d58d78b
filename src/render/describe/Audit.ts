/**
 * Descriptions of drift audit failures (`AuditError`).
 */
import * as Match from "effect/Match"
import type { AuditError } from "../../Errors.js"
import { citationError } from "./Answer.js"
import { type Description, shown } from "./Shared.js"

/** Why a drift audit produced no result (src/audit/). */
export const auditError = (error: AuditError): Description => shown(auditErrorUnbounded(error))

const auditErrorUnbounded = (error: AuditError): Description =>
  Match.valueTags(error, {
    AuditBaselineRejected: (e): Description => ({
      title: "Audit baseline does not verify",
      fields: [
        ...e.failures.slice(0, 20).map((f) => [f.citation, `${f.error._tag}: ${citationError(f.error).title}`] as const),
        ...(e.failures.length > 20 ? [["…", `and ${e.failures.length - 20} more`] as const] : [])
      ],
      fix: "Audit against the old run the report or answer was verified in, with its captures intact; re-verify it there first."
    }),
    VerificationTimeout: (e): Description => ({
      title: "Verification timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "The old citations could not be re-verified in time. Audit fewer citations, or raise verify.timeoutMs if the captures are legitimately this large."
    }),
    AuditTimeout: (e): Description => ({
      title: "Audit timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing was audited. Audit fewer citations, or raise audit.timeoutMs if the captures are legitimately this large."
    })
  })
