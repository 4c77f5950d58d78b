/**
 * The operator's configuration (`pipeline.json`): which exact sources may be
 * captured and cited, which labels a report may use, and the budgets and
 * verification policy. Authored by an operator, never by a model; decoded
 * strictly, with every issue reported at its path.
 *
 * @since 0.1.0
 */
export * from "./config/Answers.js"
export * from "./config/Audit.js"
export * from "./config/Capture.js"
export { configListLimits } from "./config/Common.js"
export * from "./config/Pipeline.js"
export * from "./config/Resolved.js"
export * from "./config/Review.js"
export * from "./config/Server.js"
export * from "./config/Telemetry.js"
export * from "./config/Verify.js"
