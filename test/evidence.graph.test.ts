/**
 * JSON-LD renderings and `validate-graph`: every demo output (the six sample reports, an answer and an
 * audit of the demo run) rendered as JSON-LD conforms to citegate's SHACL shapes; each shape broken on
 * purpose fails with the expected focus node, path and shape; the `jsonld` processor's expansion (in
 * safe mode: nothing dropped) gives back every field with its value; the limits and the offline
 * loader refuse before the work; and the spawned CLI prints the violations as data with its exit codes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import jsonld from "jsonld"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Graph from "../src/evidence/Graph.js"
import { contextIri } from "../src/evidence/Records.js"
import * as JsonLd from "../src/render/JsonLd.js"
import { cli } from "./cliProcess.js"
import { cliInProcess } from "./cliInProcess.js"
import { fixturePath, tempDirectory } from "./support.js"

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }

const context = await Effect.runPromise(Graph.loadContext())
const loader = Graph.offlineLoader(context).load

const CG = "urn:citegate:vocab:"
const OA = "http://www.w3.org/ns/oa#"
const CGS = "urn:citegate:shapes:"

/** The expanded form back to plain JSON: vocabulary prefixes off, values and lists unwrapped. */
const fromExpanded = (value: unknown): Json => {
  if (Array.isArray(value)) return value.map(fromExpanded)
  if (typeof value !== "object" || value === null) return value as Json
  const node = value as Record<string, unknown>
  if ("@value" in node) return node["@value"] as Json
  if ("@list" in node) return fromExpanded(node["@list"])
  const out: Record<string, Json> = {}
  for (const [key, v] of Object.entries(node)) {
    const name = key.startsWith(CG) ? key.slice(CG.length) : key.startsWith(OA) ? key.slice(OA.length) : key
    out[name] = key === "@type"
      ? (v as Array<string>).map((t) => t.replace(CG, "").replace(OA, ""))
      : fromExpanded(v)
  }
  return out
}

/**
 * The rendered document in the same form: each property's value an array (a list stays one array),
 * `null`s dropped (JSON-LD's absence), the selectors' `type` as `@type`, the W3C names unprefixed.
 */
const asExpanded = (value: Json, key = "", lists = new Set(["heading"])): Json => {
  if (Array.isArray(value)) {
    const items = value.map((item) => asExpanded(item, key, lists))
    return lists.has(key) ? [items] : items
  }
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, Json> = {}
  for (const [k, v] of Object.entries(value)) {
    if (v === null || k === "@context") continue
    const name = key === "selector" && k === "type" ? "@type" : k === "selector" ? "hasSelector" : k
    if (name === "@id") out[name] = v
    else if (name === "@type") out[name] = Array.isArray(v) ? v : [v]
    else if (name === "sourceDocument") out[name] = [{ "@id": v }]
    else {
      const inner = asExpanded(v, k === "selector" ? "selector" : k, lists)
      out[name] = Array.isArray(v) ? (inner as Array<Json>) : [inner]
    }
  }
  return out
}

/** Expands with the `jsonld` processor in safe mode (a dropped value is an error) and compares every field. */
const roundTrips = (text: string) =>
  Effect.promise(async () => {
    const document = JSON.parse(text) as Json
    const expanded = await jsonld.expand(document as jsonld.JsonLdDocument, { documentLoader: loader as never, safe: true } as never)
    assert.deepStrictEqual(fromExpanded(expanded), [asExpanded(document)])
  })

const conforms = (file: string) =>
  Effect.gen(function*() {
    const validation = yield* Graph.validateFile(file)
    assert.deepStrictEqual(validation.violations, [], file)
    assert.isTrue(validation.conforms)
    assert.isAbove(validation.quads, 20)
    return validation
  })

/** The demo, run once in this process: its run, drafts and renderings. */
const demo = Effect.gen(function*() {
  const work = yield* tempDirectory
  const ran = yield* cliInProcess(["demo", "--output", work])
  assert.strictEqual(ran.code, 0, ran.stderr)
  const [stamp] = yield* Effect.promise(() => fsp.readdir(work))
  const directory = path.join(work, stamp!)
  return { work, directory, runDir: path.join(directory, "captures"), config: path.join(directory, "pipeline.json") }
})

const readJson = (file: string) => Effect.promise(async () => JSON.parse(await fsp.readFile(file, "utf8")) as Record<string, any>)
const writeJson = (file: string, value: unknown) => Effect.promise(() => fsp.writeFile(file, JSON.stringify(value, null, 2)))

describe("JSON-LD renderings of the demo's outputs", () => {
  it.scopedLive("every report, the answer and the audit conform, and expansion gives back every field", () =>
    Effect.gen(function*() {
      const d = yield* demo
      const renderings = path.join(d.directory, "renderings")
      const files = (yield* Effect.promise(() => fsp.readdir(renderings))).filter((f) => f.endsWith(".jsonld")).sort()
      assert.deepStrictEqual(files, ["grounded.jsonld", "no-evidence.jsonld", "rejected.jsonld", "wrong-label.jsonld", "wrong-period.jsonld", "wrong-unit.jsonld"])
      for (const file of files) {
        yield* conforms(path.join(renderings, file))
        const text = yield* Effect.promise(() => fsp.readFile(path.join(renderings, file), "utf8"))
        yield* roundTrips(text)
        // The JSON-LD is the JSON rendering with ids, types and evidence links added: every field of it is there.
        const json = yield* readJson(path.join(renderings, file.replace(/\.jsonld$/, ".json")))
        const doc = JSON.parse(text)
        assert.strictEqual(doc["@context"], contextIri)
        assert.strictEqual(doc.status, json.status)
        if (json.status === "verified") {
          assert.strictEqual(doc.report.facts.length, json.report.facts.length)
          json.report.facts.forEach((entry: any, i: number) => {
            const node = doc.report.facts[i]
            assert.deepStrictEqual(node.fact, entry.fact)
            if (entry.fact.state === "cited") {
              assert.deepStrictEqual(node["@type"], "Claim")
              const { "@id": _id, "@type": type, captureDigest, quote, sourceDocument, ...evidence } = node.evidence
              assert.deepStrictEqual(evidence, entry.evidence)
              assert.deepStrictEqual([type, sourceDocument, quote, captureDigest], ["Evidence", entry.fact.source, entry.fact.snippet, entry.fact.captureSha256])
            } else assert.strictEqual(node["@type"], "UnavailableFact")
          })
          assert.deepStrictEqual(doc.report.retractions.map((r: any) => r["@type"]), json.report.retractions.map(() => "RejectedCitation"))
        } else {
          assert.deepStrictEqual(doc.error.failures.map((f: any) => f["@type"]), json.error.failures.map(() => "RejectedCitation"))
        }
      }
      const grounded = yield* readJson(path.join(renderings, "grounded.jsonld"))
      assert.deepStrictEqual(grounded.report.facts.map((f: any) => f["@type"]), ["Claim", "Claim", "Claim", "Claim", "Claim", "UnavailableFact"])
      // The number review is a Review node, linked from the report.
      assert.strictEqual(grounded.report.numberReview["@type"], "Review")
      const noEvidence = yield* readJson(path.join(renderings, "no-evidence.jsonld"))
      assert.isAbove(noEvidence.report.retractions.length, 0)

      // An answer verified against the demo run, rendered as JSON-LD.
      // The manifest lists only captured sources: the demo's q4-outlook.txt is approved but never published.
      const demoConfig = yield* readJson(d.config)
      const answerConfig = path.join(d.work, "answer-config.json")
      yield* writeJson(answerConfig, { ...demoConfig, sources: demoConfig.sources.filter((s: string) => !s.endsWith("/q4-outlook.txt")) })
      const sources = yield* cliInProcess(["sources", "--config", answerConfig, "--run-dir", d.runDir, "--format", "json"])
      assert.strictEqual(sources.code, 0, sources.stderr)
      const answerOut = path.join(d.work, "answer.jsonld")
      const answer = yield* cliInProcess([
        "verify-answer", "--answer", fixturePath("answers", "summary.answer.json"), "--config", answerConfig, "--run-dir", d.runDir,
        "--manifest-digest", JSON.parse(sources.stdout).digest,
        "--mode", "drop", "--format", "jsonld", "--out", answerOut
      ])
      assert.strictEqual(answer.code, 0, answer.stderr)
      yield* conforms(answerOut)
      const answerText = yield* Effect.promise(() => fsp.readFile(answerOut, "utf8"))
      yield* roundTrips(answerText)
      const answerDoc = JSON.parse(answerText)
      assert.strictEqual(answerDoc["@type"], "AnswerResult")
      const claim = answerDoc.answer.claims[0]
      assert.strictEqual(claim["@type"], "Claim")
      assert.deepStrictEqual(claim.evidence, claim.citations.map((c: any) => ({ "@id": c.evidence["@id"] })))

      // The audit of the grounded report against the same run: stable.
      const auditOut = path.join(d.work, "audit.jsonld")
      const audit = yield* cliInProcess([
        "audit", "--report", path.join(d.directory, "drafts", "grounded.json"), "--config", d.config, "--run-dir", d.runDir,
        "--against", d.runDir, "--format", "jsonld", "--out", auditOut
      ])
      assert.strictEqual(audit.code, 0, audit.stderr)
      yield* conforms(auditOut)
      const auditText = yield* Effect.promise(() => fsp.readFile(auditOut, "utf8"))
      yield* roundTrips(auditText)
      const auditDoc = JSON.parse(auditText)
      assert.strictEqual(auditDoc.outcome, "stable")
      assert.deepStrictEqual(auditDoc.findings.map((f: any) => f["@type"]), Array(5).fill("AuditFinding"))

      // Each shape broken on purpose: the expected focus node, path and shape.
      const doc = yield* readJson(path.join(renderings, "grounded.jsonld"))
      const fact = `${doc["@id"]}#facts/0`
      const evidence = `${fact}/evidence`
      const broken = (name: string, edit: (copy: any) => void) =>
        Effect.gen(function*() {
          const copy = structuredClone(doc)
          edit(copy)
          const file = path.join(d.work, `${name}.jsonld`)
          yield* writeJson(file, copy)
          const validation = yield* Graph.validateFile(file)
          assert.isFalse(validation.conforms, name)
          return validation.violations.map((v) => [v.focusNode, v.path, v.shape.replace(CGS, "")])
        })
      assert.deepStrictEqual(yield* broken("no-evidence-link", (c) => delete c.report.facts[0].evidence), [
        [fact, `${CG}evidence`, "ClaimShape-evidence"]
      ])
      assert.deepStrictEqual(yield* broken("no-source", (c) => delete c.report.facts[0].evidence.sourceDocument), [
        [evidence, `${CG}sourceDocument`, "EvidenceShape-sourceDocument"]
      ])
      assert.deepStrictEqual(yield* broken("page-zero", (c) => (c.report.facts[0].evidence.page = 0)), [
        [evidence, `${CG}page`, "EvidenceShape-page"]
      ])
      assert.deepStrictEqual(yield* broken("page-fraction", (c) => (c.report.facts[0].evidence.page = 1.5)), [
        [evidence, `${CG}page`, "EvidenceShape-page"]
      ])
      assert.deepStrictEqual(yield* broken("two-pages", (c) => (c.report.facts[0].evidence.page = [2, 3])), [
        [evidence, `${CG}page`, "EvidenceShape-page"]
      ])
      assert.deepStrictEqual(yield* broken("empty-quote", (c) => (c.report.facts[0].evidence.quote = "")), [
        [evidence, `${CG}quote`, "EvidenceShape-quote"]
      ])
      assert.deepStrictEqual(yield* broken("no-digest", (c) => delete c.report.facts[0].evidence.captureDigest), [
        [evidence, `${CG}captureDigest`, "VerifiedEvidenceShape-captureDigest"]
      ])
      assert.deepStrictEqual(yield* broken("bad-digest", (c) => (c.report.facts[0].evidence.captureDigest = "ABC")), [
        [evidence, `${CG}captureDigest`, "VerifiedEvidenceShape-captureDigest"]
      ])
      assert.deepStrictEqual(yield* broken("no-quote-selector", (c) => c.report.facts[0].evidence.selector.splice(0, 1)), [
        [evidence, `${OA}hasSelector`, "VerifiedEvidenceShape-textQuoteSelector"]
      ])
      // A retraction typed as evidence too, and linked from a claim as its evidence.
      const rejectedDoc = yield* readJson(path.join(renderings, "no-evidence.jsonld"))
      const retraction = rejectedDoc.report.retractions[0]
      const copy = structuredClone(rejectedDoc)
      copy.report.retractions[0] = { ...retraction, "@type": ["RejectedCitation", "Evidence"] }
      copy.report.facts.push({ "@id": `${rejectedDoc["@id"]}#smuggled`, "@type": "Claim", evidence: { "@id": retraction["@id"] } })
      const smuggled = path.join(d.work, "smuggled.jsonld")
      yield* writeJson(smuggled, copy)
      const shapes = (yield* Graph.validateFile(smuggled)).violations
        .filter((v) => v.focusNode === retraction["@id"])
        .map((v) => v.shape.replace(CGS, ""))
      assert.includeMembers(shapes, ["RejectedCitationShape", "EvidenceLinkShape"])

      // The spawned CLI: exit 0 and one line for a conforming graph; exit 1 and the violations as data.
      const ok = yield* cli(["validate-graph", path.join(renderings, "grounded.jsonld")])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stdout, /^validate-graph: .*grounded\.jsonld conforms to citegate's shapes \(\d+ statements, 0 violations\)\n$/)
      const bad = yield* cli(["validate-graph", "--format", "json", path.join(d.work, "page-zero.jsonld")])
      assert.strictEqual(bad.code, 1, bad.stderr)
      assert.strictEqual(bad.stderr, "validate-graph: 1 violation(s)\n")
      const report = JSON.parse(bad.stdout)
      assert.strictEqual(report.format, "citegate.graph-validation/1")
      assert.isFalse(report.conforms)
      assert.deepStrictEqual(report.violations, [{
        focusNode: evidence,
        path: `${CG}page`,
        shape: `${CGS}EvidenceShape-page`,
        constraint: "http://www.w3.org/ns/shacl#MinInclusiveConstraintComponent",
        severity: "http://www.w3.org/ns/shacl#Violation",
        message: "An evidence's page, when present, is one integer of at least 1",
        value: "0"
      }])
      const text = yield* cli(["validate-graph", path.join(d.work, "page-zero.jsonld")])
      assert.strictEqual(text.code, 1)
      assert.include(text.stdout, `does NOT conform: 1 violation(s)`)
      assert.include(text.stdout, `- sh:Violation ${evidence}\n  path: cg:page\n  shape: cgs:EvidenceShape-page (sh:MinInclusiveConstraintComponent)\n`)
      const foreign = path.join(d.work, "foreign.jsonld")
      yield* writeJson(foreign, { ...doc, "@context": "https://example.org/context.jsonld" })
      const refused = yield* cli(["validate-graph", foreign])
      assert.strictEqual(refused.code, 2)
      assert.match(refused.stderr, /^GraphContextRefused: .* names the context https:\/\/example\.org\/context\.jsonld;/)
      assert.strictEqual(refused.stdout, "")
    }), 600_000)
})

describe("the renderer keeps hostile text as data", () => {
  const hostile = "\"quoted\" <script>alert(1)</script> @id _:b0 \\ \u2028 \u0000 \u{1F600} http://x/#y"
  const encoded = {
    format: "citegate.result/1",
    status: "verified",
    report: {
      format: "citegate.verified/1",
      outcome: "grounded",
      mode: "drop",
      facts: [
        {
          index: 0,
          fact: { state: "cited", label: "q3", source: "https://reports.example.com/a.txt", captureSha256: "a".repeat(64), snippet: hostile },
          evidence: {
            span: { start: 0, end: 3 },
            occurrences: 1,
            accessedAt: "2026-10-01T09:30:00.000Z",
            heading: ["@type", "Results"],
            selector: [
              { type: "TextQuoteSelector", exact: hostile, prefix: "", suffix: "" },
              { type: "TextPositionSelector", start: 0, end: 3 }
            ]
          }
        },
        { index: 1, fact: { state: "unavailable", label: "q4", reason: hostile } }
      ],
      retractions: [{ index: 2, label: "@context", error: { _tag: "SnippetAbsent", source: hostile, snippet: hostile } }],
      proves: "provenance-only",
      semanticReview: "not-performed"
    }
  } as const

  it.effect("expansion gives back every string exactly; the graph conforms", () =>
    Effect.gen(function*() {
      const text = JsonLd.report(encoded as unknown as JsonLd.JsonObject)
      yield* roundTrips(text)
      const doc = JSON.parse(text)
      assert.strictEqual(doc.report.facts[0].evidence.quote, hostile)
      assert.strictEqual(doc.report.retractions[0].error.source, hostile)
      // The same result, the same ids.
      assert.strictEqual(JsonLd.report(encoded as unknown as JsonLd.JsonObject), text)
      const validation = yield* Graph.validateDocument("hostile", doc)
      assert.deepStrictEqual(validation.violations, [])
    }))
})

describe("validate-graph refuses before the work", () => {
  it.scoped("size, values and depth are checked before expansion; only citegate's context is loaded", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const file = path.join(work, "doc.jsonld")
      yield* writeJson(file, { "@context": contextIri, "@id": "urn:x", "@type": "Claim", items: Array.from({ length: 50 }, (_, i) => i) })
      const limits = { ...Graph.defaultLimits }
      const size = (yield* Effect.promise(() => fsp.stat(file))).size
      const tooLarge = yield* Effect.flip(Graph.validateFile(file, { ...limits, maxBytes: size - 1 }))
      assert.strictEqual(tooLarge._tag, "GraphInputTooLarge")
      assert.deepInclude(tooLarge, { bytes: size, limit: size - 1 })
      const tooMany = yield* Effect.flip(Graph.validateFile(file, { ...limits, maxNodes: 40 }))
      assert.deepInclude(tooMany, { _tag: "GraphTooComplex", measure: "nodes", limit: 40 })
      // Nested 10,000 deep: refused on depth, without recursion.
      let deep: Json = "leaf"
      for (let i = 0; i < 10_000; i++) deep = { n: deep }
      const tooDeep = yield* Effect.flip(Graph.validateDocument("deep", { "@context": contextIri, deep }))
      assert.deepInclude(tooDeep, { _tag: "GraphTooComplex", measure: "depth", limit: 64 })
      const tooManyQuads = yield* Effect.flip(Graph.validateFile(file, { ...limits, maxQuads: 10 }))
      assert.deepInclude(tooManyQuads, { _tag: "GraphTooComplex", measure: "quads", limit: 10 })
      // A context imported from elsewhere is refused, never fetched; so is a remote context in an array.
      for (const ctx of [[contextIri, "http://127.0.0.1:9/evil.jsonld"], { "@import": "https://example.org/c.jsonld" }]) {
        const refused = yield* Effect.flip(Graph.validateDocument("remote", { "@context": ctx, "@type": "Claim" }))
        assert.strictEqual(refused._tag, "GraphContextRefused")
      }
      yield* Effect.promise(() => fsp.writeFile(file, "{not json"))
      assert.strictEqual((yield* Effect.flip(Graph.validateFile(file)))._tag, "GraphInputInvalid")
      yield* Effect.promise(() => fsp.writeFile(file, Buffer.from([0x7b, 0xff, 0x7d])))
      assert.strictEqual((yield* Effect.flip(Graph.validateFile(file)))._tag, "GraphInputInvalid")
      assert.strictEqual((yield* Effect.flip(Graph.validateFile(path.join(work, "missing.jsonld"))))._tag, "GraphInputInvalid")
    }))

  it.effect("the shipped context and shapes are the files the package names", () =>
    Effect.gen(function*() {
      const shipped = JSON.parse(yield* Effect.promise(() => fsp.readFile(fixturePath("..", "schema", "citegate-v1.context.jsonld"), "utf8")))
      assert.deepStrictEqual(yield* Graph.loadContext(), shipped)
      const shapes = yield* Graph.loadShapes()
      assert.isAbove(shapes.size, 40)
      const pkg = JSON.parse(yield* Effect.promise(() => fsp.readFile(fixturePath("..", "package.json"), "utf8")))
      assert.include(pkg.files, "schema")
    }))
})
