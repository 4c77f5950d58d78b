import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { marked, type Token } from "marked"
import { AuditResult, auditNote } from "../src/audit/Records.js"
import * as AuditRender from "../src/audit/Render.js"
import { diffLimits, tokenize, wordDiff } from "../src/audit/WordDiff.js"
import { auditResult, changedNew, changedOld, GONE, hostile, POLICY } from "./auditResultFixture.js"

const decode = Schema.decodeUnknownEither(AuditResult, { errors: "all", onExcessProperty: "error" })

/** Every token of a Markdown document, nested ones included. */
const allTokens = (tokens: ReadonlyArray<Token>): Array<Token> =>
  tokens.flatMap((t) => [t, ...allTokens(((t as { tokens?: Array<Token> }).tokens) ?? []), ...((t as { items?: Array<Token> }).items ? allTokens((t as { items: Array<Token> }).items) : [])])

const changedTokens = (side: ReadonlyArray<{ text: string; changed: boolean }>) => side.filter((p) => p.changed).map((p) => p.text)

/** Longest common subsequence length of two token arrays (quadratic: small inputs only). */
const lcs = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  const row = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    let diag = 0
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!
      row[j] = a[i - 1] === b[j - 1] ? diag + 1 : Math.max(row[j]!, row[j - 1]!)
      diag = up
    }
  }
  return row[b.length]!
}

describe("audit renderings", () => {
  const result = auditResult()

  it("JSON is the record: it decodes strictly with AuditResult to the same value", () => {
    const rendered = AuditRender.render("json", result)
    const decoded = decode(JSON.parse(rendered))
    assert.isTrue(Either.isRight(decoded), rendered)
    if (Either.isRight(decoded)) assert.deepStrictEqual(decoded.right, result)
    // And a tampered rendering does not: an extra key, an unknown status.
    const extra = { ...JSON.parse(rendered), extra: 1 }
    assert.isTrue(Either.isLeft(decode(extra)))
    const bad = JSON.parse(rendered)
    bad.findings[0].status = "moved"
    assert.isTrue(Either.isLeft(decode(bad)))
  })

  it("text: each finding with status, old and new digests and spans, candidate, similarity, flags; affected, outcome, note", () => {
    const out = AuditRender.render("text", result)
    assert.match(out, /^citegate audit: DRIFTED \(report\): 6 citations: 1 unchanged, 1 relocated, 2 changed \(2 material\), 1 deleted, 1 source missing\n/)
    assert.include(out, "similarity thresholds: 0.35 under the same heading or page, 0.65 anywhere in the text")
    assert.include(out, `[UNCHANGED] fact 1 "scope"`)
    assert.include(out, `old        sha256 ${"a".repeat(64)}  span 10–43  section Travel policy  accessed 2026-11-30T09:00:00.000Z`)
    assert.include(out, `new        sha256 ${"b".repeat(64)}  span 300–320  section Travel policy › Approval`)
    assert.include(out, `[CHANGED] fact 3 "daily_limit"`)
    assert.include(out, `candidate  ${JSON.stringify(changedNew)}`)
    assert.include(out, "span 210–259, similarity 0.959 (threshold 0.35, anchor scope, ratcliff-obershelp/1), section Travel policy › Limits")
    assert.include(out, `MATERIAL   numbers: "30" -> "20"`)
    assert.include(out, `[DELETED] fact 5 "exception"`)
    assert.include(out, "nearest    no passage found")
    assert.include(out, `[SOURCE MISSING] fact 6 "gone"`)
    assert.include(out, `the new run holds no capture of the source (not-captured): MissingCapture: No capture of ${GONE} in this run`)
    assert.include(out, `Affected (4):\n    fact 3 "daily_limit": changed\n    fact 4 "label <b>x</b> \\u{200b}": changed`)
    assert.include(out, "Outcome: drifted")
    assert.include(out, `Note: ${auditNote}`)
    // Controls and bidi overrides from the excerpt are shown as escapes, never written raw to a terminal.
    assert.notMatch(out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e]/u)
    assert.include(out, "\\u{202e}euros")
  })

  it("text: a stable audit says so, and a claim subject is numbered with its citation", () => {
    const stable = Schema.decodeUnknownSync(AuditResult)({
      ...Schema.encodeSync(AuditResult)(auditResult()),
      outcome: "stable",
      summary: { citations: 1, unchanged: 1, relocated: 0, changed: 0, deleted: 0, source_missing: 0, material: 0 },
      findings: [{
        ...Schema.encodeSync(AuditResult)(auditResult()).findings[0]!,
        subject: { kind: "claim", claimIndex: 1, claimId: "c2", citationIndex: 0 }
      }],
      affected: [],
      of: "answer"
    })
    const out = AuditRender.render("text", stable)
    assert.match(out, /^citegate audit: STABLE \(answer\): 1 citation: 1 unchanged/)
    assert.include(out, `[UNCHANGED] claim 2 "c2", citation 1`)
    assert.include(out, "Affected: none")
    assert.include(out, "Outcome: stable")
  })

  it("Markdown: no markup forms from untrusted text; excerpts and candidates are code blocks; digests, flags, affected, note", () => {
    const out = AuditRender.render("markdown", result)
    const tokens = allTokens(marked.lexer(out, { gfm: true }))
    assert.deepStrictEqual(tokens.filter((t) => ["html", "link", "image", "em", "strong", "del"].includes(t.type) && t.type !== "strong").map((t) => t.type), [])
    const code = tokens.filter((t) => t.type === "code").map((t) => (t as Token & { text: string }).text)
    assert.include(code, changedOld)
    assert.include(code, changedNew)
    assert.include(code, hostile.replace("\u202E", "\\u{202e}"))
    const page = marked.parse(out, { gfm: true, async: false }) as string
    assert.notInclude(page, "<script")
    assert.notInclude(page, "<img")
    assert.include(out, `sha256 \`${"a".repeat(64)}\` · span 200–249`)
    assert.include(out, "similarity **0.959**")
    assert.include(out, "- **numbers**: `30` → `20`")
    assert.include(out, "- fact 4 `label <b>x</b> \\u{200b}`: changed")
    assert.include(out, "**Outcome: drifted**")
    assert.include(out, "> This audit is lexical")
    assert.include(out, `- source: \`${POLICY}\``)
  })

  it("HTML: CSP without scripts, everything escaped, changed words highlighted on each side of the side-by-side view", () => {
    const out = AuditRender.render("html", result)
    assert.include(out, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`)
    assert.notInclude(out, "<script")
    assert.notInclude(out, "<img")
    assert.notInclude(out, "<b>x")
    assert.notInclude(out, "\u202E")
    assert.include(out, `<span class="ctl">\\u{202e}</span>euros`)
    assert.include(out, `<div class="passage" data-side="old">The daily limit is <del class="chg">30</del> euros per person, not more.</div>`)
    assert.include(out, `<div class="passage" data-side="new">The daily limit is <ins class="chg">20</ins> euros per person, not more.</div>`)
    assert.include(out, `<li class="material" data-kind="numbers">numbers: <code>30</code> → <code>20</code></li>`)
    assert.include(out, `capture sha256 <code>${"a".repeat(64)}</code> · span <code>200–249</code> · section Travel policy › Limits`)
    assert.include(out, `similarity <strong class="similarity">0.959</strong>`)
    assert.include(out, `<p class="outcome drifted">Outcome: drifted</p>`)
    assert.include(out, "This audit is lexical")
    for (const status of ["unchanged", "relocated", "changed", "deleted", "source_missing"]) {
      assert.include(out, `data-status="${status}"`)
    }
  })

  it("a deleted finding whose excerpt was too long to search says so in every human format", () => {
    const base = Schema.encodeSync(AuditResult)(result)
    const deleted = { ...base.findings[4]!, unsearched: "excerpt-too-long" }
    const unsearched = Schema.decodeUnknownSync(AuditResult)({ ...base, findings: [deleted] })
    for (const format of ["text", "markdown", "html"] as const) {
      assert.include(AuditRender.render(format, unsearched), "no candidate searched: the excerpt is longer than the candidate search takes (1000 code units)", format)
    }
    assert.notInclude(AuditRender.render("text", result), "no candidate searched")
  })

  it("long excerpts and candidates are cut in human renderings with their length, kept whole in JSON", () => {
    const long = `${"word ".repeat(1_000)}30 end`
    const base = Schema.encodeSync(AuditResult)(result)
    const changed = base.findings[2] as { candidate: { text: string } }
    const cutResult = Schema.decodeUnknownSync(AuditResult)({
      ...base,
      findings: [{ ...changed, snippet: long, candidate: { ...changed.candidate, text: long.replace("30", "20") } }]
    })
    const text = AuditRender.render("text", cutResult)
    assert.include(text, `… (${long.length} characters)`)
    assert.isBelow(text.length, 2 * AuditRender.maxShown + 3_000)
    const html = AuditRender.render("html", cutResult)
    assert.include(html, `(${long.length} characters; the first ${diffLimits.maxChars} are shown)`)
    const json = JSON.parse(AuditRender.render("json", cutResult))
    assert.strictEqual(json.findings[0].snippet, long)
  })
})

describe("word diff", () => {
  it("marks exactly the differing words, on each side", () => {
    const d = wordDiff(changedOld, changedNew)
    assert.deepStrictEqual(changedTokens(d.old), ["30"])
    assert.deepStrictEqual(changedTokens(d.new), ["20"])
    assert.isTrue(d.exact)
    const shortened = wordDiff("Trips need approval by a manager.", "Trips need approval.")
    assert.deepStrictEqual(changedTokens(shortened.old), [" by a manager"])
    assert.deepStrictEqual(changedTokens(shortened.new), [])
    const negated = wordDiff("Refunds are paid within 30 days.", "Refunds are not paid within 30 days.")
    assert.deepStrictEqual(changedTokens(negated.old), [])
    assert.deepStrictEqual(changedTokens(negated.new), ["not "])
  })

  it("numbers with separators, decimals and percentages are one token; non-BMP characters are never split", () => {
    assert.deepStrictEqual(tokenize("4,210 units, 1.5% at 10:30"), ["4,210", " ", "units", ",", " ", "1.5%", " ", "at", " ", "10:30"])
    assert.deepStrictEqual(tokenize("a😀b"), ["a", "😀", "b"])
    const d = wordDiff("𝔘 limit 30", "𝔘 limit 20")
    assert.deepStrictEqual(changedTokens(d.new), ["20"])
    // A cut at maxChars never leaves half a surrogate pair.
    const astral = "😀".repeat(diffLimits.maxChars)
    const cutDiff = wordDiff(astral, "x")
    assert.notMatch(cutDiff.old.map((p) => p.text).join(""), /[\ud800-\udbff]$/)
    assert.strictEqual(cutDiff.oldCut, astral.length)
  })

  it("pieces give back each side, and the unchanged tokens are a longest common subsequence (random inputs)", () => {
    let seed = 42
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const words = ["a", "b", "c", "30", "20", " ", ", ", "not"]
    const sample = () => Array.from({ length: Math.floor(random() * 40) }, () => words[Math.floor(random() * words.length)]).join("")
    for (let i = 0; i < 300; i++) {
      const a = sample()
      const b = sample()
      const d = wordDiff(a, b)
      assert.strictEqual(d.old.map((p) => p.text).join(""), a)
      assert.strictEqual(d.new.map((p) => p.text).join(""), b)
      if (!d.exact) continue
      const keptA = tokenize(d.old.filter((p) => !p.changed).map((p) => p.text).join(""))
      const keptB = tokenize(d.new.filter((p) => !p.changed).map((p) => p.text).join(""))
      // Re-tokenising joined pieces may merge tokens; compare by concatenation and LCS length instead.
      assert.strictEqual(keptA.join(""), keptB.join(""), `${JSON.stringify(a)} / ${JSON.stringify(b)}`)
      const unchangedCount = (side: ReadonlyArray<{ text: string; changed: boolean }>, text: string) =>
        tokenize(text).length - side.filter((p) => p.changed).reduce((n, p) => n + tokenize(p.text).length, 0)
      assert.strictEqual(unchangedCount(d.old, a), lcs(tokenize(a), tokenize(b)), `${JSON.stringify(a)} / ${JSON.stringify(b)}`)
    }
  })

  it("is bounded on hostile input: all-different 4,000-character sides finish fast and highlight the middle whole", () => {
    const a = Array.from({ length: 2_000 }, (_, i) => `a${i}`).join(" ")
    const b = Array.from({ length: 2_000 }, (_, i) => `b${i}`).join(" ")
    const started = performance.now()
    const d = wordDiff(a, b)
    const elapsed = performance.now() - started
    assert.isFalse(d.exact)
    assert.isBelow(elapsed, 500)
    assert.strictEqual(d.oldCut, a.length)
    assert.isTrue(d.old.some((p) => p.changed))
  })
})
