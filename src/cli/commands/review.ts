/**
 * `run-pipeline review`: recorded human review.
 *
 * - `review record`: verifies the report against the run exactly as `verify` does (read-only), then
 *   appends the reviewer's decision about one verified fact to the run's review log, bound to the
 *   fact's capture digest and span. A fact that did not verify cannot be reviewed.
 * - `review list`: the run's whole log, in append order, with what supersedes what.
 *
 * The log is append-only in every store: nothing here edits or removes a decision.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Config from "../../Config.js"
import type { DecisionError } from "../../Errors.js"
import { terminal } from "../../render/Escape.js"
import * as HumanReviewSection from "../../render/HumanReviewSection.js"
import * as Decisions from "../../review/Decisions.js"
import { Decision, type DecisionLog, decisionsFormat, withHistory } from "../../review/Records.js"
import { ReviewLog } from "../../store/ReviewLog.js"
import * as Gate from "../../verify/Gate.js"
import type { VerifiedReport } from "../../verify/VerifiedReport.js"
import { CliExit } from "../CliError.js"
import { describe } from "../CommandHelp.js"
import { loadConfig, orUsageError } from "../Common.js"
import { choiceOption, configOption, modeOption, reportOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"

/** A review failure: its tag and message on stderr; exit 2 for an invalid decision, 1 otherwise. */
const failWith = (error: { readonly _tag: string; readonly message: string }) =>
  Effect.zipRight(
    Io.stderr(`review: ${error._tag}: ${terminal(error.message)}\n`),
    Effect.fail(new CliExit({ code: error._tag === "DecisionInvalid" ? 2 : 1 }))
  )

/**
 * `effect` over the run's review log in `store`: a store that cannot be opened is a usage error
 * (exit 2), any other failure of the log is said as `failWith` says it.
 */
const withLog = <A>(store: Store.StoreChoice, effect: Effect.Effect<A, DecisionError, ReviewLog>) =>
  Effect.flatMap(Store.reviewLog(store), (logLayer) =>
    effect.pipe(
      Effect.provide(logLayer),
      Effect.catchTags({
        InvalidRunDirectory: (e) => orUsageError(Effect.fail(e)),
        StoreUnavailable: (e) => orUsageError(Effect.fail(e)),
        StorePackageMissing: (e) => orUsageError(Effect.fail(e))
      }),
      Effect.catchAll(failWith)
    ))

const factOption = Options.integer("fact").pipe(
  Options.withDescription("The fact to review, numbered from 1 as the text rendering numbers facts (`[2]` is --fact 2)")
)
// Required, and checked by the decision's Schema with the rest (`DecisionInvalid`, exit 2).
const decisionOption = Options.text("decision").pipe(
  Options.withPseudoName(Decision.literals.join(" | ")),
  Options.withDescription(`The decision: ${Decision.literals.join(" | ")}`)
)
const noteOption = Options.text("note").pipe(
  Options.withDefault(""),
  Options.withDescription("Why (at most 2,000 characters; tab and newline are the only control characters allowed)")
)
const reviewerOption = Options.text("reviewer").pipe(
  Options.withDescription("Who decides (1 to 200 characters, one line); the service takes it from the token instead")
)
const listFormats = ["text", "json", "markdown", "html"] as const

const record = Command.make(
  "record",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    report: reportOption,
    mode: modeOption,
    fact: factOption,
    decision: decisionOption,
    note: noteOption,
    reviewer: reviewerOption
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const config = yield* orUsageError(loadConfig(args.config))
      // Bounded and strict before the report is read or verified.
      const request = Decisions.request({ fact: args.fact - 1, decision: args.decision, note: args.note, reviewer: args.reviewer })
      if (Either.isLeft(request)) return yield* failWith(request.left)
      const reportText = yield* orUsageError(Io.readText(args.report, "report"))
      const mode = Option.getOrElse(args.mode, () => Config.resolvedMode(config))
      const storeLayer = yield* Store.existingRun(store)
      const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(reportText))).pipe(
        Effect.provide(Gate.layerWithStore({ ...config, verify: { ...config.verify, mode } }).pipe(Layer.provide(storeLayer))),
        orUsageError
      )
      const recorded = yield* withLog(store, Decisions.record({ run: Store.runName(store), reportText, outcome, request: request.right }))
      const d = recorded.record
      yield* Io.stdout(
        `recorded #${recorded.seq}: fact ${d.fact.index + 1} ${JSON.stringify(terminal(d.fact.label))}: ${d.decision} ` +
          `by ${terminal(d.reviewer)} (decision ${d.id}, report ${d.report.slice(0, 12)}…)\n`
      )
    })
).pipe(Command.withDescription(describe(
  "review record",
  "Record a reviewer's decision about one verified fact of a report (append-only; a later decision supersedes, both are kept).",
  { success: "the decision was recorded", failure: "the fact did not verify, or the log refused it (full, unwritable, corrupt)" }
)))

const list = Command.make(
  "list",
  {
    runDir: runDirOption,
    store: Store.storeOption,
    format: choiceOption("format", listFormats, "text", `Output format: ${listFormats.join(" | ")}`)
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const logged = yield* withLog(store, Effect.flatMap(ReviewLog, (log) => log.list))
      const log: DecisionLog = { format: decisionsFormat, run: Store.runName(store), decisions: withHistory(logged) }
      yield* Io.stdout(
        args.format === "json"
          ? JSON.stringify(log, null, 2) + "\n"
          : args.format === "markdown"
          ? HumanReviewSection.logMarkdown(log)
          : args.format === "html"
          ? HumanReviewSection.logHtml(log)
          : HumanReviewSection.logText(log)
      )
    })
).pipe(Command.withDescription(describe(
  "review list",
  "List a run's recorded review decisions in append order, each marked current or superseded.",
  { success: "the log was read", failure: "the log is corrupt (never repaired or removed)" }
)))

/**
 * The recorded decisions beside a verified report (`verify`, `run`): `undefined` when none is about
 * its facts. A log that cannot be read is said on stderr and leaves the provenance rendering as is.
 */
export const recordedReview = (store: Store.StoreChoice, report: VerifiedReport) =>
  Effect.gen(function*() {
    const logLayer = yield* Store.reviewLog(store)
    return yield* Effect.flatMap(ReviewLog, (log) => log.list).pipe(
      Effect.provide(logLayer),
      Effect.map((logged) => Decisions.humanReviewOf(report, logged)),
      Effect.catchAll((error) =>
        Effect.as(Io.stderr(`review log not shown: ${error._tag}: ${terminal(error.message)}\n`), undefined)
      )
    )
  })

export const review = Command.make("review").pipe(
  Command.withDescription(describe(
    "review",
    "Recorded human review: record a decision about a verified fact (review record) or list a run's decisions (review list).",
    { success: "done" }
  )),
  Command.withSubcommands([record, list])
)
