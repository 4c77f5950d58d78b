/** Helpers for the mutation-killing tests. */
import { assert } from "@effect/vitest"
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

/** The value of a Right; a Left fails the test with (the start of) what it holds. */
export const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected Right, got ${JSON.stringify(either.left).slice(0, 600)}`)
  return (either as Either.Right<E, A>).right
}

/** The error of a Left; a Right fails the test with (the start of) what it holds. */
export const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) assert.fail(`expected Left, got ${JSON.stringify(either.right).slice(0, 400)}`)
  return (either as Either.Left<E, A>).left
}

/** Filler words over letters no snippet of the anchoring tests uses (q, x, z, v, k, j), each followed by a space. */
export const filler = (length: number, seed: number): string => {
  const next = seededRandom(seed)
  const letters = "qxzvkj"
  let out = ""
  while (out.length < length) {
    const size = 2 + Math.floor(next() * 6)
    for (let i = 0; i < size; i++) out += letters[Math.floor(next() * letters.length)]
    out += " "
  }
  return out
}
