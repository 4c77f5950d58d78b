/**
 * `audit`: the drift audit's deadline.
 */
import * as Schema from "effect/Schema"
import { intBetween, strict } from "./Common.js"

/** The overall deadline of one drift audit (baseline re-verification and candidate search). */
export const auditLimits = {
  timeoutMs: { min: 1, max: 600_000, default: 60_000 }
} as const

/** The drift audit (`run-pipeline audit`, `Audit`): its deadline. */
export const AuditConfig = Schema.Struct({
  timeoutMs: Schema.optional(intBetween(auditLimits.timeoutMs.min, auditLimits.timeoutMs.max))
}).annotations({ ...strict, identifier: "AuditConfig" })
export type AuditConfig = typeof AuditConfig.Type
