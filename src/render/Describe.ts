/**
 * What each typed error means to a reader: a title, its fields, and what to do.
 * The switch is exhaustive: an error tag added without a description here is a
 * type error, so no renderer can silently forget one.
 *
 * Values are returned unescaped, each cut to `maxShownLength`; each renderer
 * escapes them for its format. One module per error family in `describe/`,
 * as the errors are grouped in `errors/`.
 */
export { citationError, answerError, evi1Issue, uncitedSentence } from "./describe/Answer.js"
export { auditError } from "./describe/Audit.js"
export { captureError } from "./describe/Capture.js"
export { configError } from "./describe/Config.js"
export { serviceError, streamError } from "./describe/Service.js"
export { type Description, maxShownLength, omittedIssues } from "./describe/Shared.js"
export { captureSignatureError, factError, verifyError } from "./describe/Verify.js"
