/**
 * Equivalence tests against a golden file: one-change variations of a valid input, each outcome
 * compared exactly with the outcome the code they pin wrote.
 */
import { assert } from "@effect/vitest"
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"

/** A value's JSON by its SHA-256 (keeps a golden file small; any difference in the value changes it). */
export const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 32)

/** Every path to a value inside `value` (objects and arrays), each before the paths below it. */
export const paths = (value: unknown, at: Array<string | number> = []): Array<Array<string | number>> => {
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value).flatMap(([k, v]) => {
    const p = [...at, Array.isArray(value) ? Number(k) : k]
    return [p, ...paths(v, p)]
  })
}

/** As a replacement for `replaced`: the value at the path taken out (a key deleted, an element spliced out). */
export const REMOVE = Symbol("remove")

/** A copy of `value` with the value at `path` replaced by `by` (or removed, for REMOVE). */
export const replaced = (value: unknown, path: ReadonlyArray<string | number>, by: unknown): unknown => {
  const copy = structuredClone(value) as Record<string | number, unknown>
  let target = copy
  for (const k of path.slice(0, -1)) target = target[k] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (by === REMOVE) {
    if (Array.isArray(target)) target.splice(Number(last), 1)
    else delete target[last]
  } else target[last] = by
  return copy
}

/**
 * Asserts that `results` are the golden file's, the same names in the same order and each outcome
 * deep-equal (named in the failure). `UPDATE_GOLDEN=1` rewrites the file first, one entry a line
 * (only on purpose, with the code it should pin).
 */
export const assertGolden = (url: URL, results: Record<string, unknown>): void => {
  if (process.env["UPDATE_GOLDEN"] === "1") {
    writeFileSync(url, `{\n${Object.entries(results).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(",\n")}\n}\n`)
  }
  const golden = JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>
  assert.deepStrictEqual(Object.keys(results), Object.keys(golden))
  for (const [name, result] of Object.entries(results)) assert.deepStrictEqual(result, golden[name], name)
}
