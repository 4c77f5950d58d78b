/**
 * The review log in a run directory: one file per decision in `reviews/`, named by its place in the
 * log (`000001.json`, `000002.json`, …). A decision is written to a temporary file, fsynced, and hard
 * linked under the next free name: link(2) fails when the name exists, so two writers racing for one
 * place cannot both take it (the loser takes the next), and nothing is ever overwritten. Files are
 * read-only (0444); reads open no symlink and decode each file strictly.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { DecisionLogCorrupt, DecisionLogFull, DecisionWriteFailed } from "../Errors.js"
import { decodeJson } from "../internal/decode.js"
import { errorCode, errorText, readRegularFile } from "../internal/safeRead.js"
import { decisionLimits, ReviewDecision } from "../review/Records.js"
import { runDirectory } from "./Filesystem.js"
import { partialPrefix } from "./Format.js"
import { type LoggedDecision, ReviewLog, type ReviewLogShape } from "./ReviewLog.js"

export interface Options {
  /** The run directory (it must exist). */
  readonly directory: string
  /** Most decisions the log takes (default `decisionLimits.perRun`). */
  readonly maxDecisions?: number
}

/** The log's directory inside a run directory. */
export const reviewsDirectory = "reviews"

const namePattern = /^(\d{6})\.json$/
const fileName = (seq: number) => `${String(seq).padStart(6, "0")}.json`
const decode = decodeJson(ReviewDecision)

export const make = (options: Options) =>
  Effect.gen(function*() {
    const run = yield* runDirectory(options.directory)
    const directory = path.join(run, reviewsDirectory)
    const limit = options.maxDecisions ?? decisionLimits.perRun

    const corrupt = (entry: string, detail: string) => new DecisionLogCorrupt({ run, entry, detail })

    /** The places taken, ascending (`[]` before the first decision). Unknown names are refused. */
    const places = Effect.gen(function*() {
      const names = yield* Effect.tryPromise({
        try: () => fsp.readdir(directory).catch((error) => (errorCode(error) === "ENOENT" ? [] : Promise.reject(error))),
        catch: (error) => corrupt(reviewsDirectory, errorText(error))
      })
      const seqs: Array<number> = []
      for (const name of names) {
        if (name.startsWith(partialPrefix)) continue // an append that did not finish: never a decision
        const match = namePattern.exec(name)
        if (match === null) return yield* corrupt(name, "not a decision's name")
        seqs.push(Number(match[1]))
      }
      if (seqs.length > limit) return yield* corrupt(reviewsDirectory, `holds ${seqs.length} decisions, over the limit of ${limit}`)
      return seqs.sort((a, b) => a - b)
    })

    const readOne = (seq: number) =>
      readRegularFile(path.join(directory, fileName(seq)), decisionLimits.recordBytes).pipe(
        Effect.mapError((failure) => corrupt(fileName(seq), `${failure.reason}: ${failure.detail}`)),
        Effect.flatMap((bytes) => {
          let text: string
          try {
            text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
          } catch {
            return Effect.fail(corrupt(fileName(seq), "not valid UTF-8"))
          }
          return Either.match(decode(text), {
            onLeft: (invalid) =>
              Effect.fail(corrupt(fileName(seq), invalid.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "))),
            onRight: (record) => Effect.succeed<LoggedDecision>({ seq, record })
          })
        })
      )

    const list: ReviewLogShape["list"] = Effect.flatMap(places, (seqs) => Effect.forEach(seqs, readOne))

    /** Links the complete temporary file under the next free place; a lost race moves on to the next. */
    const linkNext = (temp: string, from: number): Effect.Effect<number, DecisionLogFull | DecisionWriteFailed> =>
      Effect.suspend(() => {
        if (from > limit) return Effect.fail(new DecisionLogFull({ run, limit }))
        return Effect.tryPromise({
          try: () => fsp.link(temp, path.join(directory, fileName(from))).then(() => true, (error) =>
            errorCode(error) === "EEXIST" ? false : Promise.reject(error)),
          catch: (error) => new DecisionWriteFailed({ run, detail: errorText(error) })
        }).pipe(Effect.flatMap((linked) => (linked ? Effect.succeed(from) : linkNext(temp, from + 1))))
      })

    const append: ReviewLogShape["append"] = (decision) =>
      Effect.gen(function*() {
        const seqs = yield* places
        const next = (seqs.at(-1) ?? 0) + 1
        if (next > limit) return yield* new DecisionLogFull({ run, limit })
        const bytes = Buffer.from(JSON.stringify(decision) + "\n", "utf8")
        const failed = (error: unknown) => new DecisionWriteFailed({ run, detail: errorText(error) })
        yield* Effect.tryPromise({ try: () => fsp.mkdir(directory, { mode: 0o755 }).catch((e) => (errorCode(e) === "EEXIST" ? undefined : Promise.reject(e))), catch: failed })
        const temp = path.join(directory, `${partialPrefix}${randomUUID()}`)
        return yield* Effect.acquireUseRelease(
          Effect.tryPromise({ try: () => fsp.open(temp, "wx", 0o444), catch: failed }),
          (handle) =>
            Effect.tryPromise({
              try: async () => {
                await handle.writeFile(bytes)
                await handle.sync()
              },
              catch: failed
            }).pipe(Effect.zipRight(Effect.promise(() => handle.close())), Effect.zipRight(linkNext(temp, next))),
          (handle) => Effect.promise(() => handle.close().catch(() => undefined).then(() => fsp.unlink(temp).catch(() => undefined)))
        )
      })

    return { run, append, list } satisfies ReviewLogShape
  })

/**
 * The review log of a run directory (its `reviews/` subdirectory, made on the first append).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: Options) => Layer.effect(ReviewLog, make(options))
