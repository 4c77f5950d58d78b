/**
 * The report decode's hand check (src/internal/reportDecode.ts) against the Report Schema alone. For
 * every input (the README's report, reports shaped as the benchmarks', every one-change variation of
 * valid reports: a key removed or added, a value of another type, a bad digest, a blank or
 * ill-formed string, a string or array one past its limit; seeded random combinations of changes;
 * hostile values), `decodeUnknown` and `decodeJson` with the hand check must return exactly what they
 * return without it: the same value (key order included) or the same issues, word for word. The hand
 * check alone may only accept what the Schema accepts, and must accept the valid reports, or it
 * saves nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { defaultMaxFacts, factLimits, makeReport, maxQuoteContext, sha256Of } from "../src/Domain.js"
import { decodeJson, decodeUnknown, plainDataIssue } from "../src/internal/decode.js"
import { fastReport } from "../src/internal/reportDecode.js"

const digest = sha256Of("capture text")
const cited = (i: number): Record<string, unknown> => ({
  state: "cited",
  label: `fact_${i}`,
  source: `https://bench.example.com/source-${i}.txt`,
  captureSha256: digest,
  snippet: `Net sales for Q${i} 2026 were 4,210 units — é 文 😀`
})
const full: Record<string, unknown> = {
  state: "cited",
  label: "q3_net_sales",
  source: "https://reports.example.com/q3-sales.txt",
  captureSha256: digest,
  snippet: "4,210 units",
  page: 2,
  heading: ["Results", "Q3"],
  prefix: "were ",
  suffix: " in"
}
const unavailable: Record<string, unknown> = { state: "unavailable", label: "q4_forecast", reason: "No Q4 figure is in the approved sources." }

/** The README's example reports (```json blocks with `"facts"`). */
const readmeReports = (): Array<unknown> =>
  [...readFileSync(new URL("../README.md", import.meta.url), "utf8").matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((block) => block.trimStart().startsWith("{") && block.includes("\"facts\""))
    .map((block) => JSON.parse(block) as unknown)

const validReports: ReadonlyArray<unknown> = [
  ...readmeReports(),
  { facts: [] },
  { facts: [unavailable] },
  { facts: [full, unavailable, cited(1)] },
  // Reversed key order: the decoded value has the Schema's order.
  { facts: [Object.fromEntries(Object.entries(full).reverse()), Object.fromEntries(Object.entries(unavailable).reverse())] },
  // The service benchmark's shape (20 cited facts) and the fact limit exactly.
  { facts: Array.from({ length: 20 }, (_, i) => cited(i)) },
  { facts: Array.from({ length: defaultMaxFacts }, (_, i) => (i % 7 === 0 ? { ...unavailable, label: `u${i}` } : cited(i))) },
  // Duplicate and unapproved labels are the Verifier's business, not the decode's.
  { facts: [cited(1), cited(1), { ...unavailable, label: "fact_1" }] },
  // Limits exactly.
  {
    facts: [{
      ...full,
      label: "l".repeat(200),
      page: 1_000_000,
      heading: Array.from({ length: 6 }, () => "h".repeat(1_000)),
      prefix: "p".repeat(maxQuoteContext),
      suffix: " "
    }, { ...full, page: 1, heading: ["x"] }]
  }
]

const REMOVE = Symbol("remove")
const replacements: ReadonlyArray<unknown> = [
  REMOVE, undefined, null, true, 0, -1, 1, 1.5, -0, 2 ** 53, 1_000_000, 1_000_001, Infinity, NaN,
  "", " ", "\u00a0", "\u2028", "\ufeff", "\u180e", "\t\n", "x", "cited", "unavailable", "CITED",
  "\ud800", "a\udc00b", "😀", "l".repeat(200), "l".repeat(201), "h".repeat(1_000), "h".repeat(1_001),
  "p".repeat(maxQuoteContext + 1), digest, digest.toUpperCase(), digest.slice(1), `${digest}0`, `${digest.slice(1)}g`,
  `${digest}\n`, [], ["x"], [""], ["x", 1], Array.from({ length: 7 }, () => "h"), {}, { facts: [] }
]

/** Every path to a value inside `value` (objects and arrays), the root's own keys included. */
const paths = (value: unknown, at: Array<string | number> = []): Array<Array<string | number>> => {
  if (typeof value !== "object" || value === null) return []
  const out: Array<Array<string | number>> = []
  for (const [k, v] of Object.entries(value)) {
    const p = [...at, Array.isArray(value) ? Number(k) : k]
    out.push(p, ...paths(v, p))
  }
  return out
}
const containers = (value: unknown, at: Array<string | number> = []): Array<Array<string | number>> =>
  typeof value !== "object" || value === null
    ? []
    : [at, ...Object.entries(value).flatMap(([k, v]) => containers(v, [...at, Array.isArray(value) ? Number(k) : k]))]

const edited = (value: unknown, path: ReadonlyArray<string | number>, edit: (target: Record<string | number, unknown>, key: string | number) => void) => {
  const copy = structuredClone(value) as Record<string | number, unknown>
  let target = copy
  for (const k of path.slice(0, -1)) target = target[k] as Record<string | number, unknown>
  edit(target, path[path.length - 1]!)
  return copy
}
const replaced = (value: unknown, path: ReadonlyArray<string | number>, by: unknown): unknown =>
  edited(value, path, (target, last) => {
    if (by !== REMOVE) target[last] = by
    else if (Array.isArray(target)) target.splice(Number(last), 1)
    else delete target[last]
  })
const withKey = (value: unknown, path: ReadonlyArray<string | number>, key: string): unknown => {
  if (path.length === 0) return { ...(value as object), [key]: 1 }
  return edited(value, path, (target, last) => {
    const container = target[last]
    if (Array.isArray(container)) container.push(1)
    else (container as Record<string, unknown>)[key] = 1
  })
}

/** Seeded (LCG) so that a failure is reproducible. */
const random = (seed: number) => () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32

const cases = (): Array<[string, unknown]> => {
  const out: Array<[string, unknown]> = validReports.map((r, i) => [`valid ${i}`, r])
  const bases = [{ facts: [full, unavailable] }, { facts: [cited(0)] }]
  bases.forEach((base, b) => {
    for (const path of paths(base)) {
      replacements.forEach((by, r) => out.push([`base ${b} ${path.join(".")} := ${r}`, replaced(base, path, by)]))
    }
    for (const path of containers(base)) {
      for (const key of ["extra", "value", "facts", "reason", "source", "page", "version", "format", "__proto__", "constructor", "toString"]) {
        out.push([`base ${b} ${path.join(".")} + ${key}`, withKey(base, path, key)])
      }
    }
  })
  // Seeded combinations of two to four changes.
  const next = random(20261202)
  const base = { facts: [full, unavailable, cited(1), cited(2)] }
  const all = paths(base)
  for (let n = 0; n < 600; n++) {
    let value: unknown = base
    const changes = 2 + Math.floor(next() * 3)
    for (let c = 0; c < changes; c++) {
      const candidates = paths(value)
      const path = candidates[Math.floor(next() * candidates.length)] ?? all[0]!
      value = replaced(value, path, replacements[Math.floor(next() * replacements.length)])
    }
    out.push([`random ${n}`, value])
  }
  // Hostile values and shapes.
  const nullProto = (o: object) => Object.assign(Object.create(null) as object, o)
  const hostile: Array<[string, unknown]> = [
    ["null", null], ["undefined", undefined], ["string", "{}"], ["number", 1], ["array", []], ["array of report", [{ facts: [] }]],
    ["no facts", {}], ["facts null", { facts: null }], ["facts object", { facts: { 0: cited(0), length: 1 } }],
    ["facts string", { facts: "[]" }], ["fact null", { facts: [null] }], ["fact array", { facts: [[]] }],
    ["fact number", { facts: [1] }], ["fact without state", { facts: [{ label: "a", reason: "b" }] }],
    ["too many facts", { facts: Array.from({ length: defaultMaxFacts + 1 }, (_, i) => cited(i)) }],
    ["far too many facts", { facts: Array.from({ length: 10_000 }, () => ({})) }],
    ["null-prototype report", nullProto({ facts: [cited(0)] })],
    ["null-prototype fact", { facts: [nullProto(cited(0))] }],
    ["own __proto__ key", JSON.parse(`{"facts":[],"__proto__":{"facts":[]}}`)],
    ["own __proto__ key in a fact", { facts: [JSON.parse(`{"__proto__":{"state":"cited"},"state":"unavailable","label":"a","reason":"b"}`)] }],
    ["class instance fact", { facts: [Object.assign(new (class Fact {})(), cited(0))] }],
    ["array subclass", { facts: Object.assign(new (class Facts extends Array {})(), { 0: cited(0) }) }],
    ["sparse facts", { facts: [cited(0), , cited(1)] }], // eslint-disable-line no-sparse-arrays
    ["facts with an extra property", { facts: Object.assign([cited(0)], { extra: 1 }) }],
    ["heading with an extra property", { facts: [{ ...full, heading: Object.assign(["x"], { extra: 1 }) }] }],
    ["getter label", { facts: [Object.defineProperty({ ...unavailable }, "label", { get: () => "a", enumerable: true })] }],
    ["non-enumerable key", { facts: [Object.defineProperty({ ...unavailable }, "extra", { value: 1, enumerable: false })] }],
    ["symbol key", { facts: [{ ...unavailable, [Symbol("s")]: 1 }] }],
    ["deep", JSON.parse(`{"facts":[${"[".repeat(70)}${"]".repeat(70)}]}`)],
    ["number object page", { facts: [{ ...full, page: new Number(2) }] }],
    ["string object label", { facts: [{ ...unavailable, label: new String("a") }] }],
    ["bigint page", { facts: [{ ...full, page: 2n }] }],
    ["function reason", { facts: [{ ...unavailable, reason: () => "x" }] }],
    ["every field wrong", { facts: [{ state: "cited", label: "", source: " ", captureSha256: "x", snippet: "\ud800", page: 0, heading: [], prefix: "", suffix: "" }] }],
    ["mixed fact", { facts: [{ ...full, reason: "both" }] }],
    ["unavailable with citation fields", { facts: [{ ...unavailable, source: "s", snippet: "x", captureSha256: digest }] }]
  ]
  return [...out, ...hostile]
}

const schema = makeReport(defaultMaxFacts)
const limits = factLimits(defaultMaxFacts)
const fast = fastReport(defaultMaxFacts)
// From text: facts already in the Schema's key order are kept as parsed (`parsedHere`).
const fastParsed = fastReport(defaultMaxFacts, { parsedHere: true })
const general = { value: decodeUnknown(schema, limits), json: decodeJson(schema, limits) }
const withFast = { value: decodeUnknown(schema, limits, fast), json: decodeJson(schema, limits, fastParsed) }

/** Every object and array of a decoded value, to check that none of a caller's is handed back. */
const objectsOf = (value: unknown, into: Set<unknown> = new Set()): Set<unknown> => {
  if (typeof value === "object" && value !== null && !into.has(value)) {
    into.add(value)
    for (const child of Object.values(value)) objectsOf(child, into)
  }
  return into
}

/** An Either's JSON (key order included), and the value itself for a deep comparison. */
const same = (actual: unknown, expected: unknown, name: string) => {
  assert.deepStrictEqual(actual, expected, name)
  assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected), name)
}

/** A case as JSON text (whatever JSON.stringify makes of it), when it has one. */
const textOf = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined // a bigint
  }
}

describe("report decode: the hand check returns what the Schema returns", () => {
  it("valid reports, one-change variations, seeded combinations and hostile values", () => {
    const all = cases()
    assert.isAbove(all.length, 1_500)
    let fastAccepted = 0
    let schemaAccepted = 0
    let texts = 0
    for (const [name, input] of all) {
      const expected = general.value(input)
      same(withFast.value(input), expected, name)
      // The hand check alone, on what it is given (plain JSON data; the rest is refused before it
      // runs): only ever a value the Schema accepts, and that very value.
      const accepted = plainDataIssue(input, limits) === undefined ? fast(input) : undefined
      if (accepted !== undefined) {
        fastAccepted++
        assert.strictEqual(expected._tag, "Right", `the hand check accepted what the Schema refuses: ${name}`)
        if (expected._tag === "Right") same(accepted, expected.right, name)
        // A caller's value: no object or array of it comes back (the Schema's decode makes new ones).
        const theirs = objectsOf(input)
        for (const mine of objectsOf(accepted)) assert.isFalse(theirs.has(mine), `the hand check handed back a caller's object: ${name}`)
      }
      if (expected._tag === "Right") schemaAccepted++
      const text = textOf(input)
      if (text !== undefined) {
        texts++
        same(withFast.json(text), general.json(text), `${name} (JSON text)`)
      }
    }
    // Both outcomes occur, and the hand check takes every valid report but the odd shapes it leaves to the Schema.
    assert.isAbove(schemaAccepted, 100)
    assert.isAbove(all.length - schemaAccepted, 1_000)
    assert.isAbove(texts, 1_000)
    assert.isAbove(fastAccepted, schemaAccepted * 0.9)
  })

  it("from text, a fact in the Schema's key order is kept as parsed, any other is copied in that order", () => {
    const text = JSON.stringify({ facts: [full, Object.fromEntries(Object.entries(full).reverse()), cited(1), unavailable] })
    const parsed = JSON.parse(text) as { facts: ReadonlyArray<unknown> }
    const decoded = fastParsed(parsed) as unknown as { facts: ReadonlyArray<unknown> }
    assert.strictEqual(decoded.facts[0], parsed.facts[0])
    assert.notStrictEqual(decoded.facts[1], parsed.facts[1])
    assert.deepStrictEqual(Object.keys(decoded.facts[1] as object), Object.keys(full))
    assert.strictEqual(decoded.facts[2], parsed.facts[2])
    same(decoded, fast(JSON.parse(text)), "kept or copied, the same value")
    same(decoded, (general.json(text) as { right: unknown }).right, "the Schema's value")
  })

  it("the valid reports themselves are decoded by the hand check", () => {
    for (const report of validReports) assert.notStrictEqual(fast(report), undefined, JSON.stringify(report).slice(0, 200))
  })

  it("a lower fact limit is the hand check's too", () => {
    const small = { schema: makeReport(2), limits: factLimits(2) }
    const three = { facts: [cited(0), cited(1), unavailable] }
    assert.strictEqual(fastReport(2)(three), undefined)
    same(decodeUnknown(small.schema, small.limits, fastReport(2))(three), decodeUnknown(small.schema, small.limits)(three), "3 > 2")
    same(decodeJson(small.schema, small.limits, fastReport(2))(JSON.stringify(three)), decodeJson(small.schema, small.limits)(JSON.stringify(three)), "3 > 2 (text)")
    assert.notStrictEqual(fastReport(3)(three), undefined)
  })
})
