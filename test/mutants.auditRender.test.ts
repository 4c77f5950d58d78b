/**
 * Follow-up tests for the mutation run of `src/audit/Render.ts` (docs/testing.md): the text, Markdown
 * and HTML renderings of an audit with every status, missing reason, scope and flag shape, pinned whole
 * (each line read against the record by hand), the JSON rendering against the record written out
 * here, the stable/answer wording, and the cuts at `maxShown` and at the word diff's `maxChars`
 * (exactly at the limit shown whole, one more cut with its length).
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { AuditResult } from "../src/audit/Records.js"
import * as AuditRender from "../src/audit/Render.js"

const d = (c: string) => c.repeat(64)
const at = "2026-11-30T09:00:00.000Z"
const src = "https://x.test/p.md"
const loc = (c: string, start: number, end: number, extra: object = {}) => ({ captureSha256: d(c), accessedAt: at, span: { start, end }, ...extra })
const fresh = { captureSha256: d("b"), accessedAt: at }
const full = {
  format: "citegate.audit/1",
  of: "report",
  outcome: "drifted",
  thresholds: { anchor: 0.45, document: 0.6 },
  summary: { citations: 10, unchanged: 1, relocated: 1, changed: 2, deleted: 3, source_missing: 3, material: 1 },
  findings: [
    { status: "unchanged", subject: { kind: "fact", index: 0, label: "scope" }, source: src, snippet: "All staff.", old: loc("a", 1, 11, { page: 2, heading: ["Policy", "Scope"] }), new: loc("b", 1, 11, { page: 2, heading: ["Policy", "Scope"] }) },
    { status: "relocated", subject: { kind: "claim", claimIndex: 1, claimId: "c<2>", citationIndex: 0 }, source: src, snippet: "Trips need approval.", old: loc("a", 20, 40), new: loc("b", 30, 50, { heading: ["Policy"] }) },
    { status: "changed", subject: { kind: "fact", index: 2, label: "limit" }, source: src, snippet: "Limit: 30 days, not 2.", old: loc("a", 60, 82), new: fresh,
      candidate: { text: "Limit: 20 weeks, 2.", span: { start: 61, end: 80 }, similarity: 0.81234, method: "ratcliff-obershelp/1", scope: "anchor", threshold: 0.45, page: 3, heading: ["Policy", "Limits"] },
      material: [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }, { kind: "negation", oldTokens: ["not"], newTokens: [] }, { kind: "units", oldTokens: [], newTokens: ["weeks"] }] },
    { status: "changed", subject: { kind: "fact", index: 3, label: "crlf" }, source: src, snippet: "A\nB", old: loc("a", 90, 93), new: fresh,
      candidate: { text: "A\r\nB", span: { start: 91, end: 95 }, similarity: 1, method: "normalized/1", scope: "document", threshold: 0.6 },
      material: [] },
    { status: "deleted", subject: { kind: "fact", index: 4, label: "gone" }, source: src, snippet: "Exceptions are rare.", old: loc("a", 100, 120), new: fresh,
      nearest: { text: "Nothing here.", span: { start: 5, end: 18 }, similarity: 0.2, method: "ratcliff-obershelp/1", scope: "document", threshold: 0.6, heading: ["Other"] } },
    { status: "deleted", subject: { kind: "fact", index: 5, label: "none" }, source: src, snippet: "Nothing alike.", old: loc("a", 130, 144), new: fresh },
    { status: "deleted", subject: { kind: "fact", index: 6, label: "long" }, source: src, snippet: "Too long.", old: loc("a", 150, 159), new: fresh, unsearched: "excerpt-too-long" },
    { status: "source_missing", subject: { kind: "fact", index: 7, label: "m1" }, source: "https://x.test/gone", snippet: "One.", old: loc("c", 0, 4), reason: "not-captured", errorTag: "MissingCapture", detail: "No capture" },
    { status: "source_missing", subject: { kind: "fact", index: 8, label: "m2" }, source: "https://x.test/gone", snippet: "Two.", old: loc("c", 5, 9), reason: "capture-failed", errorTag: "UnexpectedStatus", detail: "HTTP 404 <b>\u001b" },
    { status: "source_missing", subject: { kind: "fact", index: 9, label: "m3" }, source: "https://x.test/gone", snippet: "Three.", old: loc("c", 10, 16), reason: "unreadable", errorTag: "CorruptCapture", detail: "body-mismatch" }
  ],
  affected: [
    { kind: "fact", index: 2, label: "limit", status: "changed" },
    { kind: "claim", claimIndex: 1, claimId: "c<2>", citations: [{ citationIndex: 0, status: "deleted" }, { citationIndex: 2, status: "source_missing" }] }
  ],
  note: "This audit is lexical: it compares the cited excerpts with the text of the new captures character by character and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read by a person when the stakes call for it."
}

const textGolden = [
  "citegate audit: DRIFTED (report): 10 citations: 1 unchanged, 1 relocated, 2 changed (1 material), 3 deleted, 3 source missing",
  "similarity thresholds: 0.45 under the same heading or page, 0.6 anywhere in the text",
  "",
  "[UNCHANGED] fact 1 \"scope\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"All staff.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 1–11  page 2, section Policy › Scope  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  span 1–11  page 2, section Policy › Scope  accessed 2026-11-30T09:00:00.000Z",
  "",
  "[RELOCATED] claim 2 \"c<2>\", citation 1",
  "    source     https://x.test/p.md",
  "    excerpt    \"Trips need approval.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 20–40  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  span 30–50  section Policy  accessed 2026-11-30T09:00:00.000Z",
  "",
  "[CHANGED] fact 3 \"limit\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"Limit: 30 days, not 2.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 60–82  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  (excerpt not found verbatim)  accessed 2026-11-30T09:00:00.000Z",
  "    candidate  \"Limit: 20 weeks, 2.\"",
  "               span 61–80, similarity 0.812 (threshold 0.45, anchor scope, ratcliff-obershelp/1), page 3, section Policy › Limits",
  "    MATERIAL   numbers: \"30\" -> \"20\"",
  "    MATERIAL   negation: \"not\" -> (none)",
  "    MATERIAL   units: (none) -> \"weeks\"",
  "",
  "[CHANGED] fact 4 \"crlf\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"A\\u{000a}B\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 90–93  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  (excerpt not found verbatim)  accessed 2026-11-30T09:00:00.000Z",
  "    candidate  \"A\\u{000d}\\u{000a}B\"",
  "               span 91–95, similarity 1.000 (threshold 0.6, document scope, normalized/1)",
  "    material   none flagged (no number, negation, date or unit changed)",
  "",
  "[DELETED] fact 5 \"gone\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"Exceptions are rare.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 100–120  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  (excerpt not found verbatim)  accessed 2026-11-30T09:00:00.000Z",
  "    nearest    \"Nothing here.\"",
  "               span 5–18, similarity 0.200 (threshold 0.6, document scope, ratcliff-obershelp/1), section Other: below the threshold",
  "",
  "[DELETED] fact 6 \"none\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"Nothing alike.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 130–144  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  (excerpt not found verbatim)  accessed 2026-11-30T09:00:00.000Z",
  "    nearest    no passage found",
  "",
  "[DELETED] fact 7 \"long\"",
  "    source     https://x.test/p.md",
  "    excerpt    \"Too long.\"",
  "    old        sha256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  span 150–159  accessed 2026-11-30T09:00:00.000Z",
  "    new        sha256 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  (excerpt not found verbatim)  accessed 2026-11-30T09:00:00.000Z",
  "    nearest    no candidate searched: the excerpt is longer than the candidate search takes (1000 code units), so a changed passage cannot be told from a deleted one",
  "",
  "[SOURCE MISSING] fact 8 \"m1\"",
  "    source     https://x.test/gone",
  "    excerpt    \"One.\"",
  "    old        sha256 cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc  span 0–4  accessed 2026-11-30T09:00:00.000Z",
  "    new        the new run holds no capture of the source (not-captured): MissingCapture: No capture",
  "",
  "[SOURCE MISSING] fact 9 \"m2\"",
  "    source     https://x.test/gone",
  "    excerpt    \"Two.\"",
  "    old        sha256 cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc  span 5–9  accessed 2026-11-30T09:00:00.000Z",
  "    new        the new capture of the source failed (capture-failed): UnexpectedStatus: HTTP 404 <b>\\u{001b}",
  "",
  "[SOURCE MISSING] fact 10 \"m3\"",
  "    source     https://x.test/gone",
  "    excerpt    \"Three.\"",
  "    old        sha256 cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc  span 10–16  accessed 2026-11-30T09:00:00.000Z",
  "    new        the new run's capture of the source cannot be trusted (unreadable): CorruptCapture: body-mismatch",
  "",
  "Affected (2):",
  "    fact 3 \"limit\": changed",
  "    claim 2 \"c<2>\": citation 1 deleted, citation 3 source_missing",
  "",
  "Outcome: drifted",
  "Note: This audit is lexical: it compares the cited excerpts with the text of the new captures character by character and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read by a person when the stakes call for it.",
  ""
].join("\n")

const markdownGolden = [
  "# citegate drift audit",
  "",
  "**DRIFTED (report): 10 citations: 1 unchanged, 1 relocated, 2 changed (1 material), 3 deleted, 3 source missing**",
  "",
  "similarity thresholds: 0.45 under the same heading or page, 0.6 anywhere in the text.",
  "",
  "## Findings",
  "",
  "### 1. UNCHANGED: fact 1 `scope`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 1–11 · page 2, section Policy › Scope · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · span 1–11 · page 2, section Policy › Scope · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "All staff.",
  "```",
  "",
  "### 2. RELOCATED: claim 2 `c<2>`, citation 1",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 20–40 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · span 30–50 · section Policy · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Trips need approval.",
  "```",
  "",
  "### 3. CHANGED: fact 3 `limit`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 60–82 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Limit: 30 days, not 2.",
  "```",
  "",
  "Candidate: span 61–80 · similarity **0.812** (threshold 0.45, anchor scope, `ratcliff-obershelp/1`) · page 3, section Policy › Limits",
  "",
  "```text",
  "Limit: 20 weeks, 2.",
  "```",
  "",
  "Material changes:",
  "",
  "- **numbers**: `30` → `20`",
  "- **negation**: `not` → (none)",
  "- **units**: (none) → `weeks`",
  "",
  "### 4. CHANGED: fact 4 `crlf`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 90–93 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "A",
  "B",
  "```",
  "",
  "Candidate: span 91–95 · similarity **1.000** (threshold 0.6, document scope, `normalized/1`)",
  "",
  "```text",
  "A\\u{000d}",
  "B",
  "```",
  "",
  "Material changes: none flagged.",
  "",
  "### 5. DELETED: fact 5 `gone`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 100–120 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Exceptions are rare.",
  "```",
  "",
  "Nearest passage, below the threshold: span 5–18 · similarity **0.200** (threshold 0.6, document scope, `ratcliff-obershelp/1`) · section Other",
  "",
  "```text",
  "Nothing here.",
  "```",
  "",
  "### 6. DELETED: fact 6 `none`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 130–144 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Nothing alike.",
  "```",
  "",
  "No similar passage was found.",
  "",
  "### 7. DELETED: fact 7 `long`",
  "",
  "- source: `https://x.test/p.md`",
  "- old: sha256 `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` · span 150–159 · accessed 2026-11-30T09:00:00.000Z",
  "- new: sha256 `bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb` · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Too long.",
  "```",
  "",
  "no candidate searched: the excerpt is longer than the candidate search takes (1000 code units), so a changed passage cannot be told from a deleted one.",
  "",
  "### 8. SOURCE MISSING: fact 8 `m1`",
  "",
  "- source: `https://x.test/gone`",
  "- old: sha256 `cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc` · span 0–4 · accessed 2026-11-30T09:00:00.000Z",
  "- new: the new run holds no capture of the source (`not-captured`): `MissingCapture`: No capture",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "One.",
  "```",
  "",
  "### 9. SOURCE MISSING: fact 9 `m2`",
  "",
  "- source: `https://x.test/gone`",
  "- old: sha256 `cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc` · span 5–9 · accessed 2026-11-30T09:00:00.000Z",
  "- new: the new capture of the source failed (`capture-failed`): `UnexpectedStatus`: HTTP 404 \\<b\\>\\\\u{001b}",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Two.",
  "```",
  "",
  "### 10. SOURCE MISSING: fact 10 `m3`",
  "",
  "- source: `https://x.test/gone`",
  "- old: sha256 `cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc` · span 10–16 · accessed 2026-11-30T09:00:00.000Z",
  "- new: the new run's capture of the source cannot be trusted (`unreadable`): `CorruptCapture`: body-mismatch",
  "",
  "Excerpt as cited:",
  "",
  "```text",
  "Three.",
  "```",
  "",
  "## Affected",
  "",
  "- fact 3 `limit`: changed",
  "- claim 2 `c<2>`: citation 1 deleted, citation 3 source_missing",
  "",
  "**Outcome: drifted**",
  "",
  "> This audit is lexical: it compares the cited excerpts with the text of the new captures character by character and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read by a person when the stakes call for it.",
  ""
].join("\n")

const htmlGolden = [
  "<title>citegate: drift audit (drifted)</title>",
  "<style>",
  "body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }",
  ".outcome { padding: .75rem 1rem; border-radius: 6px; font-weight: 600; }",
  ".outcome.stable { background: #e7f6ea; border: 1px solid #3a9d52; }",
  ".outcome.drifted { background: #fdecea; border: 1px solid #c0392b; }",
  ".note { color: #555; font-style: italic; }",
  ".finding { border-top: 1px solid #ddd; padding: .5rem 0 1rem; }",
  ".status { font-size: .75rem; letter-spacing: .05em; font-weight: 700; padding: .1rem .4rem; border-radius: 3px; }",
  ".status.unchanged, .status.relocated { background: #e7f6ea; }",
  ".status.changed { background: #fff3bf; }",
  ".status.deleted, .status.source_missing { background: #fdecea; }",
  ".meta { font-size: .85rem; color: #444; margin: .15rem 0; }",
  "code { font-family: ui-monospace, monospace; }",
  ".passage { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; word-break: break-word; font-family: Georgia, serif; }",
  ".sbs { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }",
  ".sbs .side-tag { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; font-weight: 700; color: #555; }",
  "del.chg { background: #ffc9c9; text-decoration: line-through; }",
  "ins.chg { background: #b2f2bb; text-decoration: none; }",
  ".ctl { color: #c92a2a; font-size: .85em; }",
  ".material { color: #a61e4d; font-weight: 600; }",
  ".cut { color: #666; font-style: italic; }",
  "</style>",
  "</head>",
  "<body>",
  "<h1>Drift audit</h1>",
  "<p class=\"outcome drifted\">DRIFTED (report): 10 citations: 1 unchanged, 1 relocated, 2 changed (1 material), 3 deleted, 3 source missing</p>",
  "<p class=\"meta\">similarity thresholds: 0.45 under the same heading or page, 0.6 anywhere in the text</p>",
  "<p class=\"note\">This audit is lexical: it compares the cited excerpts with the text of the new captures character by character and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read by a person when the stakes call for it.</p>",
  "<h2>Findings</h2>",
  "<section class=\"finding\" id=\"finding-1\" data-status=\"unchanged\">",
  "<h3>1. <span class=\"status unchanged\">UNCHANGED</span> fact 1 <code>&quot;scope&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>1–11</code> · page 2, section Policy › Scope · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · span <code>1–11</code> · page 2, section Policy › Scope · accessed 2026-11-30T09:00:00.000Z</p>",
  "<div class=\"passage\">All staff.</div>",
  "</section>",
  "<section class=\"finding\" id=\"finding-2\" data-status=\"relocated\">",
  "<h3>2. <span class=\"status relocated\">RELOCATED</span> claim 2 <code>&quot;c&lt;2&gt;&quot;</code>, citation 1</h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>20–40</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · span <code>30–50</code> · section Policy · accessed 2026-11-30T09:00:00.000Z</p>",
  "<div class=\"passage\">Trips need approval.</div>",
  "</section>",
  "<section class=\"finding\" id=\"finding-3\" data-status=\"changed\">",
  "<h3>3. <span class=\"status changed\">CHANGED</span> fact 3 <code>&quot;limit&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>60–82</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">Candidate: span <code>61–80</code> · similarity <strong class=\"similarity\">0.812</strong> (threshold 0.45, anchor scope, <code>ratcliff-obershelp/1</code>) · page 3, section Policy › Limits</p>",
  "<div class=\"sbs\">",
  "<div class=\"old\"><div class=\"side-tag\">Old excerpt (as cited)</div><div class=\"passage\" data-side=\"old\">Limit: <del class=\"chg\">30</del> <del class=\"chg\">days</del>,<del class=\"chg\"> not</del> 2.</div></div>",
  "<div class=\"new\"><div class=\"side-tag\">New candidate</div><div class=\"passage\" data-side=\"new\">Limit: <ins class=\"chg\">20</ins> <ins class=\"chg\">weeks</ins>, 2.</div></div>",
  "</div>",
  "<ul class=\"flags\"><li class=\"material\" data-kind=\"numbers\">numbers: <code>30</code> → <code>20</code></li><li class=\"material\" data-kind=\"negation\">negation: <code>not</code> → (none)</li><li class=\"material\" data-kind=\"units\">units: (none) → <code>weeks</code></li></ul>",
  "</section>",
  "<section class=\"finding\" id=\"finding-4\" data-status=\"changed\">",
  "<h3>4. <span class=\"status changed\">CHANGED</span> fact 4 <code>&quot;crlf&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>90–93</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">Candidate: span <code>91–95</code> · similarity <strong class=\"similarity\">1.000</strong> (threshold 0.6, document scope, <code>normalized/1</code>)</p>",
  "<div class=\"sbs\">",
  "<div class=\"old\"><div class=\"side-tag\">Old excerpt (as cited)</div><div class=\"passage\" data-side=\"old\">A<del class=\"chg\">",
  "</del>B</div></div>",
  "<div class=\"new\"><div class=\"side-tag\">New candidate</div><div class=\"passage\" data-side=\"new\">A<ins class=\"chg\">&#13;",
  "</ins>B</div></div>",
  "</div>",
  "<p class=\"meta\">Material changes: none flagged.</p>",
  "</section>",
  "<section class=\"finding\" id=\"finding-5\" data-status=\"deleted\">",
  "<h3>5. <span class=\"status deleted\">DELETED</span> fact 5 <code>&quot;gone&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>100–120</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">Nearest passage, below the threshold: span <code>5–18</code> · similarity <strong class=\"similarity\">0.200</strong> (threshold 0.6, document scope, <code>ratcliff-obershelp/1</code>) · section Other</p>",
  "<div class=\"sbs\">",
  "<div class=\"old\"><div class=\"side-tag\">Old excerpt (as cited)</div><div class=\"passage\" data-side=\"old\"><del class=\"chg\">Exceptions</del> <del class=\"chg\">are rare</del>.</div></div>",
  "<div class=\"new\"><div class=\"side-tag\">Nearest new passage</div><div class=\"passage\" data-side=\"new\"><ins class=\"chg\">Nothing</ins> <ins class=\"chg\">here</ins>.</div></div>",
  "</div>",
  "</section>",
  "<section class=\"finding\" id=\"finding-6\" data-status=\"deleted\">",
  "<h3>6. <span class=\"status deleted\">DELETED</span> fact 6 <code>&quot;none&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>130–144</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z</p>",
  "<div class=\"passage\">Nothing alike.</div>",
  "<p class=\"meta\">No similar passage was found.</p>",
  "</section>",
  "<section class=\"finding\" id=\"finding-7\" data-status=\"deleted\">",
  "<h3>7. <span class=\"status deleted\">DELETED</span> fact 7 <code>&quot;long&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/p.md</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</code> · span <code>150–159</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: capture sha256 <code>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</code> · excerpt not found verbatim · accessed 2026-11-30T09:00:00.000Z</p>",
  "<div class=\"passage\">Too long.</div>",
  "<p class=\"meta\">no candidate searched: the excerpt is longer than the candidate search takes (1000 code units), so a changed passage cannot be told from a deleted one</p>",
  "</section>",
  "<section class=\"finding\" id=\"finding-8\" data-status=\"source_missing\">",
  "<h3>8. <span class=\"status source_missing\">SOURCE MISSING</span> fact 8 <code>&quot;m1&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/gone</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc</code> · span <code>0–4</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: the new run holds no capture of the source (<code>not-captured</code>): <code>MissingCapture</code>: No capture</p>",
  "<div class=\"passage\">One.</div>",
  "</section>",
  "<section class=\"finding\" id=\"finding-9\" data-status=\"source_missing\">",
  "<h3>9. <span class=\"status source_missing\">SOURCE MISSING</span> fact 9 <code>&quot;m2&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/gone</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc</code> · span <code>5–9</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: the new capture of the source failed (<code>capture-failed</code>): <code>UnexpectedStatus</code>: HTTP 404 &lt;b&gt;\\u{001b}</p>",
  "<div class=\"passage\">Two.</div>",
  "</section>",
  "<section class=\"finding\" id=\"finding-10\" data-status=\"source_missing\">",
  "<h3>10. <span class=\"status source_missing\">SOURCE MISSING</span> fact 10 <code>&quot;m3&quot;</code></h3>",
  "<p class=\"meta\">Source <code>https://x.test/gone</code></p>",
  "<p class=\"meta\">Old: capture sha256 <code>cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc</code> · span <code>10–16</code> · accessed 2026-11-30T09:00:00.000Z</p>",
  "<p class=\"meta\">New: the new run&#39;s capture of the source cannot be trusted (<code>unreadable</code>): <code>CorruptCapture</code>: body-mismatch</p>",
  "<div class=\"passage\">Three.</div>",
  "</section>",
  "<h2>Affected</h2>",
  "<ul class=\"affected\"><li>fact 3 <code>&quot;limit&quot;</code>: changed</li><li>claim 2 <code>&quot;c&lt;2&gt;&quot;</code>: citation 1 deleted, citation 3 source_missing</li></ul>",
  "<p class=\"outcome drifted\">Outcome: drifted</p>",
  "</body>",
  "</html>",
  ""
].join("\n")

const decode = Schema.decodeUnknownSync(AuditResult, { errors: "all", onExcessProperty: "error" })
const result = decode(full)

/** The fixture with other findings (counts and affected left as they are: the renderers only print them). */
const withFindings = (findings: ReadonlyArray<unknown>, more: Record<string, unknown> = {}) => decode({ ...full, findings, ...more })

const findingsOf = full.findings as ReadonlyArray<Record<string, unknown>>
const unchanged = findingsOf[0]!
const changed = findingsOf[2]!
const deletedNear = findingsOf[4]!
const missing = findingsOf[7]!

describe("audit renderings, exactly", () => {
  it("text: every status, reason, anchor and flag shape", () => {
    assert.strictEqual(AuditRender.render("text", result), textGolden)
    assert.strictEqual(AuditRender.text(result), textGolden)
  })

  it("Markdown: every status, reason, anchor and flag shape", () => {
    assert.strictEqual(AuditRender.render("markdown", result), markdownGolden)
  })

  it("HTML: the page shell with its policy, then every status, reason, anchor and flag shape", () => {
    const out = AuditRender.render("html", result)
    assert.isTrue(out.startsWith(
      `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">\n`
    ))
    assert.strictEqual(out.slice(out.indexOf("<title>")), htmlGolden)
  })

  it("JSON: the record itself, two-space indented, one newline", () => {
    assert.strictEqual(AuditRender.render("json", result), JSON.stringify(full, null, 2) + "\n")
    assert.strictEqual(AuditRender.json(result), JSON.stringify(full, null, 2) + "\n")
  })

  it("a stable audit of an answer: one citation, nothing affected, in every human format", () => {
    const stable = withFindings(
      [{ ...unchanged, subject: { kind: "claim", claimIndex: 0, claimId: "c1", citationIndex: 1 } }],
      {
        of: "answer",
        outcome: "stable",
        summary: { citations: 1, unchanged: 1, relocated: 0, changed: 0, deleted: 0, source_missing: 0, material: 0 },
        affected: []
      }
    )
    const a = "a".repeat(64)
    const b = "b".repeat(64)
    assert.strictEqual(
      AuditRender.render("text", stable),
      [
        "citegate audit: STABLE (answer): 1 citation: 1 unchanged, 0 relocated, 0 changed (0 material), 0 deleted, 0 source missing",
        "similarity thresholds: 0.45 under the same heading or page, 0.6 anywhere in the text",
        "",
        `[UNCHANGED] claim 1 "c1", citation 2`,
        "    source     https://x.test/p.md",
        `    excerpt    "All staff."`,
        `    old        sha256 ${a}  span 1–11  page 2, section Policy › Scope  accessed 2026-11-30T09:00:00.000Z`,
        `    new        sha256 ${b}  span 1–11  page 2, section Policy › Scope  accessed 2026-11-30T09:00:00.000Z`,
        "",
        "Affected: none",
        "",
        "Outcome: stable",
        `Note: ${full.note}`,
        ""
      ].join("\n")
    )
    const markdown = AuditRender.render("markdown", stable)
    assert.include(
      markdown,
      "**STABLE (answer): 1 citation: 1 unchanged, 0 relocated, 0 changed (0 material), 0 deleted, 0 source missing**\n"
    )
    assert.include(markdown, "### 1. UNCHANGED: claim 1 `c1`, citation 2\n")
    assert.include(markdown, "## Affected\n\nNone.\n\n**Outcome: stable**\n")
    const html = AuditRender.render("html", stable)
    assert.include(html, "<title>citegate: drift audit (stable)</title>")
    assert.include(
      html,
      `<p class="outcome stable">STABLE (answer): 1 citation: 1 unchanged, 0 relocated, 0 changed (0 material), 0 deleted, 0 source missing</p>`
    )
    assert.include(html, `<h2>Affected</h2>\n<p>None.</p>\n<p class="outcome stable">Outcome: stable</p>\n</body>`)
    assert.include(html, `claim 1 <code>&quot;c1&quot;</code>, citation 2</h3>`)
  })
})

describe("audit renderings: untrusted values", () => {
  // Markup, a quote, an ampersand and an escape character in every value a report, answer or capture supplies.
  const bad = "<x a='1'>&\u001b"
  const mark = (s: string) => `${s}${bad}`
  const marked = (value: unknown, key = ""): unknown => {
    if (Array.isArray(value)) return value.map((v) => marked(v, key))
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, marked(v, k)]))
    }
    return typeof value === "string" && untrusted.has(key) ? mark(value) : value
  }
  const untrusted = new Set([
    "label", "claimId", "source", "snippet", "text", "method", "heading", "oldTokens", "newTokens", "errorTag", "detail"
  ])
  const hostile = decode(marked(full))

  it("HTML: every value escaped, none forms markup", () => {
    const html = AuditRender.html(hostile)
    assert.notInclude(html, "<x")
    // A heading is capture text: its escape character is shown, not written raw (nor are an excerpt's, a label's,
    // a token's or a detail's); sources and methods are escaped only.
    assert.include(html, "section Policy&lt;x a=&#39;1&#39;&gt;&amp;<span class=\"ctl\">\\u{001b}</span> › Scope")
    assert.strictEqual(html.split("\u001b").length - 1, 10 + 3)
    // Every value is there, escaped: labels and claim ids, sources, excerpts, candidates, methods, headings,
    // tokens, error tags and details.
    const escapedCount = html.split("&lt;x a=&#39;1&#39;&gt;&amp;").length - 1
    // 12 subjects and affected entries, 10 sources, 8 heading parts, 13 passages (each side of 3 side-by-side views),
    // 3 methods, 4 tokens, 3 error tags, 3 details.
    assert.strictEqual(escapedCount, 12 + 10 + 8 + 13 + 3 + 4 + 3 + 3)
    for (const value of ["limit", "c&lt;2&gt;", "https://x.test/p.md", "ratcliff-obershelp/1", "Other", "30", "weeks", "CorruptCapture", "body-mismatch", "Two."]) {
      assert.include(html, `${value}&lt;x a=&#39;1&#39;&gt;&amp;`, value)
    }
  })

  it("text: no escape character reaches the terminal; Markdown: no value forms HTML", () => {
    const text = AuditRender.text(hostile)
    assert.notInclude(text, "\u001b")
    for (const value of ["limit", "https://x.test/p.md", "ratcliff-obershelp/1", "Other", "weeks", "CorruptCapture", "body-mismatch"]) {
      assert.include(text, value + "<x a='1'>&\\u{001b}", value)
    }
    const markdown = AuditRender.markdown(hostile)
    assert.notInclude(markdown, "\u001b")
    assert.notMatch(markdown.replace(/^```text\n[\s\S]*?\n```$/gmu, "").replace(/`[^`\n]*`/gu, ""), /(?<!\\)<x/u)
  })
})

describe("audit renderings: cuts", () => {
  const max = AuditRender.maxShown
  const at = (n: number, c: string) => c.repeat(n)

  it("maxShown is 2,000 code units", () => {
    assert.strictEqual(max, 2_000)
  })

  it("an excerpt of exactly maxShown is shown whole, one more is cut with its length (text, Markdown, HTML)", () => {
    const whole = withFindings([{ ...unchanged, snippet: at(max, "e") }])
    const over = withFindings([{ ...unchanged, snippet: at(max + 1, "e") }])
    assert.include(AuditRender.text(whole), `    excerpt    "${at(max, "e")}"\n`)
    assert.include(AuditRender.text(over), `    excerpt    "${at(max, "e")}… (2001 characters)"\n`)
    assert.include(AuditRender.markdown(whole), "```text\n" + at(max, "e") + "\n```\n")
    assert.include(AuditRender.markdown(over), "```text\n" + at(max, "e") + "… (2001 characters)\n```\n")
    assert.include(AuditRender.html(whole), `<div class="passage">${at(max, "e")}</div>`)
    assert.include(
      AuditRender.html(over),
      `<div class="passage">${at(max, "e")}<span class="cut">… (2001 characters; the first 2000 are shown)</span></div>`
    )
  })

  it("a candidate, a nearest passage and a failure detail are cut the same way", () => {
    const candidate = changed["candidate"] as Record<string, unknown>
    const nearest = deletedNear["nearest"] as Record<string, unknown>
    const cutFindings = withFindings([
      { ...changed, candidate: { ...candidate, text: at(max + 1, "c") } },
      { ...deletedNear, nearest: { ...nearest, text: at(max + 1, "n") } },
      { ...missing, detail: at(max + 1, "d") }
    ])
    const text = AuditRender.text(cutFindings)
    assert.include(text, `    candidate  "${at(max, "c")}… (2001 characters)"\n`)
    assert.include(text, `    nearest    "${at(max, "n")}… (2001 characters)"\n`)
    assert.include(text, `(not-captured): MissingCapture: ${at(max, "d")}… (2001 characters)\n`)
    const markdown = AuditRender.markdown(cutFindings)
    assert.include(markdown, "```text\n" + at(max, "c") + "… (2001 characters)\n```\n")
    assert.include(markdown, "```text\n" + at(max, "n") + "… (2001 characters)\n```\n")
    assert.include(markdown, `\`MissingCapture\`: ${at(max, "d")}… (2001 characters)\n`)
    assert.include(AuditRender.html(cutFindings), `<code>MissingCapture</code>: ${at(max, "d")}… (2001 characters)</p>`)
    // Exactly maxShown: whole.
    const wholeFindings = withFindings([
      { ...changed, candidate: { ...candidate, text: at(max, "c") } },
      { ...deletedNear, nearest: { ...nearest, text: at(max, "n") } },
      { ...missing, detail: at(max, "d") }
    ])
    const wholeText = AuditRender.text(wholeFindings)
    assert.include(wholeText, `    candidate  "${at(max, "c")}"\n`)
    assert.include(wholeText, `    nearest    "${at(max, "n")}"\n`)
    assert.include(wholeText, `(not-captured): MissingCapture: ${at(max, "d")}\n`)
  })

  it("the side-by-side view: each side cut at the diff's maxChars with its length; past the edit cap the middle is marked whole", () => {
    const candidate = changed["candidate"] as Record<string, unknown>
    // 4,001 code units each: the diff shows the first 4,000 of each side.
    const oldText = at(4_001, "o")
    const newText = at(4_001, "p")
    const html = AuditRender.html(withFindings([{ ...changed, snippet: oldText, candidate: { ...candidate, text: newText } }]))
    assert.include(
      html,
      `<div class="passage" data-side="old"><del class="chg">${at(4_000, "o")}</del><span class="cut">… (4001 characters; the first 4000 are shown)</span></div>`
    )
    assert.include(
      html,
      `<div class="passage" data-side="new"><ins class="chg">${at(4_000, "p")}</ins><span class="cut">… (4001 characters; the first 4000 are shown)</span></div>`
    )
    // One word against another is within the cap: no note.
    assert.notInclude(html, "Too many word changes")
    // 300 words replaced by 300 others: 600 edits, past the cap of 256.
    const words = (w: string) => Array.from({ length: 300 }, (_, i) => `${w}${i}`).join(" ")
    const many = AuditRender.html(withFindings([{ ...changed, snippet: words("o"), candidate: { ...candidate, text: words("n") } }]))
    assert.include(
      many,
      `</div>\n</div><p class="meta">Too many word changes to align: the differing middle is highlighted as a whole.</p>\n<ul class="flags">`
    )
    // Exactly maxChars on each side: nothing cut.
    const exact = AuditRender.html(withFindings([{ ...changed, snippet: at(4_000, "o"), candidate: { ...candidate, text: at(4_000, "p") } }]))
    assert.notInclude(exact, `class="cut"`)
  })
})

describe("audit renderings: flags with several tokens", () => {
  it("the tokens of one side are separated by one space in every human format", () => {
    const several = withFindings([{ ...changed, material: [{ kind: "numbers", oldTokens: ["30", "40"], newTokens: ["20", "10"] }] }])
    assert.include(AuditRender.text(several), `    MATERIAL   numbers: "30" "40" -> "20" "10"\n`)
    assert.include(AuditRender.markdown(several), "- **numbers**: `30` `40` → `20` `10`\n")
    assert.include(
      AuditRender.html(several),
      `<li class="material" data-kind="numbers">numbers: <code>30</code> <code>40</code> → <code>20</code> <code>10</code></li>`
    )
  })
})
