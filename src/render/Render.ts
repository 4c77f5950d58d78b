/**
 * All renderers behind one entry point.
 *
 * @since 0.1.0
 */
import * as Match from "effect/Match"
import * as Html from "./Html.js"
import * as Json from "./Json.js"
import * as JsonLd from "./JsonLd.js"
import * as HumanReviewSection from "./HumanReviewSection.js"
import * as JudgeSection from "./JudgeSection.js"
import * as Markdown from "./Markdown.js"
import * as SignatureNotesSection from "./SignatureNotesSection.js"
import type { Rendering } from "./Rendering.js"
import * as Text from "./Text.js"

export const formats = ["text", "json", "markdown", "html", "jsonld"] as const
export type Format = typeof formats[number]

export const extension: Record<Format, string> = { text: "txt", json: "json", markdown: "md", html: "html", jsonld: "jsonld" }

export const render = (format: Format, rendering: Rendering): string =>
  // --- semantic review hooks: the judge's section after the provenance rendering (JudgeSection.ts), then
  // recorded human review (HumanReviewSection.ts) ---
  HumanReviewSection.withHumanReview(
    format,
    JudgeSection.withJudge(
      format,
      // Capture signatures under verify.signatures "check": their own section, right after provenance.
      SignatureNotesSection.withSignatureNotes(
        format,
        renderProvenance(format, rendering),
        rendering._tag === "Verified" ? rendering.signatureNotes : undefined
      ),
      rendering._tag === "Verified" ? rendering.judge : undefined
    ),
    rendering._tag === "Verified" ? rendering.humanReview : undefined
  )

const renderProvenance = (format: Format, rendering: Rendering): string =>
  Match.value(format).pipe(
    Match.when("text", () => Text.render(rendering)),
    Match.when("json", () => Json.render(rendering)),
    Match.when("markdown", () => Markdown.render(rendering)),
    Match.when("html", () => Html.render(rendering)),
    // The JSON value made a graph (src/render/JsonLd.ts): the judge and human review are nodes in it.
    Match.when("jsonld", () => JsonLd.report(Json.toJson(rendering) as unknown as JsonLd.JsonObject)),
    Match.exhaustive
  )

export { fromOutcome, Rendering, RenderedResult, resultFormat } from "./Rendering.js"
