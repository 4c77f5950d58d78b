/**
 * Which capture store a command uses. The default is the filesystem: `--run-dir`
 * is a run directory. With `--store postgres://…` (or `CITEGATE_DATABASE_URL`
 * in the environment) the store is PostgreSQL and `--run-dir` is the run's
 * name in the database, used verbatim: no directory is created or read.
 *
 * The PostgreSQL store is imported only when chosen, so the filesystem CLI
 * never loads the database driver.
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as path from "node:path"
import * as CaptureStore from "../store/CaptureStore.js"
import * as ReviewLog from "../store/ReviewLog.js"
import * as ReviewFilesystem from "../store/ReviewFilesystem.js"
import type { InvalidRunDirectory, RunExists, StorePackageMissing, StoreUnavailable } from "../Errors.js"
import { type RunDirectoryExists, StoreChoiceInvalid, type WriteFailed } from "./CliError.js"
import * as Io from "./Io.js"

/** The environment variable that names the database when `--store` is not given. */
export const databaseUrlVariable = "CITEGATE_DATABASE_URL"

// Plain text wrapped at once: Redacted keeps the URL (and any password in it) out of logs and errors.
export const storeOption = Options.text("store").pipe(
  Options.withPseudoName("url"),
  Options.map(Redacted.make),
  Options.optional,
  Options.withDescription(
    `postgres://user@host/db: keep captures in PostgreSQL, --run-dir then names the run (default $${databaseUrlVariable}; without either, the filesystem)`
  )
)

export type StoreChoice =
  | { readonly _tag: "FileSystem"; readonly directory: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly run: string }

/** The store the options and the environment name. */
export const choose = (runDir: string, store: Option.Option<Redacted.Redacted>) =>
  Effect.suspend((): Effect.Effect<StoreChoice, StoreChoiceInvalid> => {
    const fromEnvironment = process.env[databaseUrlVariable]
    const url = Option.isSome(store)
      ? store.value
      : fromEnvironment !== undefined && fromEnvironment !== ""
      ? Redacted.make(fromEnvironment)
      : undefined
    if (url === undefined) return Effect.succeed({ _tag: "FileSystem", directory: runDir })
    if (!/^postgres(ql)?:\/\//.test(Redacted.value(url))) {
      const where = Option.isSome(store) ? "--store" : databaseUrlVariable
      return Effect.fail(new StoreChoiceInvalid({ detail: `${where} is not a postgres:// or postgresql:// URL` }))
    }
    return Effect.succeed({ _tag: "Postgres", url, run: runDir })
  })

/** A store on one run; building it fails when the run cannot be used. */
export type StoreLayer = Layer.Layer<
  CaptureStore.CaptureStore,
  InvalidRunDirectory | StoreUnavailable | RunExists | StorePackageMissing
>

/** Where `--out` must never point: the run directory (none for a run in a database). */
export const runDirectoryOf = (choice: StoreChoice): string | undefined =>
  choice._tag === "FileSystem" ? choice.directory : undefined

const postgres = Effect.promise(() => import("../store/Postgres.js"))

/**
 * A store on a NEW run: the run directory is created now (an existing one is
 * refused); a PostgreSQL run is created exclusively when the layer is built.
 */
export const createRun = (choice: StoreChoice): Effect.Effect<StoreLayer, RunDirectoryExists | WriteFailed> =>
  choice._tag === "FileSystem"
    ? Effect.as(Io.createRunDirectory(choice.directory), CaptureStore.layerFileSystem({ directory: choice.directory }))
    : Effect.map(postgres, (Postgres) => Postgres.layerUrl({ url: choice.url, run: choice.run, create: true }))

/** A store on an existing run, for reading. */
export const existingRun = (choice: StoreChoice): Effect.Effect<StoreLayer> =>
  choice._tag === "FileSystem"
    ? Effect.succeed(CaptureStore.layerFileSystem({ directory: choice.directory }))
    : Effect.map(postgres, (Postgres) => Postgres.layerUrl({ url: choice.url, run: choice.run }))

/** `store-init`: creates or upgrades the tables, trigger and roles; the migrations that ran. */
export const initialise = (url: Redacted.Redacted) =>
  Effect.flatMap(postgres, (Postgres) =>
    Postgres.migrate.pipe(
      Effect.mapError((error) => error._tag === "StorePackageMissing" ? error : Postgres.storeUnavailable("", error)),
      Effect.provide(Postgres.layerClient({ url }))
    ))

const reviewPostgres = Effect.promise(() => import("../store/ReviewPostgres.js"))

/** The review log of a run (its `reviews/` directory, or the database's `citegate_reviews`). */
export const reviewLog = (
  choice: StoreChoice
): Effect.Effect<Layer.Layer<ReviewLog.ReviewLog, InvalidRunDirectory | StoreUnavailable | StorePackageMissing>> =>
  choice._tag === "FileSystem"
    ? Effect.succeed(ReviewFilesystem.layer({ directory: choice.directory }))
    : Effect.map(reviewPostgres, (ReviewPostgres) => ReviewPostgres.layerUrl({ url: choice.url, run: choice.run }))

/** The run's name as decisions record it: the database's run name, or the run directory's base name. */
export const runName = (choice: StoreChoice): string =>
  choice._tag === "FileSystem" ? path.basename(path.resolve(choice.directory)) : choice.run
