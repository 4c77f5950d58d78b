/**
 * Embedding the capture stage: an application that captures the operator's
 * approved sources into a new run directory and hands the drafting model the
 * run's manifest. (Type-checked and run by the test suite.)
 */
import { Data, Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import { Capture, CaptureStore, Config, Manifest } from "citegate"

/** The run directory this application was asked to create already exists (or cannot be created). */
export class RunNotCreated extends Data.TaggedError("RunNotCreated")<{
  readonly directory: string
  readonly detail: string
}> {}

/**
 * The store writes into a directory that exists; creating it is the
 * application's job. Like `run-pipeline capture`, this one always creates a
 * NEW directory (mkdir without `recursive` fails if anything is there), so one
 * directory is one run and evidence of two runs is never mixed.
 */
const createRunDirectory = (directory: string) =>
  Effect.tryPromise({
    try: () => fsp.mkdir(directory, { mode: 0o755 }),
    catch: (error) => new RunNotCreated({ directory, detail: String(error) })
  })

/**
 * Capture every approved source of `pipelineJson` (the operator's
 * configuration as text: a repeated key is an `InvalidConfig`) into a new run
 * directory, then build the run's manifest.
 *
 * `allowLoopbackHttp` is test mode: plain http, only to 127.0.0.1. Leave it
 * off in production, where only https to public addresses is fetched.
 */
export const captureRun = (options: {
  readonly pipelineJson: string
  readonly runDirectory: string
  readonly allowLoopbackHttp?: boolean
}) =>
  Effect.gen(function*() {
    const config = yield* Config.decodeText(options.pipelineJson)
    yield* createRunDirectory(options.runDirectory)
    const CaptureLive = Capture.layer({
      approved: config.sources,
      allowLoopbackHttp: options.allowLoopbackHttp ?? false,
      ...config.capture
    })
    const StoreLive = CaptureStore.layerFileSystem({ directory: options.runDirectory })
    return yield* Effect.gen(function*() {
      const capture = yield* Capture.Capture
      // Every source gets its own result; one failure never loses the other captures.
      const results = yield* capture.captureAll(config.sources)
      const failed = results.filter((r) => Either.isLeft(r.result)).map((r) => r.source)
      // The manifest reads back what was written: digests to cite, and the sources that cannot be cited.
      const manifest = yield* Manifest.make(config)
      return { failed, manifest, prompt: Manifest.toPrompt(manifest) }
    }).pipe(Effect.provide(Layer.provideMerge(CaptureLive, StoreLive)))
  })
