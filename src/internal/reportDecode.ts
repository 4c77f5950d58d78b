/**
 * A hand check of a drafted report that can only accept: for a value the Report Schema
 * (`Domain.makeReport`) accepts, it builds the same decoded value (fresh objects and arrays, keys in
 * the Schema's order); for anything else, or anything it is unsure of, it returns `undefined` and
 * the Schema decode runs, which alone words issues. Decoding a report with the Schema cost more than
 * the rest of parsing it (docs/performance.md); test/reportDecode.equivalence.test.ts compares the
 * two on fixtures, seeded one-change variations and hostile values.
 */
import type { Report } from "../Domain.js"
import { maxQuoteContext } from "../Domain.js"
import { isSha256Hex } from "./recordDecode.js"

/** Longest label (`Domain.Label`). */
const maxLabel = 200
/** Longest heading entry, and most entries (`CitedFact.heading`). */
const maxHeadingEntry = 1_000
const maxHeadings = 6

/** A plain object (a `JSON.parse` object, or one `plainDataIssue` let through): no inherited key stands in. */
const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

const isPlainArray = (value: unknown): value is ReadonlyArray<unknown> =>
  Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype

// Module constants: a regular expression literal makes a new object each time it is evaluated (a
// few per fact), and `test` of an expression without the g or y flag neither reads nor sets `lastIndex`.
const nonBlank = /\S/u

/** `NonBlankString`: a non-whitespace character (the same regular expression), and well-formed. */
const isNonBlank = (value: unknown): value is string =>
  typeof value === "string" && nonBlank.test(value) && value.isWellFormed()

/** `Sha256Hex`: 64 lowercase hex characters. */
const isSha256 = (value: unknown): value is string => typeof value === "string" && isSha256Hex(value)

/** `QuoteContext`: non-empty, at most `maxQuoteContext` code units, well-formed. */
const isQuoteContext = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= maxQuoteContext && value.isWellFormed()

/** `CitedFact.page`: an integer from 1 to 1,000,000 (`Schema.Int` is a safe integer). */
const isPage = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 1 && value <= 1_000_000

/** `CitedFact.heading`, copied (the Schema's decode makes a new array): 1 to 6 non-blank entries of at most 1,000. */
const headingOf = (value: unknown): Array<string> | undefined => {
  if (!isPlainArray(value) || value.length === 0 || value.length > maxHeadings) return undefined
  const out: Array<string> = []
  for (let i = 0; i < value.length; i++) {
    const entry = value[i]
    if (!isNonBlank(entry) || entry.length > maxHeadingEntry) return undefined
    out.push(entry)
  }
  return out
}

// The decoded facts are built field by field in the Schema's order (its Struct decode writes the
// output in declaration order, whatever the input's), so even the key order is the Schema's.

/**
 * A cited fact's decoded value, or `undefined`. With `parsedHere` (a value `JSON.parse` made for this
 * decode, which no one else holds) a fact whose keys are already in the Schema's order is returned
 * as it is, heading array included: it holds what the copy would, in the same order.
 */
const citedFact = (fact: Readonly<Record<string, unknown>>, parsedHere: boolean): Record<string, unknown> | undefined => {
  let present = 0
  let page: unknown
  let heading: unknown
  let prefix: unknown
  let suffix: unknown
  // The Schema's position of each key seen; the keys are in its order while the positions rise.
  let last = -1
  let ordered = true
  // `for…in` makes no array of keys; it also yields an inherited enumerable key, which is refused as
  // unknown (the prototype is Object.prototype, checked by the caller), so it can only refuse more.
  for (const key in fact) {
    let position: number
    switch (key) {
      case "state":
        position = 0
        present++
        break
      case "label":
        position = 1
        present++
        break
      case "source":
        position = 2
        present++
        break
      case "captureSha256":
        position = 3
        present++
        break
      case "snippet":
        position = 4
        present++
        break
      case "page":
        position = 5
        page = fact[key]
        if (!isPage(page)) return undefined
        break
      case "heading":
        position = 6
        heading = headingOf(fact[key])
        if (heading === undefined) return undefined
        break
      case "prefix":
        position = 7
        prefix = fact[key]
        if (!isQuoteContext(prefix)) return undefined
        break
      case "suffix":
        position = 8
        suffix = fact[key]
        if (!isQuoteContext(suffix)) return undefined
        break
      default:
        return undefined // an unknown key: the Schema reports it
    }
    if (position < last) ordered = false
    last = position
  }
  const { captureSha256, label, snippet, source } = fact
  if (present !== 5 || !isNonBlank(label) || label.length > maxLabel || !isNonBlank(source)) return undefined
  if (!isSha256(captureSha256) || !isNonBlank(snippet)) return undefined
  if (parsedHere && ordered) return fact as Record<string, unknown>
  const out: Record<string, unknown> = { state: "cited", label, source, captureSha256, snippet }
  if (page !== undefined) out["page"] = page
  if (heading !== undefined) out["heading"] = heading
  if (prefix !== undefined) out["prefix"] = prefix
  if (suffix !== undefined) out["suffix"] = suffix
  return out
}

const unavailableFact = (fact: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined => {
  const keys = Object.keys(fact)
  if (keys.length !== 3) return undefined
  for (const key of keys) if (key !== "state" && key !== "label" && key !== "reason") return undefined
  const { label, reason } = fact
  if (!isNonBlank(label) || label.length > maxLabel || !isNonBlank(reason)) return undefined
  return { state: "unavailable", label, reason }
}

/**
 * The Report Schema's decode of `input` (for the fact limit `maxFacts`) when it is a valid report of
 * the common shape, else `undefined`: then the Schema decides, and words every issue. With
 * `parsedHere` (for `decodeJson`, whose input `JSON.parse` has just made and no one else holds), the
 * facts already in the Schema's key order are kept as parsed instead of copied; otherwise (a
 * caller's value) every object and array is new.
 */
export const fastReport = (maxFacts: number, options?: { readonly parsedHere?: boolean }) => (input: unknown): Report | undefined => {
  const parsedHere = options?.parsedHere === true
  if (!isPlainObject(input)) return undefined
  const keys = Object.keys(input)
  if (keys.length !== 1 || keys[0] !== "facts") return undefined
  const facts = input["facts"]
  if (!isPlainArray(facts) || facts.length > maxFacts) return undefined
  const out: Array<Record<string, unknown>> = []
  for (let i = 0; i < facts.length; i++) {
    const fact = facts[i]
    if (!isPlainObject(fact)) return undefined
    const state = fact["state"]
    const decoded = state === "cited" ? citedFact(fact, parsedHere) : state === "unavailable" ? unavailableFact(fact) : undefined
    if (decoded === undefined) return undefined
    out.push(decoded)
  }
  // The same values the Schema returns; its brands are types only.
  return { facts: out } as unknown as Report
}
