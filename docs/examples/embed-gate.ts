/**
 * Embedding the Gate in an Effect service: a publisher that only ever
 * publishes reports whose citations are proved. (Type-checked and run by the
 * test suite.)
 */
import { Context, Data, Effect, Layer, Match } from "effect"
import { Errors, Gate, Render, type ReportRejected } from "citegate"

/** What this application does when a draft is not publishable: its own tagged error. */
export class DraftNotPublishable extends Data.TaggedError("DraftNotPublishable")<{
  readonly reason: string
  readonly details: string
}> {}

export class Publisher extends Context.Tag("app/Publisher")<Publisher, {
  /** Verify a drafted report (JSON text) and return it as Markdown, or say why not. */
  readonly publish: (draft: string) => Effect.Effect<string, DraftNotPublishable>
}>() {}

export const PublisherLive = Layer.effect(
  Publisher,
  Effect.gen(function*() {
    const gate = yield* Gate.Gate
    return Publisher.of({
      publish: (draft) =>
        gate.checkJsonWithCaptures(draft).pipe(
          Effect.flatMap(({ captures, report }) =>
            report.outcome === "no_evidence"
              ? Effect.fail(new DraftNotPublishable({ reason: "no_evidence", details: "no cited fact was verified" }))
              : Effect.succeed(Render.render("markdown", Render.Rendering.Verified({ report, captures })))
          ),
          Effect.catchTags({
            // The rendering of a rejection lists every failure: useful to send back to the drafter.
            InvalidReport: (error) =>
              Effect.fail(
                new DraftNotPublishable({ reason: "InvalidReport", details: Render.render("text", Render.Rendering.Rejected({ error })) })
              ),
            ReportRejected: (error) =>
              Effect.fail(
                new DraftNotPublishable({ reason: "ReportRejected", details: Render.render("text", Render.Rendering.Rejected({ error })) })
              ),
            VerificationTimeout: (error) =>
              Effect.fail(
                new DraftNotPublishable({ reason: "VerificationTimeout", details: Render.render("text", Render.Rendering.Rejected({ error })) })
              )
          })
        )
    })
  })
)

/**
 * The application layer: the publisher over the Gate over one capture run.
 * `pipelineJson` is the operator's pipeline.json as text: decoded strictly, a
 * repeated key included (a `JSON.parse`d value would already have lost that
 * check). The layer fails with `InvalidConfig` or `InvalidRunDirectory`.
 */
export const makeAppLayer = (runDirectory: string, pipelineJson: string) =>
  PublisherLive.pipe(Layer.provide(Gate.layer({ runDirectory, config: pipelineJson })))

/**
 * A rejection summarised for the drafter, one line per kind of failure, each
 * group typed by its tag (no narrowing of `failures[i].error._tag` by hand).
 */
export const summarise = (rejected: ReportRejected): ReadonlyArray<string> => {
  const groups = Errors.groupFailures(rejected)
  const facts = (failures: ReadonlyArray<{ readonly index: number }>) => failures.map((f) => f.index + 1).join(", ")
  return [
    ...groups.SnippetAbsent.map((f) => `fact ${f.index + 1}: quote ${f.error.source} exactly`),
    ...groups.DigestMismatch.map((f) =>
      Match.value(f.error.kind).pipe(
        Match.when("report", () => `fact ${f.index + 1}: cite capture ${f.error.stored}, not ${f.error.reported}`),
        Match.when("stored", () => `fact ${f.index + 1}: the capture of ${f.error.source} was altered`),
        Match.exhaustive
      )
    ),
    ...(groups.NotApproved.length > 0 ? [`facts ${facts(groups.NotApproved)}: cite only approved sources`] : [])
  ]
}
