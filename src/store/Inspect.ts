/**
 * Inspecting and sweeping a run directory (`run-pipeline doctor`): every
 * record read strictly and rehashed, exactly as verification reads it; the
 * temporary files of interrupted writes listed, and removed only by `sweep`.
 * The public names are re-exported by `store/CaptureStore.ts`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { type CaptureRecord, captureFormat, sha256Of } from "../Domain.js"
import { type CorruptReason, InvalidRunDirectory } from "../Errors.js"
import { checkBody, decodeRecordBytes } from "../internal/recordDecode.js"
import { errorCode, errorText, readRegularFile } from "../internal/safeRead.js"
import { runDirectory } from "./Filesystem.js"
import {
  attestationNamePattern,
  bodyFileName,
  bodyNamePattern,
  defaultMaxBodyBytes,
  defaultMaxRecordBytes,
  isLeftover,
  maxAttestationBytes,
  recordFileName,
  recordNamePattern
} from "./Format.js"
// ---------------------------------------------------------------------------

/**
 * The temporary file of a write that did not finish (the process died).
 *
 * @since 0.1.0
 * @category models
 */
export interface Leftover {
  readonly name: string
  readonly bytes: number
  /**
   * The record file this is a second link of: the write got as far as linking
   * the complete record and died before removing its temporary name. `null`:
   * the write died earlier and no record was made from it.
   */
  readonly linkedTo: string | null
}

/**
 * A record file that does not verify. Never removed: it is evidence, and only
 * an operator decides what to do with it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordProblem {
  readonly name: string
  readonly reason: CorruptReason | "legacy" | "name-mismatch" | "digest-mismatch"
  readonly detail: string
}

/**
 * A stored body (`<sha256>.body`, v2 records). Never removed by `sweep`: it is
 * what was fetched.
 *
 * @since 0.2.0
 * @category models
 */
export interface BodyEntry {
  readonly name: string
  readonly bytes: number
  /** Whether some record that verifies names it; `false` after a write that stored the body and died before the record. */
  readonly referenced: boolean
  /** `null` when the body hashes to its name; else why not. */
  readonly problem: string | null
}

/**
 * A capture's signed attestation (`<sha256(source)>.dsse.json`, beside its record). Never removed by
 * `sweep`. Its signature is not checked here (that needs the trusted keys: `verify` under
 * `verify.signatures` checks it); only that it is a readable file within the size limit whose record exists.
 *
 * @since 0.3.0
 * @category models
 */
export interface AttestationEntry {
  readonly name: string
  readonly bytes: number
  /** `null` when it is a readable file of at most `maxAttestationBytes` beside a record of its name; else why not. */
  readonly problem: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunInspection {
  readonly directory: string
  /** Record files that verify: strict v1 records, stored under their source's name, text matching the digest. */
  readonly records: number
  readonly leftovers: ReadonlyArray<Leftover>
  readonly problems: ReadonlyArray<RecordProblem>
  /** Stored bodies of v2 records, each rehashed against its name. */
  readonly bodies: ReadonlyArray<BodyEntry>
  /** Signed attestations of captures (`capture.signing`), each beside its record. */
  readonly attestations: ReadonlyArray<AttestationEntry>
  /** Entries citegate did not write (left alone). */
  readonly others: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SweepResult extends RunInspection {
  readonly removed: ReadonlyArray<string>
  readonly failed: ReadonlyArray<{ readonly name: string; readonly detail: string }>
}

/**
 * Checks every entry of a run directory, read-only: each record file is read
 * strictly and rehashed, exactly as verification reads it; temporary files of
 * interrupted writes are listed as leftovers. Nothing is changed.
 *
 * @since 0.1.0
 * @category inspection
 */
export const inspect = Effect.fn("CaptureStore.inspect")(function*(options: {
  readonly directory: string
  readonly maxRecordBytes?: number
}) {
  const directory = yield* runDirectory(options.directory)
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes
  const names = yield* Effect.tryPromise({
    try: () => fsp.readdir(directory),
    catch: (error) => new InvalidRunDirectory({ path: directory, detail: errorText(error) })
  })
  names.sort()
  const recordInodes = new Map<string, string>()
  const partials: Array<{ readonly name: string; readonly stats: fs.Stats }> = []
  const others: Array<string> = []
  const problems: Array<RecordProblem> = []
  const bodyNames: Array<{ readonly name: string; readonly stats: fs.Stats }> = []
  const referencedBodies = new Set<string>()
  const attestationNames: Array<{ readonly name: string; readonly stats: fs.Stats }> = []
  let records = 0
  for (const name of names) {
    const full = path.join(directory, name)
    const stats = yield* Effect.promise(() => fsp.lstat(full).catch(() => undefined))
    if (stats === undefined) continue // removed since the listing
    if (isLeftover(name, stats)) {
      partials.push({ name, stats })
      continue
    }
    if (bodyNamePattern.test(name)) {
      bodyNames.push({ name, stats })
      continue
    }
    if (attestationNamePattern.test(name)) {
      // A leftover linked to it is a second link of a finished write, as for a record.
      if (stats.isFile()) recordInodes.set(`${stats.dev}:${stats.ino}`, name)
      attestationNames.push({ name, stats })
      continue
    }
    if (!recordNamePattern.test(name)) {
      others.push(name)
      continue
    }
    if (stats.isFile()) recordInodes.set(`${stats.dev}:${stats.ino}`, name)
    const problem = yield* readRecord(full, name, maxRecordBytes).pipe(
      Effect.flatMap((record) => {
        if (record.format === captureFormat) return Effect.void
        referencedBodies.add(bodyFileName(record.body.sha256))
        return readRegularFile(path.join(directory, bodyFileName(record.body.sha256)), defaultMaxBodyBytes).pipe(
          Effect.mapError((failure): RecordProblem => ({
            name,
            reason: failure.reason === "missing" ? "body-missing" : failure.reason,
            detail: `the body file ${bodyFileName(record.body.sha256)}: ${failure.detail}`
          })),
          Effect.flatMap((body) =>
            Either.match(checkBody(name, record, body), {
              onLeft: (error): Effect.Effect<void, RecordProblem> =>
                Effect.fail({ name, reason: error.reason, detail: error.detail }),
              onRight: () => Effect.void
            })
          )
        )
      }),
      Effect.as(undefined),
      Effect.merge
    )
    if (problem === undefined) records++
    else problems.push(problem)
  }
  const bodies: Array<BodyEntry> = []
  for (const { name, stats } of bodyNames) {
    const problem = yield* readRegularFile(path.join(directory, name), defaultMaxBodyBytes).pipe(
      Effect.map((bytes) => {
        const actual = sha256Of(bytes)
        return actual === name.slice(0, 64) ? null : `the body hashes to ${actual}`
      }),
      Effect.catchAll((failure) => Effect.succeed(`${failure.reason}: ${failure.detail}`))
    )
    bodies.push({ name, bytes: stats.size, referenced: referencedBodies.has(name), problem })
  }
  const recordNames = new Set(names.filter((name) => recordNamePattern.test(name)))
  const attestations: Array<AttestationEntry> = []
  for (const { name, stats } of attestationNames) {
    const record = name.slice(0, 64) + ".json"
    const problem = yield* readRegularFile(path.join(directory, name), maxAttestationBytes).pipe(
      Effect.as(recordNames.has(record) ? null : `no record ${record} beside it (the record was removed or renamed)`),
      Effect.catchAll((failure) => Effect.succeed(`${failure.reason}: ${failure.detail}`))
    )
    attestations.push({ name, bytes: stats.size, problem })
  }
  const leftovers = partials.map(({ name, stats }): Leftover => ({
    name,
    bytes: stats.size,
    linkedTo: recordInodes.get(`${stats.dev}:${stats.ino}`) ?? null
  }))
  const inspection: RunInspection = { directory, records, leftovers, problems, bodies, attestations, others }
  return inspection
})

const readRecord = (file: string, name: string, maxRecordBytes: number): Effect.Effect<CaptureRecord, RecordProblem> =>
  readRegularFile(file, maxRecordBytes).pipe(
    Effect.mapError((failure): RecordProblem => ({
      name,
      reason: failure.reason === "missing" ? "unreadable" : failure.reason,
      detail: failure.detail
    })),
    Effect.flatMap((bytes) =>
      Either.match(decodeRecordBytes(name, undefined, bytes), {
        onLeft: (error): Effect.Effect<CaptureRecord, RecordProblem> =>
          Effect.fail({
            name,
            reason: error._tag === "LegacyCapture" ? "legacy" : error.reason,
            detail: error.detail
          }),
        onRight: (record): Effect.Effect<CaptureRecord, RecordProblem> => {
          if (recordFileName(record.source) !== name) {
            return Effect.fail({
              name,
              reason: "name-mismatch",
              detail: `a capture of ${record.source}, stored under another source's name`
            })
          }
          const actual = sha256Of(record.text)
          return actual === record.sha256 ? Effect.succeed(record) : Effect.fail({
            name,
            reason: "digest-mismatch",
            detail: `the text hashes to ${actual}, the record says ${record.sha256}`
          })
        }
      })
    )
  )

/**
 * Removes the leftovers that `inspect` finds, and nothing else: never a record
 * (not even one that does not verify) and never an entry citegate did not
 * write (a leftover has citegate's exact temporary name and read-only mode).
 * A directory that holds no record or body but other entries is not a run:
 * `InvalidRunDirectory`, and nothing is removed. Removing a leftover that is a second link of a record removes only
 * that name; the record stays. Run it while no capture writes into the directory
 * (a write in progress would lose its temporary file and fail, leaving no record).
 *
 * @since 0.1.0
 * @category inspection
 */
export const sweep = Effect.fn("CaptureStore.sweep")(function*(options: {
  readonly directory: string
  readonly maxRecordBytes?: number
}) {
  const inspection = yield* inspect(options)
  // Only in a run directory: one holding something citegate wrote besides leftovers, or nothing else at all
  // (a new run whose first write died). A directory of other files is not swept.
  const written = inspection.records + inspection.problems.length + inspection.bodies.length + inspection.attestations.length
  if (written === 0 && inspection.others.length > 0) {
    return yield* new InvalidRunDirectory({
      path: inspection.directory,
      detail: `not a run directory: no capture record or body, and ${inspection.others.length} entries citegate did not write; nothing was removed`
    })
  }
  const removed: Array<string> = []
  const failed: Array<{ readonly name: string; readonly detail: string }> = []
  for (const leftover of inspection.leftovers) {
    const error = yield* Effect.promise(() =>
      fsp.unlink(path.join(inspection.directory, leftover.name)).then(() => undefined, (e: unknown) => e)
    )
    if (error === undefined || errorCode(error) === "ENOENT") removed.push(leftover.name)
    else failed.push({ name: leftover.name, detail: errorText(error) })
  }
  const result: SweepResult = { ...inspection, removed, failed }
  return result
})
