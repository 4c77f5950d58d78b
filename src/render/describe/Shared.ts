/**
 * What the descriptions share: the Description record, the cut every shown value gets, and the repair hints
 * (nearest passage, anchor hints, changed numbers) several failures show.
 */
import type { AnchorMismatch, NearestPassage } from "../../Errors.js"
import { pagesLabel } from "../../Errors.js"
import { cut } from "../../internal/bounded.js"

export interface Description {
  readonly title: string
  readonly fields: ReadonlyArray<readonly [name: string, value: string]>
  readonly fix: string
}

/** The line that stands for issues found but not listed (`omitted` on InvalidReport / InvalidConfig). */
export const omittedIssues = (omitted: number | undefined): ReadonlyArray<string> =>
  omitted === undefined || omitted === 0 ? [] : [`and ${omitted} more issue${omitted === 1 ? "" : "s"} not listed`]

export const prefix = (digest: string) => `${digest.slice(0, 12)}…`

/** The repair diagnostic of a SnippetAbsent, when it carries one: what the capture says nearby. */
export const nearestFields = (nearest: NearestPassage | undefined): ReadonlyArray<readonly [string, string]> =>
  nearest === undefined ? [] : [
    ["nearest passage", nearest.text],
    ["found by", `${nearest.method}, score ${nearest.score}, characters ${nearest.span.start}–${nearest.span.end}`],
    ["differences", nearest.differences]
  ]

/** Where an AnchorMismatch's excerpt is, and the anchors the capture has: what a repair copies. */
export const anchorHintFields = (e: AnchorMismatch): ReadonlyArray<readonly [string, string]> => [
  ...(e.foundPage === undefined && e.foundHeading === undefined
    ? []
    : [[
      "excerpt is on",
      [
        ...(e.foundPage === undefined ? [] : [pagesLabel(e.foundPage, e.foundLastPage)]),
        ...(e.foundHeading === undefined ? [] : [`heading ${e.foundHeading.join(" > ")}`])
      ].join(", ")
    ] as const]),
  ...(e.pages === undefined ? [] : [["the capture's page count", String(e.pages)] as const]),
  ...(e.headings === undefined
    ? []
    : [[
      "headings in the capture",
      e.headings.map((path) => path.join(" > ")).join("; ") +
      (e.headingsOmitted === undefined ? "" : `; and ${e.headingsOmitted} more`)
    ] as const])
]

/** The number, sign or unit a quote changed (SnippetAbsent.changed), when set. */
export const changedFields = (e: { readonly changed?: { readonly quote: string; readonly capture: string } | undefined }) =>
  e.changed === undefined
    ? []
    : [["quote writes", e.changed.quote === "" ? "(nothing)" : e.changed.quote] as const, ["capture has", e.changed.capture === "" ? "(nothing)" : e.changed.capture] as const]

export const changedFix =
  "The quote changes a number, sign or unit of the capture (see quote writes / capture has): quote the capture's own text exactly, or mark the fact unavailable."

/** What to do about a SnippetAbsent, given its diagnostic. */
export const absentFix = (nearest: NearestPassage | undefined, otherwise: string): string =>
  nearest === undefined
    ? otherwise
    : nearest.method === "normalized/1"
    ? "The capture has this text with other typography, case or spacing: quote the nearest passage exactly as shown, or mark the fact unavailable."
    : "A similar passage exists but differs (see differences: a changed number or an added \"not\" changes the meaning): quote the capture exactly only if it supports the fact, or mark the fact unavailable."

/** Longest value a description shows; past it the head, an ellipsis and the total length (a hostile snippet can be megabytes). */
export const maxShownLength = 2_000

export const shown = (description: Description): Description => ({
  ...description,
  fields: description.fields.map(([name, value]) => [name, cut(value, maxShownLength)] as const)
})
