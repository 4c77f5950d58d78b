/**
 * What the configuration's sections share: strict structs, unique lists, integer ranges and the
 * list limits checked before parsing. Internal to `src/config/`; `Config.ts` re-exports only
 * `configListLimits`.
 */
import * as Schema from "effect/Schema"

export const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const unique = <A>(what: string) => (items: ReadonlyArray<A>) => {
  const seen = new Set<A>()
  for (const item of items) {
    if (seen.has(item)) return `${what} must be unique: ${JSON.stringify(item)} appears more than once`
    seen.add(item)
  }
  return true
}

export const intBetween = (min: number, max: number) =>
  Schema.Int.pipe(Schema.between(min, max, { message: () => `must be an integer from ${min} to ${max}` }))

/** Longest `sources` and `labels` lists (and so any array in a configuration), checked before parsing. */
export const configListLimits = { sources: 1_000, labels: 10_000 } as const

export const listOf = <A, I>(item: Schema.Schema<A, I, never>, what: keyof typeof configListLimits) =>
  Schema.NonEmptyArray(item).pipe(
    Schema.filter((items) =>
      items.length <= configListLimits[what] || `must hold at most ${configListLimits[what]} ${what}, got ${items.length}`
    ),
    Schema.filter(unique(what))
  )
