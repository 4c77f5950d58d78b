import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Arr from "effect/Array"
import { types } from "node:util"
import { decodeOptions } from "../Domain.js"
import type { Issue } from "../Errors.js"
import { boundMessage, boundSegment } from "./bounded.js"
import * as StrictJson from "./strictJson.js"

/** Most issues an `InvalidReport` or `InvalidConfig` lists; the rest are only counted (`omitted`). */
export const maxIssues = 20

/** Why a document did not decode: the first `maxIssues` issues, and how many more there were. */
export interface Invalid {
  readonly issues: Arr.NonEmptyReadonlyArray<Issue>
  /** Issues found but not listed; absent when every issue is listed. */
  readonly omitted?: number
}

const invalid = (issues: Arr.NonEmptyReadonlyArray<Issue>, total: number = issues.length): Invalid =>
  total > issues.length ? { issues, omitted: total - issues.length } : { issues }

/** A check run before the Schema, on a value not yet known to be plain data: it must not assume anything. */
export type Precheck = (input: unknown) => Issue | undefined

/** Size limits of one kind of document, checked before the expensive work. */
export interface Limits extends StrictJson.Options {
  readonly precheck?: Precheck
}

/**
 * A hand check that can only accept: the Schema's decoded value for an input the Schema accepts, or
 * `undefined` (the Schema then decides and words the issues). It sees only plain JSON data that
 * passed the limits and the precheck, and must return `undefined` whenever in doubt.
 */
export type FastPath<A> = (input: unknown) => A | undefined

const optionalAlternative = "Expected undefined, actual "

/**
 * An optional field's schema is a union with `undefined`, so a bad value is reported twice: what is
 * wrong with it, and "Expected undefined" (from the field and from every optional object around it).
 * The second kind says nothing to the author; it is dropped when a real issue lies at or under it.
 * Linear in the issues times the (bounded) depth: every path prefix of a real issue goes in a set.
 */
const withoutOptionalNoise = (
  all: ReadonlyArray<ParseResult.ArrayFormatterIssue>
): ReadonlyArray<ParseResult.ArrayFormatterIssue> => {
  const isNoise = (issue: ParseResult.ArrayFormatterIssue) => issue.message.startsWith(optionalAlternative)
  if (!all.some(isNoise)) return all
  const covered = new Set<string>()
  for (const issue of all) {
    if (isNoise(issue)) continue
    let key = ""
    covered.add(key)
    for (const segment of issue.path) {
      key += `\u0000${typeof segment === "number" ? "#" : "$"}${String(segment)}`
      covered.add(key)
    }
  }
  const keyOf = (path: ReadonlyArray<PropertyKey>) =>
    path.map((segment) => `\u0000${typeof segment === "number" ? "#" : "$"}${String(segment)}`).join("")
  return all.filter((issue) => !isNoise(issue) || !covered.has(keyOf(issue.path)))
}

const toInvalid = (error: ParseResult.ParseError): Invalid => {
  // The value is plain data at most `maxDepth` deep (checked first), so formatting recurses a bounded
  // depth and runs no code of the caller's (Schema's formatter calls a custom `toString`).
  const all = withoutOptionalNoise(ParseResult.ArrayFormatter.formatErrorSync(error))
  const issues = all.slice(0, maxIssues).map((issue) => ({
    path: issue.path.map((p) => boundSegment(typeof p === "symbol" ? String(p) : p)),
    message: boundMessage(issue.message)
  }))
  return Arr.isNonEmptyReadonlyArray(issues) ? invalid(issues, all.length) : { issues: [{ path: [], message: "invalid" }] }
}

/** How a value is not plain JSON data, or `undefined` for a plain array or object. */
const containerProblem = (value: object): string | undefined => {
  if (types.isProxy(value)) return "must be plain JSON data, not a Proxy"
  const proto = Object.getPrototypeOf(value)
  if (Array.isArray(value)) return proto === Array.prototype ? undefined : "must be a plain array"
  if (proto !== Object.prototype && proto !== null) {
    return "must be a plain object (its prototype is not Object.prototype: inherited keys do not count)"
  }
  if (Object.getOwnPropertySymbols(value).length > 0) return "must be plain JSON data, not an object with symbol keys"
  return undefined
}

/**
 * The first way `input` is not plain JSON data at most `maxDepth` deep: a
 * non-plain prototype (so no inherited key can stand in for an own one), an
 * accessor property (no getter runs while decoding), a Proxy, a function, a
 * symbol or bigint. Iterative, with parent pointers for the path: a value
 * nested a million deep (or cyclic) costs `maxDepth` steps down one branch.
 */
export const plainDataIssue = (
  input: unknown,
  limits?: StrictJson.Options
): Issue | undefined => {
  const maxArrayLength = limits?.maxArrayLength ?? Infinity
  interface Node {
    readonly value: unknown
    readonly depth: number
    readonly parent: Node | undefined
    readonly segment: string | number
  }
  const pathOf = (node: Node): Array<string | number> => {
    const path: Array<string | number> = []
    for (let n: Node = node; n.parent !== undefined; n = n.parent) path.push(boundSegment(n.segment))
    return path.reverse()
  }
  const pending: Array<Node> = [{ value: input, depth: 0, parent: undefined, segment: "" }]
  let node: Node | undefined
  try {
    while ((node = pending.pop()) !== undefined) {
      const value = node.value
      if (value === null || value === undefined) continue
      const type = typeof value
      if (type === "string" || type === "number" || type === "boolean") continue
      if (type !== "object") return { path: pathOf(node), message: `must be plain JSON data, not a ${type}` }
      const container = value as object
      const current = node
      if (node.depth === StrictJson.maxDepth) return { path: pathOf(node), message: StrictJson.depthMessage }
      const problem = containerProblem(container)
      if (problem !== undefined) return { path: pathOf(node), message: problem }
      const visit = (key: string | number): Issue | undefined => {
        const descriptor = Object.getOwnPropertyDescriptor(container, key)
        const child: Node = { value: descriptor?.value, depth: current.depth + 1, parent: current, segment: key }
        if (descriptor === undefined) return { path: pathOf(child), message: "must be plain JSON data, not a hole" }
        if (!("value" in descriptor)) return { path: pathOf(child), message: "must be plain JSON data, not a getter" }
        if (!descriptor.enumerable) {
          return { path: pathOf(child), message: "must be plain JSON data, not a non-enumerable property" }
        }
        pending.push(child)
        return undefined
      }
      if (Array.isArray(container)) {
        // Sizes are checked before any element is looked at, as the text path does before parsing.
        if (container.length > maxArrayLength) {
          const path = pathOf(node)
          const message = limits?.arrayTooLong?.(path, container.length) ??
            `must hold at most ${maxArrayLength} elements, got ${container.length}`
          return { path, message }
        }
        if (Object.keys(container).length !== container.length) {
          return { path: pathOf(node), message: "must be a plain array (no holes, no extra properties)" }
        }
        for (let i = 0; i < container.length; i++) {
          const issue = visit(i)
          if (issue !== undefined) return issue
        }
      } else {
        const keys = Object.getOwnPropertyNames(container)
        if (keys.length > StrictJson.maxObjectKeys) {
          return { path: pathOf(node), message: StrictJson.tooManyKeysMessage(keys.length) }
        }
        for (const key of keys) {
          const issue = visit(key)
          if (issue !== undefined) return issue
        }
      }
    }
  } catch {
    // A revoked Proxy or the like: whatever it is, it is not plain data.
    return { path: node === undefined ? [] : pathOf(node), message: "must be plain JSON data" }
  }
  return undefined
}

const runPrecheck = (precheck: Precheck | undefined, input: unknown): Issue | undefined => {
  if (precheck === undefined) return undefined
  try {
    return precheck(input)
  } catch {
    return undefined // the value is not plain data: the full check that follows says so
  }
}

/**
 * Strict decode (unknown keys rejected, all issues collected, at most
 * `maxIssues` listed). The value must first be plain JSON data at most
 * `maxDepth` deep, with no object over `maxObjectKeys` and no array over
 * `limits.maxArrayLength` (sizes checked before elements are looked at, and no
 * trap or getter of the caller's runs); then `limits.precheck` (a size limit
 * that must hold before the expensive decode starts); only then does the
 * Schema see it.
 */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I, never>, limits?: Limits, fast?: FastPath<A>) => {
  const decode = decodeParsed(schema, undefined, fast)
  return (input: unknown): Either.Either<A, Invalid> => {
    const notPlain = plainDataIssue(input, limits)
    if (notPlain !== undefined) return Either.left(invalid([notPlain]))
    const early = runPrecheck(limits?.precheck, input)
    return early !== undefined ? Either.left(invalid([early])) : decode(input)
  }
}

/** Decode of a value `JSON.parse` made from depth-checked text: plain data by construction. */
const decodeParsed = <A, I>(schema: Schema.Schema<A, I, never>, precheck: Precheck | undefined, fast: FastPath<A> | undefined) => {
  const decode = Schema.decodeUnknownEither(schema, decodeOptions)
  return (input: unknown): Either.Either<A, Invalid> => {
    const early = runPrecheck(precheck, input)
    if (early !== undefined) return Either.left(invalid([early]))
    const accepted = fast?.(input)
    return accepted !== undefined ? Either.right(accepted) : Either.mapLeft(decode(input), toInvalid)
  }
}

/**
 * Strict JSON (depth and, if given, array length bounded before parsing; no
 * repeated or prototype keys) followed by a strict decode.
 */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I, never>, limits?: Limits, fast?: FastPath<A>) => {
  const decode = decodeParsed(schema, limits?.precheck, fast)
  return (text: string): Either.Either<A, Invalid> => {
    const parsed = StrictJson.parse(text, limits)
    return parsed._tag === "Left" ? Either.left(invalid([parsed.issue])) : decode(parsed.value)
  }
}
