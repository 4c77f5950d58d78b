/** Helpers for the mutation-killing tests. */
import { Effect, Either, Tracer } from "effect"
import { createHash } from "node:crypto"

/**
 * The typed failure of an effect that must fail. An unexpected success fails
 * the test with a short message (a flipped success would make the test runner
 * print the whole success value, captures and all).
 */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isLeft(result)
      ? Effect.succeed(result.left)
      : Effect.die(new Error("expected the effect to fail, but it succeeded")))

/**
 * The record file name of a source, computed here independently of the code
 * under test: SHA-256 of the exact URL string's UTF-8 bytes, lowercase hex, `.json`.
 */
export const expectedRecordName = (source: string): string =>
  `${createHash("sha256").update(Buffer.from(source, "utf8")).digest("hex")}.json`

/**
 * The names of the spans an effect opens, in order, recorded by a tracer that
 * hands every span on to the current one (so nothing else about the run changes).
 */
export const spanNames = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<ReadonlyArray<string>, E, R> =>
  Effect.gen(function*() {
    const names: Array<string> = []
    const base = yield* Effect.tracer
    const recording = Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return base.span(name, ...rest)
      },
      context: base.context
    })
    yield* Effect.withTracer(effect, recording)
    return names
  })

/** A seeded generator of numbers in [0, 1) (mulberry32): the same cases on every run, so a failure reproduces. */
export const seededRandom = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
