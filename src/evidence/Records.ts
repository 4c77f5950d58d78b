/**
 * The names of citegate's linked-data vocabulary (docs/evidence.md, "JSON-LD and SHACL"): the IRI of
 * the published JSON-LD context, the vocabulary and shapes namespaces, and the files in the package
 * that hold the context and the SHACL shapes. Names only: no logic, no I/O.
 *
 * The IRIs are URNs: they name, they never resolve over a network. A JSON-LD processor reading
 * citegate's documents maps the context IRI to the shipped file (`schema/citegate-v1.context.jsonld`);
 * `run-pipeline validate-graph` serves that file and nothing else.
 *
 * @since 0.4.0
 */

/** The IRI of the JSON-LD context every `--format jsonld` document names (version 1; stable). */
export const contextIri = "urn:citegate:context:v1" as const

/** The vocabulary: every citegate term is this prefix and its name (`urn:citegate:vocab:Claim`). */
export const vocabIri = "urn:citegate:vocab:" as const

/** The namespace of the SHACL shapes (`urn:citegate:shapes:ClaimShape`). */
export const shapesIri = "urn:citegate:shapes:" as const

/** The W3C Web Annotation vocabulary the selectors use. */
export const oaIri = "http://www.w3.org/ns/oa#" as const

/** The files of the package (relative to its root) holding the context and the shapes. */
export const contextFile = "schema/citegate-v1.context.jsonld" as const
export const shapesFile = "schema/citegate-v1.shapes.ttl" as const

/** The format of a JSON-LD rendering: what kind of result it carries. */
export const graphKinds = ["report", "answer", "audit"] as const
export type GraphKind = typeof graphKinds[number]
