/**
 * An audit's result from its findings: counts, the facts and claims affected
 * (in finding order), and the outcome.
 *
 * @since 0.3.0
 */
import { type Affected, type AffectedClaim, type AuditResult, auditFormat, auditNote, type AuditStatus, type Finding, type Thresholds } from "./Records.js"

const drifted = (status: AuditStatus): status is "changed" | "deleted" | "source_missing" =>
  status === "changed" || status === "deleted" || status === "source_missing"

/** Counts, affected facts and claims (in finding order), outcome. */
export const summarise = (of: "report" | "answer", thresholds: Thresholds, findings: ReadonlyArray<Finding>): AuditResult => {
  const summary = { citations: findings.length, unchanged: 0, relocated: 0, changed: 0, deleted: 0, source_missing: 0, material: 0 }
  const affected: Array<Affected> = []
  // Each claim's citation list, filled in place (the claim entry holds the same array).
  const claims = new Map<number, Array<AffectedClaim["citations"][number]>>()
  for (const finding of findings) {
    summary[finding.status]++
    if (finding.status === "changed" && finding.material.length > 0) summary.material++
    if (!drifted(finding.status)) continue
    const subject = finding.subject
    if (subject.kind === "fact") {
      affected.push({ kind: "fact", index: subject.index, label: subject.label, status: finding.status })
    } else {
      const citation = { citationIndex: subject.citationIndex, status: finding.status }
      const list = claims.get(subject.claimIndex)
      if (list === undefined) {
        const citations: [typeof citation] = [citation]
        claims.set(subject.claimIndex, citations)
        affected.push({ kind: "claim", claimIndex: subject.claimIndex, claimId: subject.claimId, citations })
      } else {
        list.push(citation)
      }
    }
  }
  return {
    format: auditFormat,
    of,
    outcome: affected.length > 0 ? "drifted" : "stable",
    thresholds,
    summary,
    findings,
    affected,
    note: auditNote
  }
}

