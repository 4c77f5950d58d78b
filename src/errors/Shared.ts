/**
 * What several error families share: the issues of a document that failed to decode (listed, each
 * with its path, the rest counted) and the short form of a digest in messages.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The first 12 hex digits of a digest, enough to tell captures apart in a message. */
export const short = (digest: string) => digest.slice(0, 12)

/** A position in a decoded document, e.g. `["facts", 2, "source"]`. */
export const IssuePath = Schema.Array(Schema.Union(Schema.String, Schema.Number))

export const Issue = Schema.Struct({ path: IssuePath, message: Schema.String })
export type Issue = typeof Issue.Type

export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "(root)"
    : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")

export const formatIssues = (issues: ReadonlyArray<Issue>, omitted: number | undefined) =>
  issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join("; ") +
  (omitted === undefined || omitted === 0 ? "" : `; and ${omitted} more issue${omitted === 1 ? "" : "s"} not listed`)

/**
 * Issues found beyond those listed: a hostile document can carry millions of them, so only the
 * first few (20) are listed, each message cut, and the rest counted. Absent when all are listed.
 */
export const Omitted = Schema.optional(Schema.NonNegativeInt)
