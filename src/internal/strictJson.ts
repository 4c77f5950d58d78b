/**
 * JSON parsing that refuses what `JSON.parse` silently accepts: a repeated key
 * (last wins) and the prototype-polluting keys `__proto__`, `constructor` and
 * `prototype`; and refuses nesting deeper than `maxDepth`, before anything
 * else, so no later step (parse, decode, error formatting) meets a deep value.
 *
 * One structural pass runs FIRST, over the raw text: it tracks nesting and keys
 * (and, if asked, array lengths) and jumps over string contents with `indexOf`, so a multi-megabyte capture
 * text costs a handful of native scans. Each open container costs one frame on
 * an explicit stack (no recursion); a path is built from the stack only when an
 * issue is reported. Then the native `JSON.parse` checks syntax: a syntax error
 * is reported in preference to a key issue, which the scan may have seen in
 * text that is not JSON at all.
 *
 * A text is first offered to a fast path that can only accept: it proves the full parser would accept the text, with the same
 * value, or hands the text to the full parser (test/strictJson.fastPath.test.ts
 * compares the two on random and hostile texts).
 */
import { boundMessage, boundSegment, closingQuote, quote } from "./bounded.js"

/**
 * Deepest nesting of arrays and objects accepted in any JSON document or value
 * citegate decodes (a report needs 3: report, facts, fact).
 */
export const maxDepth = 64

/**
 * Most keys one object may hold. No record citegate reads has more than a
 * dozen; without a bound a report of millions of unknown keys would be parsed
 * and then collect one issue per key (minutes and gigabytes).
 */
export const maxObjectKeys = 64

export const tooManyKeysMessage = (count: number) => `must hold at most ${maxObjectKeys} keys, got ${count} or more`

export interface JsonIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/** Limits a caller adds for one kind of document. */
export interface Options {
  /**
   * Longest array: checked by the structural pass, so a report of a million
   * facts is refused before `JSON.parse` allocates a million objects.
   */
  readonly maxArrayLength?: number
  /** The message for an array over `maxArrayLength`, given its path and length. */
  readonly arrayTooLong?: (path: ReadonlyArray<string | number>, length: number) => string
}

export type StrictJsonResult =
  | { readonly _tag: "Right"; readonly value: unknown }
  | { readonly _tag: "Left"; readonly issue: JsonIssue }

const forbiddenKeys = new Set(["__proto__", "constructor", "prototype"])

interface Frame {
  readonly isObject: boolean
  keys: Set<string> | undefined // made at the first key: a million `{}` cost no Set
  expectKey: boolean
  currentKey: string
  index: number
}

const QUOTE = 0x22

/** The path to the container held by `stack[depth]` (the root container at depth 0). */
const pathTo = (stack: ReadonlyArray<Frame>, depth: number): Array<string | number> => {
  const path: Array<string | number> = []
  for (let k = 0; k < depth; k++) {
    const frame = stack[k]!
    path.push(frame.isObject ? boundSegment(frame.currentKey) : frame.index)
  }
  return path
}

export const depthMessage = `nesting deeper than ${maxDepth} levels of arrays and objects`

interface Scan {
  /** Nesting beyond `maxDepth`, an object over `maxObjectKeys` or an array over `maxArrayLength`: reported before the text is parsed. */
  readonly limit?: JsonIssue | undefined
  /** The first repeated or forbidden key, reported only if the text is valid JSON. */
  readonly key?: JsonIssue | undefined
}

const scan = (text: string, options: Options | undefined): Scan => {
  const stack: Array<Frame> = []
  let key: JsonIssue | undefined
  let tooLong: JsonIssue | undefined
  const maxArrayLength = options?.maxArrayLength ?? Infinity
  const length = text.length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    switch (code) {
      case 0x7b: // {
      case 0x5b: // [
        if (stack.length === maxDepth) {
          return { limit: tooLong ?? { path: pathTo(stack, stack.length), message: depthMessage }, key }
        }
        stack.push({ isObject: code === 0x7b, keys: undefined, expectKey: true, currentKey: "", index: 0 })
        break
      case 0x7d: // }
      case 0x5d: { // ]
        const top = stack[stack.length - 1]
        // A non-empty array holds one element more than its commas (in valid JSON). The pass goes on to
        // the array's end so that the message can give its length; it keeps nothing per element.
        if (tooLong === undefined && top !== undefined && !top.isObject && top.index > 0 && top.index + 1 > maxArrayLength) {
          const path = pathTo(stack, stack.length - 1)
          const message = options?.arrayTooLong?.(path, top.index + 1) ??
            `must hold at most ${maxArrayLength} elements, got ${top.index + 1}`
          tooLong = { path, message }
        }
        stack.pop()
        break
      }
      case 0x2c: { // ,
        const top = stack[stack.length - 1]
        if (top !== undefined) {
          top.expectKey = true
          top.index++
        }
        break
      }
      case QUOTE: {
        const close = closingQuote(text, i)
        if (close === -1) return { limit: tooLong, key } // not JSON: JSON.parse says why
        const top = stack[stack.length - 1]
        if (top?.isObject === true && top.expectKey) {
          const raw = text.slice(i + 1, close)
          let name: string | undefined = raw
          if (raw.includes("\\")) {
            try {
              name = JSON.parse(text.slice(i, close + 1)) as string
            } catch {
              name = undefined // not JSON: JSON.parse says why
            }
          }
          if (name !== undefined) {
            // Keys are still tracked after the first issue: a later depth issue needs the right path.
            const keys = top.keys ?? (top.keys = new Set())
            if (keys.size === maxObjectKeys && !keys.has(name)) {
              return {
                limit: tooLong ?? { path: pathTo(stack, stack.length - 1), message: tooManyKeysMessage(keys.size + 1) },
                key
              }
            }
            if (key === undefined && (forbiddenKeys.has(name) || keys.has(name))) {
              const what = forbiddenKeys.has(name) ? "forbidden" : "repeated"
              key = { path: pathTo(stack, stack.length - 1), message: `${what} key ${quote(name)}` }
            }
            keys.add(name)
            top.currentKey = name
          }
          top.expectKey = false
        }
        i = close
        break
      }
      default:
        break
    }
  }
  return { limit: tooLong, key }
}

// ---------------------------------------------------------------------------
// The fast path (stream events: thousands of ~200-byte payloads per answer; reports of a few KiB per request)
// ---------------------------------------------------------------------------

/**
 * Longest text (UTF-16 code units) the fast path takes without first bounding its arrays and
 * objects: `JSON.parse` of a text this short is cheap whatever it holds (a few thousand values).
 */
export const fastPathMaxLength = 4096

/** Per open container (index = depth): 1 for an object, 0 for an array; and its members or commas so far. */
const frameIsObject = new Uint8Array(maxDepth + 1)
const frameCount = new Int32Array(maxDepth + 1)

/**
 * Member separators (`:` outside string literals) of `text` when its nesting stays within
 * `maxDepth`, else -1. In valid JSON a `:` outside a string follows a key and nothing else, so this
 * is the number of members of all its objects, repeated keys included. A text longer than
 * `fastPathMaxLength` must also keep every object within `maxObjectKeys` members and every array
 * within `maxArrayLength` elements (-1 otherwise), so that `JSON.parse` only ever builds what the
 * full parser's scan would have let it build. No allocation: strings are jumped over as the full
 * scan jumps them, and the per-depth counts live in two fixed arrays (the pass runs to completion).
 */
const countMembers = (text: string, maxArrayLength: number): number => {
  const bounded = text.length > fastPathMaxLength
  let depth = 0
  let members = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    switch (text.charCodeAt(i)) {
      case 0x7b: // {
      case 0x5b: // [
        if (++depth > maxDepth) return -1
        frameIsObject[depth] = text.charCodeAt(i) === 0x7b ? 1 : 0
        frameCount[depth] = 0
        break
      case 0x7d: // }
      case 0x5d: // ]
        if (--depth < 0) return -1 // not JSON: the full parser says why
        break
      case 0x3a: // :
        members++
        if (bounded && depth > 0 && frameIsObject[depth] === 1 && ++frameCount[depth]! > maxObjectKeys) return -1
        break
      case 0x2c: // ,
        // A non-empty array holds one element more than its commas (the full scan's count too).
        if (bounded && depth > 0 && frameIsObject[depth] === 0 && ++frameCount[depth]! + 1 > maxArrayLength) return -1
        break
      case QUOTE: {
        const close = closingQuote(text, i)
        if (close === -1) return -1
        i = close
        break
      }
      default:
        break
    }
  }
  return members
}

/**
 * Own keys of every object in `value` (a `JSON.parse` result nested at most `maxDepth` deep, so the
 * recursion is bounded), or -1 when an object is over `maxObjectKeys` or holds a forbidden key, or an
 * array is over `maxArrayLength`: those the full parser reports.
 */
const countKeys = (value: unknown, maxArrayLength: number): number => {
  if (typeof value !== "object" || value === null) return 0
  let total = 0
  if (Array.isArray(value)) {
    if (value.length > maxArrayLength) return -1
    for (let i = 0; i < value.length; i++) {
      const n = countKeys(value[i], maxArrayLength)
      if (n < 0) return -1
      total += n
    }
    return total
  }
  // `for…in` makes no array of keys. On a `JSON.parse` object it yields the own keys, and an
  // inherited enumerable key only if someone made one: that count is then too high, and the full
  // parser decides, as for a repeated key.
  let keys = 0
  for (const key in value) {
    if (++keys > maxObjectKeys) return -1
    if (key === "__proto__" || key === "constructor" || key === "prototype") return -1
    const n = countKeys((value as Record<string, unknown>)[key], maxArrayLength)
    if (n < 0) return -1
    total += n
  }
  return total + keys
}

/**
 * The full parser's result for a text it would accept, or `undefined` (unproven). `JSON.parse` keeps one own
 * key per distinct name of each object (a repeated name overwrites; `__proto__` too is an own key),
 * so the parsed objects' keys add up to the text's member count exactly when no object repeats a
 * name. Depth is checked on the text first (and, for a text over `fastPathMaxLength`, the sizes of
 * its objects and arrays, before `JSON.parse` builds them); key counts, forbidden keys and array
 * lengths on the parsed value. Anything else, and any doubt, goes to the full parser, which alone words issues.
 */
export const parseFast = (text: string, options?: Options): StrictJsonResult | undefined => {
  const counted = countAndParse(text, options)
  return counted === undefined ? undefined : provenByCount(counted, options)
}

/** A text's member count (`parseFast`'s first pass) and its `JSON.parse` value, not yet proven strict. */
export interface Counted {
  readonly members: number
  readonly value: unknown
}

/**
 * `parseFast`'s first two steps: the member count (depth and, for a long text, sizes checked) and
 * `JSON.parse`; `undefined` when either refuses (the full parser then words why). For a caller with
 * a hand check of its own that vouches for the value's keys (internal/recordDecode.ts), so that the
 * walk of the value (`provenByCount`) runs only when that check does not accept.
 */
export const countAndParse = (text: string, options?: Options): Counted | undefined => {
  const members = countMembers(text, options?.maxArrayLength ?? Infinity)
  if (members < 0) return undefined
  try {
    return { members, value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** `parseFast`'s last step: the value, when its keys add up to the text's member count (no key repeated, none forbidden). */
export const provenByCount = (counted: Counted, options?: Options): StrictJsonResult | undefined =>
  countKeys(counted.value, options?.maxArrayLength ?? Infinity) === counted.members ? { _tag: "Right", value: counted.value } : undefined

/** The full parser: the structural scan, then `JSON.parse`; every issue worded. */
export const parseFull = (text: string, options?: Options): StrictJsonResult => {
  const found = scan(text, options)
  if (found.limit !== undefined) return { _tag: "Left", issue: found.limit }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Left", issue: { path: [], message: boundMessage(`not valid JSON: ${(error as Error).message}`) } }
  }
  if (found.key !== undefined) return { _tag: "Left", issue: found.key }
  return { _tag: "Right", value }
}

/**
 * Strict JSON: what the full parser (`parseFull`) returns, for every text. A text it would
 * accept is proven so by the fast path (one allocation-free pass, `JSON.parse`, a walk of the value)
 * without the scan's per-container frames and key sets; any other text is parsed by the full parser.
 */
export const parse = (text: string, options?: Options): StrictJsonResult => {
  return parseFast(text, options) ?? parseFull(text, options)
}
