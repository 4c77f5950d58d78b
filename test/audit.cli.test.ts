/**
 * `run-pipeline recapture` then `run-pipeline audit`, as a user runs them: a loopback server serves the
 * fixture policy in two revisions, `capture` makes the old run, `recapture` the new one, `audit` compares.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { AuditResult } from "../src/audit/Records.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { SourceUrl } from "../src/Domain.js"
import { cli } from "./cliProcess.js"
import { testServer } from "./httpServer.js"
import { fixturePath, snapshotDirectory, tempDirectory } from "./support.js"

const policyV1 = fs.readFileSync(fixturePath("audit", "policy-v1.md"))
const policyV2 = fs.readFileSync(fixturePath("audit", "policy-v2.md"))

const quotes = {
  scope: "This policy applies to every account on the Acme Cloud platform, including trial accounts and sandbox projects.",
  limit: "Each account may send at most 30 requests per second to the public API.",
  exception: "Accounts on the Enterprise plan are exempt from the rate limit when they hold a signed traffic agreement.",
  retention: "Deleted projects are kept for 14 days before they are purged, so that an owner can restore them.",
  refund: "refunded in full within the first 30 days",
  gone: "This page will not be served again."
} as const
type Key = keyof typeof quotes
const labels = Object.keys(quotes) as Array<Key>

const decode = Schema.decodeUnknownEither(AuditResult, { errors: "all", onExcessProperty: "error" })

/** The old run (revision 1), a report citing every quote, a config; then revision 2 is served. */
const setup = Effect.gen(function*() {
  const state = { revision: 1 as 1 | 2 }
  const server = yield* testServer((request, response) => {
    if (request.url === "/policy.md") {
      response.writeHead(200, { "content-type": "text/markdown; charset=utf-8" })
      response.end(state.revision === 1 ? policyV1 : policyV2)
    } else if (request.url === "/gone.txt" && state.revision === 1) {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      response.end(`${quotes.gone}\n`)
    } else {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("not found")
    }
  })
  const policy = server.url("/policy.md")
  const gone = server.url("/gone.txt")
  const work = yield* tempDirectory
  const config = path.join(work, "pipeline.json")
  yield* Effect.promise(() =>
    fsp.writeFile(config, JSON.stringify({ sources: [policy, gone], labels, capture: { contentTypes: ["text/plain", "text/markdown"] } }))
  )
  const oldRun = path.join(work, "old")
  const captured = yield* cli(["capture", "--config", config, "--run-dir", oldRun, "--allow-loopback-http"])
  assert.strictEqual(captured.code, 0, captured.stderr)
  const store = yield* CaptureStore.makeFileSystem({ directory: oldRun })
  const digestOf = (source: string) => Effect.map(Effect.orDie(store.read(source as SourceUrl)), (r) => r.sha256)
  const facts: Array<Record<string, string>> = []
  for (const label of labels) {
    const source = label === "gone" ? gone : policy
    facts.push({ state: "cited", label, source, captureSha256: yield* digestOf(source), snippet: quotes[label] })
  }
  const report = path.join(work, "report.json")
  yield* Effect.promise(() => fsp.writeFile(report, JSON.stringify({ facts })))
  const write = (name: string, text: string) =>
    Effect.as(Effect.promise(() => fsp.writeFile(path.join(work, name), text)), path.join(work, name))
  return { state, server, work, config, oldRun, report, policy, gone, write }
})

const recaptured = (s: Effect.Effect.Success<typeof setup>, revision: 1 | 2) =>
  Effect.gen(function*() {
    s.state.revision = revision
    const newRun = path.join(s.work, `new-${revision}`)
    const ran = yield* cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", newRun, "--allow-loopback-http"])
    // Revision 2 no longer serves /gone.txt: that source fails (exit 1) and is missing from the new run.
    assert.strictEqual(ran.code, revision === 1 ? 0 : 1, ran.stderr)
    return newRun
  })

describe("run-pipeline audit", () => {
  it.scopedLive("drift: exit 1; JSON decodes as AuditResult with the fixture's statuses; old and new runs untouched", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const newRun = yield* recaptured(s, 2)
      const beforeOld = yield* snapshotDirectory(s.oldRun)
      const beforeNew = yield* snapshotDirectory(newRun)
      const ran = yield* cli([
        "audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1, ran.stderr)
      const decoded = decode(JSON.parse(ran.stdout))
      assert.isTrue(Either.isRight(decoded), ran.stdout)
      if (Either.isLeft(decoded)) return
      const result = decoded.right
      assert.deepStrictEqual(
        Object.fromEntries(result.findings.map((f) => [f.subject.kind === "fact" ? f.subject.label : "", f.status])),
        { scope: "unchanged", limit: "changed", exception: "deleted", retention: "relocated", refund: "relocated", gone: "source_missing" }
      )
      const limit = result.findings[1]!
      assert.strictEqual(limit.status, "changed")
      if (limit.status === "changed") {
        assert.deepStrictEqual(limit.material, [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }])
        assert.include(limit.candidate.text, "may send at most 20 requests per second")
      }
      assert.strictEqual(result.outcome, "drifted")
      assert.deepStrictEqual(result.affected.map((a) => (a.kind === "fact" ? a.label : "")), ["limit", "exception", "gone"])
      assert.match(ran.stderr, /audit: DRIFTED \(report\): 1 changed \(1 material\), 1 deleted, 1 source missing of 6 citation\(s\)/)
      assert.deepStrictEqual(yield* snapshotDirectory(s.oldRun), beforeOld)
      assert.deepStrictEqual(yield* snapshotDirectory(newRun), beforeNew)
    }))

  it.scopedLive("stable: the same revision recaptured audits as stable, exit 0, in every format", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const newRun = yield* recaptured(s, 1)
      for (const format of ["text", "markdown", "html", "json"]) {
        const ran = yield* cli([
          "audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun, "--format", format
        ])
        assert.strictEqual(ran.code, 0, `${format}: ${ran.stderr}`)
        assert.include(ran.stderr, "audit: STABLE (report): all 6 citation(s) still verbatim in the new run (0 relocated)")
      }
      const text = yield* cli(["audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun])
      assert.match(text.stdout, /^citegate audit: STABLE \(report\): 6 citations: 6 unchanged/)
      assert.include(text.stdout, "Note: This audit is lexical")
    }))

  it.scopedLive("--out: HTML written atomically with the side-by-side view; never inside either run, never over an input", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const newRun = yield* recaptured(s, 2)
      const base = ["audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun, "--format", "html"]
      const out = path.join(s.work, "audit.html")
      const ran = yield* cli([...base, "--out", out])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      assert.include(ran.stderr, `written to ${out}`)
      const page = yield* Effect.promise(() => fsp.readFile(out, "utf8"))
      assert.include(page, `at most <del class="chg">30</del> requests`)
      assert.include(page, `at most <ins class="chg">20</ins> requests`)
      const again = yield* cli([...base, "--out", out])
      assert.strictEqual(again.code, 2)
      assert.include(again.stderr, "OutputRefused")
      for (const inside of [path.join(newRun, "audit.html"), path.join(s.oldRun, "audit.html")]) {
        const refused = yield* cli([...base, "--out", inside])
        assert.strictEqual(refused.code, 2)
        assert.include(refused.stderr, "inside the run directory")
      }
      const overInput = yield* cli([...base, "--out", s.report, "--force"])
      assert.strictEqual(overInput.code, 2)
      assert.include(overInput.stderr, "it is the report")
    }))

  it.scopedLive("an answer: its verified citations audited, affected claims named", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const sources = yield* cli(["sources", "--config", s.config, "--run-dir", s.oldRun, "--format", "json"])
      const digest = JSON.parse(sources.stdout).digest as string
      const newRun = yield* recaptured(s, 2)
      const answer = yield* s.write("answer.json", JSON.stringify({
        format: "citegate.answer/1",
        manifest: digest,
        claims: [
          { id: "rate", text: "The API allows 30 requests per second.", citations: [{ source: 1, quote: quotes.limit }] },
          { id: "scope", text: "Trial accounts are covered.", citations: [{ source: 1, quote: quotes.scope }] }
        ]
      }))
      const ran = yield* cli([
        "audit", "--answer", answer, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1, ran.stderr)
      const result = JSON.parse(ran.stdout)
      assert.isTrue(Either.isRight(decode(result)))
      assert.strictEqual(result.of, "answer")
      assert.deepStrictEqual(result.findings.map((f: { status: string }) => f.status), ["changed", "unchanged"])
      assert.deepStrictEqual(result.affected, [
        { kind: "claim", claimIndex: 0, claimId: "rate", citations: [{ citationIndex: 0, status: "changed" }] }
      ])
    }))

  it.scopedLive("usage errors exit 2: a report that does not verify against the old run, a missing new run, both inputs", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const newRun = yield* recaptured(s, 2)
      const wrong = yield* s.write("wrong.json", JSON.stringify({
        facts: [{ state: "cited", label: "limit", source: s.policy, captureSha256: "0".repeat(64), snippet: quotes.limit }]
      }))
      const noBaseline = yield* cli(["audit", "--report", wrong, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun])
      assert.strictEqual(noBaseline.code, 2)
      assert.strictEqual(noBaseline.stdout, "")
      assert.include(noBaseline.stderr, "DigestMismatch")
      assert.include(noBaseline.stderr, "audit: NO BASELINE: the report does not verify against the old run")
      const missing = yield* cli([
        "audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", path.join(s.work, "nowhere")
      ])
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "InvalidRunDirectory")
      const both = yield* cli([
        "audit", "--report", s.report, "--answer", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun
      ])
      assert.strictEqual(both.code, 2)
      assert.include(both.stderr, "Collision between two options")
      const badFormat = yield* cli([
        "audit", "--report", s.report, "--config", s.config, "--run-dir", s.oldRun, "--against", newRun, "--format", "pdf"
      ])
      assert.strictEqual(badFormat.code, 2)
      assert.include(badFormat.stderr, "--format must be one of")
    }))
})
