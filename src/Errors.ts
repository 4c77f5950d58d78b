/**
 * Every expected way citegate can fail, one tagged error each. Each carries the
 * fields a renderer needs and a `message` for humans; families are exported as
 * union types and Schemas so renderers can switch exhaustively on `_tag` and a
 * JSON rendering can be decoded back.
 *
 * Field values that come from reports or sources (labels, snippets, URLs) are
 * untrusted data: renderers escape them for their format.
 *
 * This module is the one public surface (`citegate/Errors`, and the root
 * `citegate`); each family lives in its own module under `errors/`, with its
 * classes, its union type and its Schema. A new family is a new module there
 * and one `export *` line at the end of this list.
 *
 * @since 0.1.0
 */
export { formatPath, Issue, IssuePath } from "./errors/Shared.js"
export * from "./errors/Store.js"
export * from "./errors/Verify.js"
export * from "./errors/Config.js"
export * from "./errors/Capture.js"
export * from "./errors/Extraction.js"
export * from "./errors/Migration.js"
export * from "./errors/Answer.js"
export * from "./errors/Documents.js"
export * from "./errors/Stream.js"
export * from "./errors/Service.js"
export * from "./errors/Audit.js"
export * from "./errors/Visibility.js"
export * from "./errors/Review.js"
export * from "./errors/Judge.js"
export * from "./errors/Evidence.js"
export * from "./errors/Provider.js"
export * from "./errors/ProviderStream.js"
export * from "./errors/Boundaries.js"
export * from "./errors/Signature.js"
export * from "./errors/Decision.js"
export * from "./errors/Replica.js"
export * from "./errors/Ui.js"
export * from "./errors/Graph.js"
export * from "./errors/ResultAttestation.js"
export * from "./errors/StoreList.js"
