/** An audit result with one finding of every status, built through the strict record Schema, for renderer tests. */
import { Schema } from "effect"
import { AuditResult, auditFormat, auditNote } from "../src/audit/Records.js"

const digest = (c: string) => c.repeat(64)
const at = "2026-11-30T09:00:00.000Z"
export const POLICY = "https://policy.example.com/travel.md"
export const GONE = "https://policy.example.com/gone.md"

/** A hostile excerpt: markup, a script, an attribute break-out and a bidi override, in the changed passage. */
export const hostile = `Limit <script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"> is 30 \u202Eeuros`
export const hostileNew = `Limit <script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"> is 20 \u202Eeuros`

export const changedOld = "The daily limit is 30 euros per person, not more."
export const changedNew = "The daily limit is 20 euros per person, not more."

export const auditResult = (overrides: { readonly findings?: ReadonlyArray<unknown> } = {}): AuditResult =>
  Schema.decodeUnknownSync(AuditResult, { onExcessProperty: "error" })({
    format: auditFormat,
    of: "report",
    outcome: "drifted",
    thresholds: { anchor: 0.35, document: 0.65 },
    summary: { citations: 6, unchanged: 1, relocated: 1, changed: 2, deleted: 1, source_missing: 1, material: 2 },
    findings: overrides.findings ?? [
      {
        status: "unchanged",
        subject: { kind: "fact", index: 0, label: "scope" },
        source: POLICY,
        snippet: "This policy applies to all staff.",
        old: { captureSha256: digest("a"), accessedAt: at, span: { start: 10, end: 43 }, heading: ["Travel policy"] },
        new: { captureSha256: digest("b"), accessedAt: at, span: { start: 10, end: 43 }, heading: ["Travel policy"] }
      },
      {
        status: "relocated",
        subject: { kind: "fact", index: 1, label: "approval" },
        source: POLICY,
        snippet: "Trips need approval.",
        old: { captureSha256: digest("a"), accessedAt: at, span: { start: 100, end: 120 } },
        new: { captureSha256: digest("b"), accessedAt: at, span: { start: 300, end: 320 }, heading: ["Travel policy", "Approval"] }
      },
      {
        status: "changed",
        subject: { kind: "fact", index: 2, label: "daily_limit" },
        source: POLICY,
        snippet: changedOld,
        old: { captureSha256: digest("a"), accessedAt: at, span: { start: 200, end: 249 }, heading: ["Travel policy", "Limits"] },
        new: { captureSha256: digest("b"), accessedAt: at },
        candidate: {
          text: changedNew,
          span: { start: 210, end: 259 },
          similarity: 0.9591836734693877,
          method: "ratcliff-obershelp/1",
          scope: "anchor",
          threshold: 0.35,
          heading: ["Travel policy", "Limits"]
        },
        material: [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }]
      },
      {
        status: "changed",
        subject: { kind: "fact", index: 3, label: "label <b>x</b> \u200b" },
        source: POLICY,
        snippet: hostile,
        old: { captureSha256: digest("a"), accessedAt: at, span: { start: 400, end: 400 + hostile.length } },
        new: { captureSha256: digest("b"), accessedAt: at },
        candidate: {
          text: hostileNew,
          span: { start: 410, end: 410 + hostileNew.length },
          similarity: 0.98,
          method: "ratcliff-obershelp/1",
          scope: "document",
          threshold: 0.65
        },
        material: [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }]
      },
      {
        status: "deleted",
        subject: { kind: "fact", index: 4, label: "exception" },
        source: POLICY,
        snippet: "Exceptions are granted by the director.",
        old: { captureSha256: digest("a"), accessedAt: at, span: { start: 500, end: 539 }, heading: ["Travel policy", "Exceptions"] },
        new: { captureSha256: digest("b"), accessedAt: at }
      },
      {
        status: "source_missing",
        subject: { kind: "fact", index: 5, label: "gone" },
        source: GONE,
        snippet: "A removed document.",
        old: { captureSha256: digest("c"), accessedAt: at, span: { start: 0, end: 19 } },
        reason: "not-captured",
        errorTag: "MissingCapture",
        detail: `No capture of ${GONE} in this run`
      }
    ],
    affected: [
      { kind: "fact", index: 2, label: "daily_limit", status: "changed" },
      { kind: "fact", index: 3, label: "label <b>x</b> \u200b", status: "changed" },
      { kind: "fact", index: 4, label: "exception", status: "deleted" },
      { kind: "fact", index: 5, label: "gone", status: "source_missing" }
    ],
    note: auditNote
  })
