/**
 * Follow-up tests for the mutation run of `src/audit/Records.ts` (docs/testing.md): the record's
 * format and note written out by hand, every literal of every status, reason, scope and kind, the
 * strictness of every struct on its own (decoded WITHOUT `onExcessProperty`: the annotations alone
 * must refuse an unknown key, at every level), and the identifiers that name the structs in errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"
import * as Records from "../src/audit/Records.js"

const digest = (c: string) => c.repeat(64)
const at = "2026-11-30T09:00:00.000Z"
const source = "https://policy.example.com/travel.md"

/** The note, written out here rather than imported: the record's text is its contract. */
const note =
  "This audit is lexical: it compares the cited excerpts with the text of the new captures character by character " +
  "and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside " +
  "the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), " +
  "synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a " +
  "new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read " +
  "by a person when the stakes call for it."

const location = (c: string, start: number, end: number) => ({ captureSha256: digest(c), accessedAt: at, span: { start, end } })
const candidate = {
  text: "The limit is 20.",
  span: { start: 5, end: 21 },
  similarity: 0.9,
  method: "ratcliff-obershelp/1",
  scope: "anchor",
  threshold: 0.45,
  page: 2,
  heading: ["Limits"]
}
const fact = (index: number) => ({ kind: "fact", index, label: `f${index}` })
const claim = (claimIndex: number, citationIndex: number) => ({ kind: "claim", claimIndex, claimId: `c${claimIndex}`, citationIndex })
const head = (subject: unknown) => ({ subject, source, snippet: "The limit is 30.", old: { ...location("a", 5, 21), page: 2, heading: ["Limits"] } })

/** An encoded result with every struct, every status, every missing reason, both scopes, every material kind. */
const full = {
  format: "citegate.audit/1",
  of: "answer",
  outcome: "drifted",
  thresholds: { anchor: 0.45, document: 0.6 },
  summary: { citations: 9, unchanged: 1, relocated: 1, changed: 2, deleted: 2, source_missing: 3, material: 1 },
  findings: [
    { status: "unchanged", ...head(fact(0)), new: location("b", 5, 21) },
    { status: "relocated", ...head(claim(0, 0)), new: { ...location("b", 50, 66), page: 3, heading: [] } },
    {
      status: "changed",
      ...head(claim(0, 1)),
      new: { captureSha256: digest("b"), accessedAt: at },
      candidate,
      material: [
        { kind: "numbers", oldTokens: ["30"], newTokens: ["20"] },
        { kind: "negation", oldTokens: [], newTokens: ["not"] },
        { kind: "dates", oldTokens: ["2026-01-31"], newTokens: [] },
        { kind: "units", oldTokens: ["days"], newTokens: ["weeks"] }
      ]
    },
    {
      status: "changed",
      ...head(fact(1)),
      new: { captureSha256: digest("b"), accessedAt: at },
      candidate: { ...candidate, scope: "document", threshold: 0.6 },
      material: []
    },
    { status: "deleted", ...head(fact(2)), new: { captureSha256: digest("b"), accessedAt: at }, nearest: { ...candidate, similarity: 0.2 } },
    { status: "deleted", ...head(fact(3)), new: { captureSha256: digest("b"), accessedAt: at }, unsearched: "excerpt-too-long" },
    { status: "source_missing", ...head(fact(4)), reason: "not-captured", errorTag: "MissingCapture", detail: "none" },
    { status: "source_missing", ...head(fact(5)), reason: "capture-failed", errorTag: "UnexpectedStatus", detail: "404" },
    { status: "source_missing", ...head(fact(6)), reason: "unreadable", errorTag: "CorruptCapture", detail: "body-mismatch" }
  ],
  affected: [
    { kind: "fact", index: 1, label: "f1", status: "changed" },
    { kind: "fact", index: 2, label: "f2", status: "deleted" },
    { kind: "fact", index: 4, label: "f4", status: "source_missing" },
    {
      kind: "claim",
      claimIndex: 0,
      claimId: "c0",
      citations: [{ citationIndex: 1, status: "changed" }, { citationIndex: 2, status: "deleted" }, {
        citationIndex: 3,
        status: "source_missing"
      }]
    }
  ],
  note
}

/** Decoding with Schema's defaults: unknown keys are refused only where a struct's own annotation says so. */
const decodeDefault = Schema.decodeUnknownEither(Records.AuditResult)

const issuesOf = (value: unknown) => {
  const result = decodeDefault(value)
  return Either.isLeft(result) ? ParseResult.ArrayFormatter.formatErrorSync(result.left) : []
}

/** Every path to an object (not an array) inside `value`. */
const objectPaths = (value: unknown, path: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
  if (Array.isArray(value)) return value.flatMap((v, i) => objectPaths(v, [...path, i]))
  if (typeof value !== "object" || value === null) return []
  return [path, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...path, k]))]
}

const withKey = (value: unknown, path: ReadonlyArray<string | number>, key: string, v: unknown): unknown => {
  const copy = JSON.parse(JSON.stringify(value)) as Record<string | number, unknown>
  let node = copy
  for (const p of path) node = node[p] as Record<string | number, unknown>
  node[key] = v
  return copy
}

describe("audit records: format, note and literals", () => {
  it("the format and the note are the documented strings; the limits and drift statuses as documented", () => {
    assert.strictEqual(Records.auditFormat, "citegate.audit/1")
    assert.strictEqual(Records.auditNote, note)
    assert.deepStrictEqual(Records.limits, { maxCandidateExcerpt: 1_000 })
    assert.deepStrictEqual(Records.driftStatuses, ["changed", "deleted", "source_missing"])
  })

  it("the exported literal Schemas hold exactly their values", () => {
    assert.deepStrictEqual(Records.AuditStatus.literals, ["unchanged", "relocated", "changed", "deleted", "source_missing"])
    assert.deepStrictEqual(Records.AuditOutcome.literals, ["stable", "drifted"])
    assert.deepStrictEqual(Records.CandidateScope.literals, ["anchor", "document"])
    assert.deepStrictEqual(Records.MaterialKind.literals, ["numbers", "negation", "dates", "units"])
    assert.deepStrictEqual(Records.MissingReason.literals, ["not-captured", "capture-failed", "unreadable"])
  })

  it("a result with every status, reason, scope, kind and both subjects decodes to itself", () => {
    const decoded = Schema.decodeUnknownSync(Records.AuditResult, { errors: "all", onExcessProperty: "error" })(full)
    assert.deepStrictEqual(Schema.encodeSync(Records.AuditResult)(decoded), full as unknown)
    // The same with "report" and "stable".
    assert.deepStrictEqual(issuesOf({ ...full, of: "report", outcome: "stable" }), [])
  })

  it("an empty or unknown literal is refused wherever a literal stands", () => {
    const literalPaths: Array<ReadonlyArray<string | number>> = [
      ["format"],
      ["of"],
      ["outcome"],
      ...full.findings.map((_, i) => ["findings", i, "status"]),
      ...full.findings.map((_, i) => ["findings", i, "subject", "kind"]),
      ["findings", 2, "candidate", "scope"],
      ["findings", 2, "material", 0, "kind"],
      ["findings", 5, "unsearched"],
      ["findings", 6, "reason"],
      ["affected", 0, "kind"],
      ["affected", 0, "status"],
      ["affected", 3, "kind"],
      ["affected", 3, "citations", 0, "status"],
      ["note"]
    ]
    for (const path of literalPaths) {
      const parent = path.slice(0, -1)
      const key = path[path.length - 1] as string
      assert.notDeepEqual(issuesOf(withKey(full, parent, key, "")), [], path.join("."))
    }
    // A finding's status must agree with its shape; an affected entry cannot be "unchanged".
    assert.notDeepEqual(issuesOf(withKey(full, ["affected", 0], "status", "unchanged")), [])
    assert.notDeepEqual(issuesOf(withKey(full, ["affected", 3, "citations", 0], "status", "relocated")), [])
  })
})

describe("audit records: strict at every level", () => {
  it("an unknown key in any object of the result is refused by that struct's own annotation, at its path", () => {
    const paths = objectPaths(full)
    // Every struct kind is reached: result, thresholds, summary, each finding, subject, location, span, candidate,
    // flag, affected fact, affected claim and its citations.
    assert.isAtLeast(paths.length, 60)
    for (const path of paths) {
      const issues = issuesOf(withKey(full, path, "extra", 1))
      // (An optional field's failure also reports its `undefined` alternative as a Type issue.)
      assert.deepStrictEqual(
        issues.filter((i) => i._tag === "Unexpected").map((i) => i.path),
        [[...path, "extra"]],
        path.join(".")
      )
      assert.isTrue(issues.every((i) => i._tag === "Unexpected" || i._tag === "Type"), path.join("."))
    }
  })

  it("an empty affected claim citation list is refused", () => {
    assert.notDeepEqual(issuesOf(withKey(full, ["affected", 3], "citations", [])), [])
  })

  it("each struct names itself (the identifiers shown in decode errors)", () => {
    const named: Array<[Schema.Schema.AnyNoContext, string]> = [
      [Records.FactSubject, "FactSubject"],
      [Records.ClaimSubject, "ClaimSubject"],
      [Records.Location, "Location"],
      [Records.NewCapture, "NewCapture"],
      [Records.Candidate, "Candidate"],
      [Records.MaterialFlag, "MaterialFlag"],
      [Records.UnchangedFinding, "UnchangedFinding"],
      [Records.RelocatedFinding, "RelocatedFinding"],
      [Records.ChangedFinding, "ChangedFinding"],
      [Records.DeletedFinding, "DeletedFinding"],
      [Records.SourceMissingFinding, "SourceMissingFinding"],
      [Records.AffectedFact, "AffectedFact"],
      [Records.AffectedClaim, "AffectedClaim"],
      [Records.AffectedClaim.fields.citations.value, "AffectedCitation"],
      [Records.AuditSummary, "AuditSummary"],
      [Records.Thresholds, "Thresholds"],
      [Records.AuditResult, "AuditResult"]
    ]
    for (const [schema, name] of named) {
      assert.strictEqual(Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast)), name, name)
    }
    // And an error message names the struct the value failed.
    const message = Either.match(Schema.decodeUnknownEither(Records.Thresholds)({ anchor: 2, document: 0 }), {
      onLeft: (e) => e.message,
      onRight: () => ""
    })
    assert.match(message, /^Thresholds\n/)
  })
})
