/**
 * Validates a JSON-LD document (a `--format jsonld` rendering of a report, answer or audit) against
 * citegate's SHACL shapes (`schema/citegate-v1.shapes.ttl`): `run-pipeline validate-graph`.
 *
 * - Bounded before the work: the file's size (`maxBytes`, from its metadata, before it is read), then
 *   the parsed JSON's values and nesting (`maxNodes`, `maxDepth`, counted without recursion), before
 *   a JSON-LD processor sees it; the RDF statements after expansion (`maxQuads`) before validation.
 * - Offline: the JSON-LD processor (`jsonld`) gets a document loader that serves citegate's context
 *   (`urn:citegate:context:v1`, from the shipped file) and refuses every other URL
 *   (`GraphContextRefused`): nothing is ever fetched.
 * - The SHACL engine is `shacl-engine` (chosen by measurement: docs/evidence.md), over `n3` datasets.
 *   The violations are read from the engine's standard validation report (the `sh:` vocabulary), not
 *   its objects, so they name the focus node, path, shape, constraint, message and value.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import jsonld from "jsonld"
import { DataFactory, Parser, Store } from "n3"
import type * as RdfJs from "@rdfjs/types"
import * as fsp from "node:fs/promises"
import { Validator } from "shacl-engine"
import { GraphContextRefused, GraphInputInvalid, GraphInputTooLarge, GraphShapesUnavailable, GraphTooComplex } from "../Errors.js"
import { errorText } from "../internal/safeRead.js"
import { contextFile, contextIri, shapesFile } from "./Records.js"

/** What one validation takes at most. */
export interface GraphLimits {
  /** Bytes of the file (checked on its metadata before it is read). */
  readonly maxBytes: number
  /** JSON values (objects, arrays, strings, numbers, booleans, nulls) of the document. */
  readonly maxNodes: number
  /** Nesting of arrays and objects. */
  readonly maxDepth: number
  /** RDF statements after expansion. */
  readonly maxQuads: number
}

export const defaultLimits: GraphLimits = { maxBytes: 8 * 1024 * 1024, maxNodes: 100_000, maxDepth: 64, maxQuads: 400_000 }

/** One SHACL validation result, as data. IRIs in full; a blank node as `_:label`. */
export interface Violation {
  readonly focusNode: string
  /** The property path, when the shape has one (an IRI for a predicate path). */
  readonly path: string | null
  /** The shape whose constraint failed (`urn:citegate:shapes:EvidenceShape-page`). */
  readonly shape: string
  /** The SHACL constraint component (`http://www.w3.org/ns/shacl#MinCountConstraintComponent`). */
  readonly constraint: string
  readonly severity: string
  readonly message: string
  /** The offending value, when the constraint names one. */
  readonly value: string | null
}

export const validationFormat = "citegate.graph-validation/1" as const

export interface GraphValidation {
  readonly format: typeof validationFormat
  readonly file: string
  readonly conforms: boolean
  /** RDF statements the document expanded to. */
  readonly quads: number
  readonly violations: ReadonlyArray<Violation>
}

const packageFile = (name: string) => new URL(`../../${name}`, import.meta.url)

const readShipped = (name: string) =>
  Effect.tryPromise({
    try: () => fsp.readFile(packageFile(name), "utf8"),
    catch: (error) => new GraphShapesUnavailable({ path: name, detail: errorText(error) })
  })

/** citegate's JSON-LD context, as shipped. */
export const loadContext = Effect.fn("Graph.loadContext")(function*() {
  const text = yield* readShipped(contextFile)
  return yield* Effect.try({
    try: () => JSON.parse(text) as object,
    catch: (error) => new GraphShapesUnavailable({ path: contextFile, detail: errorText(error) })
  })
})

/** A JSON-LD remote document as `jsonld`'s loaders return it. */
export interface RemoteDocument {
  readonly contextUrl: undefined
  readonly documentUrl: string
  readonly document: object
}

/**
 * A `jsonld` document loader that serves citegate's context and nothing else. `refused` records the
 * first other URL asked for (the processor wraps the thrown error in its own).
 */
export const offlineLoader = (context: object) => {
  const state: { refused: string | undefined } = { refused: undefined }
  const load = async (url: string): Promise<RemoteDocument> => {
    if (url === contextIri) return { contextUrl: undefined, documentUrl: url, document: context }
    state.refused ??= url
    throw new Error(`citegate loads no context but ${contextIri}; refused ${url}`)
  }
  return { load, state }
}

/** Counts the JSON values and the nesting of a parsed document, without recursion; fails past the limits. */
export const checkShape = (path: string, value: unknown, limits: GraphLimits): GraphTooComplex | undefined => {
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  let nodes = 0
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!
    if (++nodes > limits.maxNodes) return new GraphTooComplex({ path, measure: "nodes", limit: limits.maxNodes })
    if (typeof item !== "object" || item === null) continue
    if (depth > limits.maxDepth) return new GraphTooComplex({ path, measure: "depth", limit: limits.maxDepth })
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1])
  }
  return undefined
}

interface JsonLdTerm {
  readonly termType: string
  readonly value: string
  readonly datatype?: { readonly value: string }
  readonly language?: string
}
interface JsonLdQuad {
  readonly subject: JsonLdTerm
  readonly predicate: JsonLdTerm
  readonly object: JsonLdTerm
  readonly graph: JsonLdTerm
}

const term = (t: JsonLdTerm): RdfJs.Quad_Object => {
  switch (t.termType) {
    case "NamedNode":
      return DataFactory.namedNode(t.value)
    case "BlankNode":
      return DataFactory.blankNode(t.value.replace(/^_:/, ""))
    default:
      return DataFactory.literal(t.value, t.language !== undefined && t.language !== "" ? t.language : DataFactory.namedNode(t.datatype!.value))
  }
}

const graphTerm = (t: JsonLdTerm): RdfJs.Quad_Graph =>
  t.termType === "DefaultGraph" ? DataFactory.defaultGraph() : (term(t) as RdfJs.Quad_Graph)

/** The document's RDF statements (JSON-LD 1.1 to RDF, offline), in an n3 dataset. */
export const toDataset = (path: string, document: unknown, context: object) =>
  Effect.gen(function*() {
    const loader = offlineLoader(context)
    const quads = yield* Effect.tryPromise({
      try: () => jsonld.toRDF(document as jsonld.JsonLdDocument, { documentLoader: loader.load as never }) as Promise<unknown>,
      catch: (error) =>
        loader.state.refused !== undefined
          ? new GraphContextRefused({ path, url: loader.state.refused })
          : new GraphInputInvalid({ path, detail: `JSON-LD: ${errorText(error)}` })
    })
    const list = quads as ReadonlyArray<JsonLdQuad>
    return new Store(list.map((q) =>
      DataFactory.quad(
        term(q.subject) as RdfJs.Quad_Subject,
        term(q.predicate) as RdfJs.Quad_Predicate,
        term(q.object),
        graphTerm(q.graph)
      )
    ))
  })

/** citegate's shapes, parsed. */
export const loadShapes = Effect.fn("Graph.loadShapes")(function*() {
  const text = yield* readShipped(shapesFile)
  return yield* Effect.try({
    try: () => new Store(new Parser().parse(text)),
    catch: (error) => new GraphShapesUnavailable({ path: shapesFile, detail: errorText(error) })
  })
})

const sh = (name: string) => DataFactory.namedNode(`http://www.w3.org/ns/shacl#${name}`)
const rdfType = DataFactory.namedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")

const show = (t: RdfJs.Term | undefined): string | null =>
  t === undefined ? null : t.termType === "BlankNode" ? `_:${t.value}` : t.value

/** The violations of a SHACL validation report (RDF), sorted by focus node, path and shape. */
export const violationsOf = (report: Store): ReadonlyArray<Violation> => {
  const one = (subject: RdfJs.Quad_Subject, name: string) => report.getObjects(subject, sh(name), null)[0]
  return report.getSubjects(rdfType, sh("ValidationResult"), null)
    .map((result) => ({
      focusNode: show(one(result, "focusNode")) ?? "",
      path: show(one(result, "resultPath")),
      shape: show(one(result, "sourceShape")) ?? "",
      constraint: show(one(result, "sourceConstraintComponent")) ?? "",
      severity: show(one(result, "resultSeverity")) ?? "",
      message: report.getObjects(result, sh("resultMessage"), null).map((m) => m.value).join("; "),
      value: show(one(result, "value"))
    }))
    .sort((a, b) =>
      a.focusNode.localeCompare(b.focusNode) || (a.path ?? "").localeCompare(b.path ?? "") || a.shape.localeCompare(b.shape)
    )
}

/** The factory the engine builds its report with: n3's terms, n3 stores as datasets. */
const factory = { ...DataFactory, dataset: (quads?: ReadonlyArray<RdfJs.Quad>) => new Store(quads as Array<RdfJs.Quad> | undefined) }

/** Validates a parsed document (already bounded by `checkShape`) against citegate's shapes. */
export const validateDocument = Effect.fn("Graph.validateDocument")(function*(
  path: string,
  document: unknown,
  limits: GraphLimits = defaultLimits
) {
  const tooComplex = checkShape(path, document, limits)
  if (tooComplex !== undefined) return yield* tooComplex
  const context = yield* loadContext()
  const data = yield* toDataset(path, document, context)
  if (data.size > limits.maxQuads) return yield* new GraphTooComplex({ path, measure: "quads", limit: limits.maxQuads })
  const shapes = yield* loadShapes()
  const report = yield* Effect.tryPromise({
    try: () => new Validator(shapes, { factory }).validate({ dataset: data }),
    catch: (error) => new GraphInputInvalid({ path, detail: `SHACL: ${errorText(error)}` })
  })
  const violations = violationsOf(report.dataset as Store)
  return {
    format: validationFormat,
    file: path,
    conforms: violations.length === 0,
    quads: data.size,
    violations
  } satisfies GraphValidation
})

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Reads a JSON-LD file within the limits (its size first) and validates it. */
export const validateFile = Effect.fn("Graph.validateFile")(function*(path: string, limits: GraphLimits = defaultLimits) {
  const invalid = (error: unknown) => new GraphInputInvalid({ path, detail: errorText(error) })
  const stat = yield* Effect.tryPromise({ try: () => fsp.stat(path), catch: invalid })
  if (!stat.isFile()) return yield* new GraphInputInvalid({ path, detail: "not a regular file" })
  if (stat.size > limits.maxBytes) return yield* new GraphInputTooLarge({ path, bytes: stat.size, limit: limits.maxBytes })
  const bytes = yield* Effect.tryPromise({ try: () => fsp.readFile(path), catch: invalid })
  // The file may have grown since it was measured.
  if (bytes.length > limits.maxBytes) return yield* new GraphInputTooLarge({ path, bytes: bytes.length, limit: limits.maxBytes })
  const document = yield* Effect.try({ try: () => JSON.parse(fatalUtf8.decode(bytes)) as unknown, catch: invalid })
  return yield* validateDocument(path, document, limits)
})
