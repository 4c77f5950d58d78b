/**
 * The compiled encoder of the JSON renderings (src/internal/compiledEncode.ts) against the general
 * one (`Schema.encodeSync`): the same bytes for every result it encodes, and the general encoder's
 * own result or error for every value it gives up. Results from real verifications of the fixtures
 * (seeded reports in both modes: verified, every per-fact failure the Verifier produces, drop-mode
 * retractions, invalid reports), and seeded values of every member of `RenderedResult` and
 * `RenderedAnswer` (every error tag), with hostile strings: control characters, lone surrogates,
 * HTML, JSON's own syntax, huge values that a rendering cuts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as AnswerRender from "../src/answer/Render.js"
import { AnswerError, factErrorTags, FactError, VerifyError } from "../src/Errors.js"
import * as CompiledEncode from "../src/internal/compiledEncode.js"
import * as Json from "../src/render/Json.js"
import { fromOutcome, RenderedResult, toResult } from "../src/render/Rendering.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Gate from "../src/verify/Gate.js"
import { emojiRecord } from "./answerSupport.js"
import { inventoryRecord, pipelineConfig, salesRecord } from "./support.js"

/** Shows own keys whose value is `undefined` too (JSON text drops them): the encoded values must agree on those as well. */
const shape = (value: unknown) => JSON.stringify(value, (_key, v) => (v === undefined ? "<undefined>" : v), 2)

/**
 * Encodes `value` both ways. When the compiled path answers, the general one must succeed with the
 * same value (keys, order, every byte of the JSON text); when it gives up, the caller's rendering
 * gets the general result. Returns whether the compiled path answered.
 */
const compare = <A, I>(schema: Schema.Schema<A, I>, value: A, what: string): boolean => {
  const compiled = CompiledEncode.compiled(schema)(value)
  const general = Schema.encodeEither(schema)(value)
  // The public entry point gives the compiled value or exactly what the general encoder gives.
  const entry = Either.try(() => CompiledEncode.encodeSync(schema)(value))
  if (Either.isLeft(general)) {
    assert.isTrue(Option.isNone(compiled), `${what}: the compiled encoder answered where the general one fails`)
    assert.isTrue(Either.isLeft(entry), `${what}: encodeSync succeeded where Schema.encodeSync fails`)
    return false
  }
  assert.isTrue(Either.isRight(entry), what)
  assert.strictEqual(shape(Either.getOrThrow(entry)), shape(general.right), what)
  if (Option.isNone(compiled)) return false
  assert.strictEqual(shape(compiled.value), shape(general.right), what)
  assert.strictEqual(JSON.stringify(compiled.value, null, 2), JSON.stringify(general.right, null, 2), what)
  return true
}

// A seeded generator, so a failure names a case that can be run again.
const rng = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const hostileStrings = [
  "x",
  "",
  " \t\n",
  "\u0000\u0001\u0007\u001f\u007f",
  "\ud800",
  "a\udc00b\ud83d",
  "😀 ü \u2028\u2029 \ufeff",
  "<script>alert(1)</script><img src=x onerror=alert(1)>&amp;",
  "\"},{\"status\":\"verified\"} \\ \\u0000",
  "__proto__",
  "toJSON",
  "m".repeat(5_000),
  "q".repeat(70_000),
  "0123456789abcdef".repeat(4),
  "https://reports.northwind.test/q3-sales.txt",
  "2026-10-01T09:30:00.000Z",
  "exact",
  "normalized/2",
  "Results"
]
const numbers = [0, 1, 2, 3, 6, 42, 1_000_000, 0.5, -1, 1e21, 2 ** 53]

/**
 * A random value of an AST's encoded side (a refinement is retried until its own check holds), or
 * `undefined` where nothing fits. Decoding it with the schema gives a value of the type (class
 * instances, branded strings) to encode.
 */
const sample = (ast: AST.AST, next: () => number, depth: number): unknown => {
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(next() * list.length)]!
  switch (ast._tag) {
    case "Literal":
      return ast.literal
    case "StringKeyword":
    case "TemplateLiteral":
      return pick(hostileStrings)
    case "NumberKeyword":
      return pick(numbers)
    case "BooleanKeyword":
      return next() < 0.5
    case "UndefinedKeyword":
    case "VoidKeyword":
      return undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return pick<unknown>([null, 1, "u", [1, "\ud800"], { a: "<b>" }])
    case "Refinement": {
      const is = Schema.is(Schema.make(AST.typeAST(ast)))
      const decode = ParseResult.decodeUnknownEither(Schema.make(ast))
      for (let i = 0; i < 40; i++) {
        const candidate = sample(ast.from, next, depth)
        if (Either.isRight(decode(candidate)) || is(candidate)) return candidate
      }
      return undefined
    }
    case "Transformation":
      return sample(ast.from, next, depth)
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return Option.isSome(surrogate) ? sample(surrogate.value, next, depth) : undefined
    }
    case "Suspend":
      return depth > 6 ? undefined : sample(ast.f(), next, depth + 1)
    case "Union":
      return sample(pick(ast.types), next, depth)
    case "TupleType": {
      const out: Array<unknown> = ast.elements.filter((e) => !e.isOptional || next() < 0.5).map((e) => sample(e.type, next, depth + 1))
      if (ast.rest.length > 0) {
        const n = depth > 6 ? 0 : Math.floor(next() * 4)
        for (let i = 0; i < n; i++) out.push(sample(ast.rest[0]!.type, next, depth + 1))
        for (const tail of ast.rest.slice(1)) out.push(sample(tail.type, next, depth + 1))
      }
      return out
    }
    case "TypeLiteral": {
      const out: Record<string, unknown> = {}
      for (const ps of ast.propertySignatures) {
        if (ps.isOptional && (depth > 6 || next() < 0.4)) continue
        out[ps.name as string] = sample(ps.type, next, depth + 1)
      }
      return out
    }
    default:
      return undefined
  }
}

/** Seeded values of `schema`'s type: samples that decode (not strictly: extra keys never arise here). */
const valuesOf = <A, I>(schema: Schema.Schema<A, I>, seed: number, count: number): ReadonlyArray<A> => {
  const next = rng(seed)
  const decode = Schema.decodeUnknownEither(schema)
  const out: Array<A> = []
  for (let i = 0; out.length < count && i < count * 50; i++) {
    const decoded = decode(sample(schema.ast, next, 0))
    if (Either.isRight(decoded)) out.push(decoded.right)
  }
  return out
}

/** The `_tag`s of a union of tagged error classes. */
const tagsOf = (union: { readonly members: ReadonlyArray<{ readonly _tag: string }> }) => union.members.map((m) => m._tag)

/** Every `_tag` in an encoded value. */
const tagsIn = (value: unknown, into: Set<string>): Set<string> => {
  if (Array.isArray(value)) for (const item of value) tagsIn(item, into)
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "_tag" && typeof item === "string") into.add(item)
      tagsIn(item, into)
    }
  }
  return into
}

describe("compiled JSON encoding: seeded values of every shape", () => {
  it("RenderedResult: the same bytes as Schema.encodeSync, every error tag covered", () => {
    const values = valuesOf(RenderedResult, 27, 1_500)
    assert.isAtLeast(values.length, 1_000)
    const seen = new Set<string>()
    let compiled = 0
    values.forEach((value, i) => {
      if (compare(RenderedResult, value, `RenderedResult sample ${i}`)) {
        compiled++
        tagsIn(Schema.encodeSync(RenderedResult)(value), seen)
      }
    })
    // The compiled path must carry the load, not leave it to the general encoder.
    assert.isAtLeast(compiled, values.length * 0.95)
    for (const tag of [...factErrorTags, ...tagsOf(VerifyError)]) assert.isTrue(seen.has(tag), `no compiled sample with ${tag}`)
    assert.deepStrictEqual(tagsOf(FactError), [...factErrorTags])
  }, 120_000)

  it("RenderedAnswer: the same bytes as Schema.encodeSync, every error tag covered", () => {
    const values = valuesOf(AnswerRender.RenderedAnswer, 2027, 300)
    assert.isAtLeast(values.length, 250)
    const seen = new Set<string>()
    let compiled = 0
    values.forEach((value, i) => {
      if (compare(AnswerRender.RenderedAnswer, value, `RenderedAnswer sample ${i}`)) {
        compiled++
        tagsIn(Schema.encodeSync(AnswerRender.RenderedAnswer)(value), seen)
      }
    })
    assert.isAtLeast(compiled, values.length * 0.95)
    for (const tag of tagsOf(AnswerError)) assert.isTrue(seen.has(tag), `no compiled sample with ${tag}`)
  }, 120_000)

  it("values the general encoder refuses: the compiled path gives them up, and the rendering fails as before", () => {
    const [verified] = valuesOf(RenderedResult, 5, 200).filter((v) => v.status === "verified" && v.report.facts.length > 0)
    assert.isDefined(verified)
    if (verified?.status !== "verified") return
    const entry = verified.report.facts[0]!
    const broken: ReadonlyArray<readonly [string, unknown]> = [
      // A lone surrogate where the schema requires well-formed text.
      ["lone surrogate in a label", { ...entry, fact: { ...entry.fact, label: "\ud800" } }],
      // A key the strict entry schema does not name.
      ["excess key on an entry", { ...entry, extra: 1 }],
      ["index not an integer", { ...entry, index: 0.5 }],
      ["fact state unknown", { ...entry, fact: { ...entry.fact, state: "guessed" } }]
    ]
    for (const [what, fact] of broken) {
      const report = Object.assign(Object.create(Object.getPrototypeOf(verified.report)), verified.report, { facts: [fact] })
      const value = { ...verified, report }
      assert.isTrue(Option.isNone(CompiledEncode.compiled(RenderedResult)(value as never)), what)
      assert.isTrue(Either.isLeft(Schema.encodeEither(RenderedResult)(value as never)), what)
      assert.throws(() => CompiledEncode.encodeSync(RenderedResult)(value as never))
    }
    // A report that is not a VerifiedReport instance: the class's own check decides, as before.
    const plain = { ...verified, report: { ...verified.report } }
    compare(RenderedResult, plain as never, "a plain report object")
  })
})

// --- real verifications of the fixtures ---------------------------------------------------------

const records = [salesRecord, inventoryRecord, emojiRecord]
const labels = (pipelineConfig as { readonly labels: ReadonlyArray<string> }).labels
const config = (mode: "reject" | "drop") => ({
  sources: [...records.map((r) => r.source), "https://reports.northwind.test/never-captured.txt"],
  labels: [...labels, "emoji"],
  verify: { maxFacts: 100, mode }
})

/** A seeded report over the fixture captures: verbatim, absent, altered and unanchored excerpts, bad sources and labels, unavailable facts. */
const seededReport = (next: () => number): string => {
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(next() * list.length)]!
  const facts = Array.from({ length: 1 + Math.floor(next() * 8) }, () => {
    const record = pick(records)
    const start = Math.floor(next() * (record.text.length - 40))
    const snippet = record.text.slice(start, start + 5 + Math.floor(next() * 30))
    const label = next() < 0.15 ? pick(hostileStrings.filter((s) => s.trim() !== "" && s.isWellFormed() && s.length < 200)) : pick([...labels, "emoji"])
    const cited = { state: "cited", label, source: record.source, captureSha256: record.sha256, snippet: snippet.trim() === "" ? "Q3" : snippet }
    switch (Math.floor(next() * 9)) {
      case 0:
        return { ...cited, snippet: `${cited.snippet} <b>not there</b> \u0007` }
      case 1:
        return { ...cited, captureSha256: "0".repeat(64) }
      case 2:
        return { ...cited, source: pick(["https://reports.northwind.test/never-captured.txt", "https://elsewhere.example.com/x", "http://Reports.northwind.test/q3-sales.txt"]) }
      case 3:
        return { ...cited, page: 2 }
      case 4:
        return { ...cited, heading: ["Results", "Q3"] }
      case 5:
        return { state: "unavailable", label, reason: pick(hostileStrings.filter((s) => s.trim() !== "" && s.isWellFormed())) }
      case 6:
        return { ...cited, snippet: "the", prefix: " " }
      default:
        return cited
    }
  })
  // Now and then a report that is not a valid report at all (InvalidReport).
  return next() < 0.08 ? JSON.stringify({ facts: [{ state: "cited", label: "\ud800" }], extra: true }) : JSON.stringify({ facts })
}

describe("compiled JSON encoding: real verifications of the fixtures", () => {
  it.live("every result renders byte for byte as through Schema.encodeSync (reject and drop, 300 reports)", () =>
    Effect.gen(function*() {
      const next = rng(1234)
      const seen = new Set<string>()
      const statuses = new Set<string>()
      for (const mode of ["reject", "drop"] as const) {
        const gate = yield* Effect.provide(Gate.Gate, Gate.layerWithStore(config(mode)).pipe(Layer.provide(MemoryStore.layer({ records }))))
        for (let i = 0; i < 150; i++) {
          const outcome = yield* Effect.either(gate.checkJsonWithCaptures(seededReport(next)))
          const rendering = fromOutcome(outcome)
          const json = Json.toJson(rendering)
          // Encoded by the compiled path itself, not handed to the general encoder.
          assert.isTrue(Option.isSome(CompiledEncode.compiled(RenderedResult)(toResult(rendering))), `report ${mode} ${i} fell back`)
          // Byte for byte: the rendering against the same value through Schema.encodeSync alone.
          assert.strictEqual(Json.render(rendering), JSON.stringify(Json.toJsonGeneral(rendering), null, 2) + "\n", `report ${mode} ${i}`)
          assert.strictEqual(shape(json), shape(Json.toJsonGeneral(rendering)))
          tagsIn(json, seen)
          statuses.add(Either.isRight(outcome) ? `${mode}:${outcome.right.report.outcome}` : `${mode}:${outcome.left._tag}`)
          // A signed result's attestation, added to the value: the bytes the parse-and-render round trip wrote.
          const envelope = { payloadType: "application/vnd.in-toto+json", payload: "e30=", signatures: [{ keyid: "k", sig: "s\u2028" }] }
          assert.strictEqual(
            Json.text(json, { attestation: envelope }),
            JSON.stringify({ ...JSON.parse(Json.render(rendering)), attestation: envelope }, null, 2) + "\n"
          )
        }
      }
      // The mix really held what it is meant to: verified and rejected results, retractions, failures of several kinds.
      for (const status of ["reject:grounded", "reject:ReportRejected", "reject:InvalidReport", "drop:grounded"]) {
        assert.isTrue(statuses.has(status), `no ${status} among ${[...statuses].join(", ")}`)
      }
      for (const tag of ["SnippetAbsent", "DigestMismatch", "NotApproved", "UnknownLabel", "DuplicateLabel", "AnchorMismatch", "MissingCapture"]) {
        assert.isTrue(seen.has(tag), `no ${tag} among ${[...seen].join(", ")}`)
      }
    }), 120_000)

  it("the answer's JSON rendering is its value's text, and a signed answer's bytes are unchanged", () => {
    for (const [i, value] of valuesOf(AnswerRender.RenderedAnswer, 99, 200).entries()) {
      const rendering = value.status === "verified"
        ? AnswerRender.AnswerRendering.Verified({ answer: value.answer, captures: new Map(), judge: value.judge })
        : AnswerRender.AnswerRendering.Rejected({ error: value.error })
      const rendered = AnswerRender.render("json", rendering)
      assert.strictEqual(rendered, JSON.stringify(Schema.encodeSync(AnswerRender.RenderedAnswer)(AnswerRender.toResult(rendering)), null, 2) + "\n", `answer ${i}`)
      assert.strictEqual(Json.text(AnswerRender.toJson(rendering)), rendered)
      const envelope = { payloadType: "application/vnd.in-toto+json", payload: "e30=", signatures: [] }
      assert.strictEqual(
        Json.text(AnswerRender.toJson(rendering), { attestation: envelope }),
        JSON.stringify({ ...JSON.parse(rendered), attestation: envelope }, null, 2) + "\n"
      )
    }
  }, 120_000)
})
