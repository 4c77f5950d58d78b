/**
 * `run-pipeline recapture --from OLD --config C --run-dir NEW`: captures again, into a NEW run, the
 * approved sources an OLD run holds records of, so that an audit can compare the two runs.
 *
 * Which sources: those the configuration approves AND the old run has a record of (read through the
 * run's manifest). An approved source the old run never captured is not fetched: no citation of the
 * old run can name it, so the audit has nothing to compare it with; it is listed as skipped. A source
 * whose old record is unusable (corrupt, legacy, altered) is still captured again, with a warning:
 * the old run did fetch it. The capture itself is `capture`'s: same budgets, content types, CA file
 * and address policy, into a new directory only.
 */
import * as Effect from "effect/Effect"
import * as CaptureStore from "../store/CaptureStore.js"
import type { PipelineConfig } from "../Config.js"
import type { SourceUrl } from "../Domain.js"
import * as Manifest from "../Manifest.js"
import { terminal } from "../render/Escape.js"
import { errorText } from "../internal/safeRead.js"
import { RecaptureRefused, WriteFailed } from "./CliError.js"
import * as Io from "./Io.js"

/**
 * Refuses, before anything is created or fetched, a new run directory that is the old one or lies
 * inside it (by real path: symlinks and `..` resolved). A new directory that exists at all is
 * refused later, when it is created, exactly as `capture` refuses it.
 */
export const checkRunDirectories = (options: { readonly from: string; readonly to: string }) =>
  Effect.tryPromise({
    try: async (): Promise<RecaptureRefused | undefined> => {
      const from = await Io.realName(options.from)
      const to = await Io.realName(options.to)
      const refused = (reason: RecaptureRefused["reason"], detail: string) =>
        new RecaptureRefused({ from: options.from, to: options.to, reason, detail })
      if (from === to) return refused("same-run", "the new run directory is the old run; captures go into a new run")
      if (Io.isWithin(from, to)) {
        return refused("inside-old-run", `the new run directory is inside the old run ${from}; runs are never nested`)
      }
      return undefined
    },
    catch: (error) => new WriteFailed({ path: options.to, detail: errorText(error) })
  }).pipe(Effect.flatMap((refusal) => (refusal === undefined ? Effect.void : Effect.fail(refusal))))

export interface RecapturePlan {
  /** The approved sources the old run holds a record of, in configuration order. */
  readonly sources: ReadonlyArray<SourceUrl>
  /** Approved sources the old run has no record of: not fetched. */
  readonly skipped: ReadonlyArray<SourceUrl>
  /** Sources captured again although their old record is unusable, with the reason. */
  readonly unusable: ReadonlyArray<{ readonly source: SourceUrl; readonly reason: string }>
}

/** Reads the old run's manifest (read-only) and decides what to fetch again. */
export const plan = (config: PipelineConfig, from: string, to: string) =>
  Effect.gen(function*() {
    const manifest = yield* Manifest.make(config).pipe(
      Effect.provide(CaptureStore.layerFileSystem({ directory: from }))
    )
    const sources: Array<SourceUrl> = []
    const skipped: Array<SourceUrl> = []
    const unusable: Array<{ source: SourceUrl; reason: string }> = []
    for (const entry of manifest.sources) {
      if (entry.status === "captured") sources.push(entry.source)
      else if (entry.reason._tag === "MissingCapture") skipped.push(entry.source)
      else {
        sources.push(entry.source)
        unusable.push({ source: entry.source, reason: entry.reason._tag })
      }
    }
    if (sources.length === 0) {
      return yield* new RecaptureRefused({
        from,
        to,
        reason: "nothing-to-recapture",
        detail: `the old run holds no record of any of the ${manifest.sources.length} approved source(s)`
      })
    }
    return { sources, skipped, unusable } satisfies RecapturePlan
  })

/** The plan, for stderr (sources escaped for the terminal). */
export const planLines = (p: RecapturePlan): string =>
  [
    ...p.skipped.map((s) => `recapture: skipped  ${terminal(s)}: no record in the old run\n`),
    ...p.unusable.map((u) => `recapture: WARNING  ${terminal(u.source)}: the old record is unusable (${u.reason}); captured again\n`),
    `recapture: ${p.sources.length} source(s) to capture again, ${p.skipped.length} skipped\n`
  ].join("")

/** The configuration narrowed to the plan's sources: every budget and policy unchanged. */
export const narrowed = (config: PipelineConfig, p: RecapturePlan): PipelineConfig => ({
  ...config,
  sources: p.sources as PipelineConfig["sources"]
})
