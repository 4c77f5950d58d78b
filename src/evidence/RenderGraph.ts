/**
 * The result of `run-pipeline validate-graph` (src/evidence/Graph.ts) as text or JSON. Pure. The
 * document's own terms (focus node IRIs, offending values) are data from the file: the text form shows
 * them escaped for a terminal, the JSON form as JSON strings.
 *
 * @since 0.4.0
 */
import { terminal } from "../render/Escape.js"
import type { GraphValidation } from "./Graph.js"

export const graphFormats = ["text", "json"] as const
export type GraphFormat = typeof graphFormats[number]

/** The shapes' and SHACL's own names, shortened for reading (`cgs:EvidenceShape-page`, `sh:MinCount…`). */
const short = (iri: string): string =>
  iri
    .replace(/^urn:citegate:shapes:/, "cgs:")
    .replace(/^urn:citegate:vocab:/, "cg:")
    .replace(/^http:\/\/www\.w3\.org\/ns\/shacl#/, "sh:")
    .replace(/^http:\/\/www\.w3\.org\/ns\/oa#/, "oa:")

const text = (v: GraphValidation): string => {
  const head = v.conforms
    ? `validate-graph: ${terminal(v.file)} conforms to citegate's shapes (${v.quads} statements, 0 violations)\n`
    : `validate-graph: ${terminal(v.file)} does NOT conform: ${v.violations.length} violation(s) in ${v.quads} statements\n`
  const lines = v.violations.map((x) =>
    [
      `- ${short(x.severity)} ${terminal(x.focusNode)}`,
      `  path: ${x.path === null ? "(the node itself)" : terminal(short(x.path))}`,
      `  shape: ${terminal(short(x.shape))} (${short(x.constraint)})`,
      `  message: ${terminal(x.message)}`,
      ...(x.value === null ? [] : [`  value: ${terminal(x.value)}`])
    ].join("\n") + "\n"
  )
  return head + lines.join("")
}

export const render = (format: GraphFormat, validation: GraphValidation): string =>
  format === "json" ? JSON.stringify(validation, null, 2) + "\n" : text(validation)
