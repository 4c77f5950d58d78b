/**
 * JSON parsing that refuses what `JSON.parse` silently accepts: a repeated key
 * (last wins) and the prototype-polluting keys `__proto__`, `constructor` and
 * `prototype`. What an operator approved must never hinge on key order.
 *
 * Syntax is checked by the native `JSON.parse`; a second, structural pass over
 * the already-valid text checks keys. The pass jumps over string contents with
 * `indexOf`, so a multi-megabyte capture text costs a handful of native scans.
 */

export interface JsonIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

export type StrictJsonResult =
  | { readonly _tag: "Right"; readonly value: unknown }
  | { readonly _tag: "Left"; readonly issue: JsonIssue }

const forbiddenKeys = new Set(["__proto__", "constructor", "prototype"])

interface ObjectFrame {
  readonly kind: "object"
  readonly path: ReadonlyArray<string | number>
  readonly keys: Set<string>
  expectKey: boolean
  currentKey: string
}

interface ArrayFrame {
  readonly kind: "array"
  readonly path: ReadonlyArray<string | number>
  index: number
}

type Frame = ObjectFrame | ArrayFrame

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Index of the closing quote of the string whose opening quote is at `open`. */
const closingQuote = (text: string, open: number): number => {
  let from = open + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote === -1) return -1
    let backslashes = 0
    for (let i = quote - 1; i > open && text.charCodeAt(i) === BACKSLASH; i--) backslashes++
    if (backslashes % 2 === 0) return quote
    from = quote + 1
  }
}

const childPath = (frame: Frame | undefined): ReadonlyArray<string | number> => {
  if (frame === undefined) return []
  return frame.kind === "object" ? [...frame.path, frame.currentKey] : [...frame.path, frame.index]
}

export const parse = (text: string): StrictJsonResult => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Left", issue: { path: [], message: `not valid JSON: ${(error as Error).message}` } }
  }
  const stack: Array<Frame> = []
  const length = text.length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    const top = stack[stack.length - 1]
    switch (code) {
      case 0x7b: // {
        stack.push({ kind: "object", path: childPath(top), keys: new Set(), expectKey: true, currentKey: "" })
        break
      case 0x5b: // [
        stack.push({ kind: "array", path: childPath(top), index: 0 })
        break
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop()
        break
      case 0x2c: // ,
        if (top?.kind === "object") top.expectKey = true
        else if (top?.kind === "array") top.index++
        break
      case QUOTE: {
        const close = closingQuote(text, i)
        if (close === -1) return { _tag: "Left", issue: { path: [], message: "unterminated string" } }
        if (top?.kind === "object" && top.expectKey) {
          const raw = text.slice(i + 1, close)
          const key = raw.includes("\\") ? (JSON.parse(text.slice(i, close + 1)) as string) : raw
          if (forbiddenKeys.has(key)) {
            return { _tag: "Left", issue: { path: top.path, message: `forbidden key ${JSON.stringify(key)}` } }
          }
          if (top.keys.has(key)) {
            return { _tag: "Left", issue: { path: top.path, message: `repeated key ${JSON.stringify(key)}` } }
          }
          top.keys.add(key)
          top.currentKey = key
          top.expectKey = false
        }
        i = close
        break
      }
      default:
        break
    }
  }
  return { _tag: "Right", value }
}
