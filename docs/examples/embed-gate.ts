/**
 * Embedding the Gate in an Effect service: a publisher that only ever
 * publishes reports whose citations are proved. (Type-checked and run by the
 * test suite.)
 */
import { Context, Effect, Layer } from "effect"
import { Gate, Render } from "citegate"

/** What this application does when a draft is not publishable. */
export class DraftNotPublishable extends Error {
  constructor(readonly reason: string, readonly details: string) {
    super(`draft not publishable: ${reason}`)
  }
}

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
              ? Effect.fail(new DraftNotPublishable("no_evidence", "no cited fact was verified"))
              : Effect.succeed(Render.render("markdown", Render.Rendering.Verified({ report, captures })))
          ),
          Effect.catchTags({
            // The rendering of a rejection lists every failure: useful to send back to the drafter.
            InvalidReport: (error) =>
              Effect.fail(new DraftNotPublishable("InvalidReport", Render.render("text", Render.Rendering.Rejected({ error })))),
            ReportRejected: (error) =>
              Effect.fail(new DraftNotPublishable("ReportRejected", Render.render("text", Render.Rendering.Rejected({ error })))),
            VerificationTimeout: (error) =>
              Effect.fail(new DraftNotPublishable("VerificationTimeout", Render.render("text", Render.Rendering.Rejected({ error }))))
          })
        )
    })
  })
)

/**
 * The application layer: the publisher over the Gate over one capture run.
 * `config` is the operator's pipeline.json (parsed); it is decoded strictly and
 * the layer fails with `InvalidConfig` or `InvalidRunDirectory` if it is wrong.
 */
export const makeAppLayer = (runDirectory: string, config: unknown) =>
  PublisherLive.pipe(Layer.provide(Gate.layer({ runDirectory, config })))
