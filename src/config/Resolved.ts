/**
 * The configuration with its defaults filled in: what each part reads.
 */
import { type CitationRule, CitationsPolicy, defaultCitationRule } from "../answer/Records.js"
import { defaultMaxFacts, Mode } from "../Domain.js"
import { auditLimits } from "./Audit.js"
import type { PipelineConfig } from "./Pipeline.js"
import { serverLimits } from "./Server.js"
import { telemetryLimits } from "./Telemetry.js"
import { verifyLimits } from "./Verify.js"

export const resolvedMaxFacts = (config: PipelineConfig): number => config.verify?.maxFacts ?? defaultMaxFacts
export const resolvedMode = (config: PipelineConfig): Mode => config.verify?.mode ?? "reject"
export const resolvedVerifyTimeoutMs = (config: PipelineConfig): number =>
  config.verify?.timeoutMs ?? verifyLimits.timeoutMs.default
export const resolvedAuditTimeoutMs = (config: PipelineConfig): number =>
  config.audit?.timeoutMs ?? auditLimits.timeoutMs.default
export const resolvedUncited = (config: PipelineConfig): "reject" | "report" => config.answers?.uncited ?? "report"
/** `answers.citations`, default "quote": a document-level citation is never accepted unless the operator says so. */
export const resolvedCitations = (config: PipelineConfig): CitationsPolicy => config.answers?.citations ?? "quote"
export const resolvedCitationRule = (config: PipelineConfig): CitationRule => ({
  minLength: config.answers?.needsCitation?.minLength ?? defaultCitationRule.minLength,
  exempt: config.answers?.needsCitation?.exempt ?? defaultCitationRule.exempt
})

/** The service's limits with defaults filled in. */
export const resolvedServer = (config: PipelineConfig) => ({
  tokens: config.server?.tokens ?? [],
  maxBodyBytes: config.server?.maxBodyBytes ?? serverLimits.maxBodyBytes.default,
  requestTimeoutMs: config.server?.requestTimeoutMs ?? serverLimits.requestTimeoutMs.default,
  shutdownGraceMs: config.server?.shutdownGraceMs ?? serverLimits.shutdownGraceMs.default,
  maxActiveRuns: config.server?.maxActiveRuns ?? serverLimits.maxActiveRuns.default,
  streamDeadlineMs: config.server?.streamDeadlineMs ?? serverLimits.streamDeadlineMs.default,
  streamRetainMs: config.server?.streamRetainMs ?? serverLimits.streamRetainMs.default,
  streamRetainedBytes: config.server?.streamRetainedBytes ?? serverLimits.streamRetainedBytes.default,
  cacheBytes: config.server?.cacheBytes ?? serverLimits.cacheBytes.default,
  leaseMs: config.server?.leaseMs ?? serverLimits.leaseMs.default,
  verifyThreads: config.server?.verifyThreads ?? serverLimits.verifyThreads.default
})
export type ResolvedServer = ReturnType<typeof resolvedServer>
/** The matching policy in force: the deprecated `normalized/1` is verified as `normalized/2` (never the looser rules). */
export const resolvedMatching = (config: PipelineConfig): MatchingPolicy =>
  config.verify?.matching === undefined ? "exact" : config.verify.matching === "exact" ? "exact" : "normalized/2"
/** The matching policies a verification applies. */
export type MatchingPolicy = "exact" | "normalized/2"
export const resolvedNumbers = (config: PipelineConfig) => config.review?.numbers ?? "off"
export const resolvedAmbiguous = (config: PipelineConfig): "accept" | "reject" => config.verify?.ambiguous ?? "accept"
export const resolvedHidden = (config: PipelineConfig): "mark" | "reject" => config.verify?.hidden ?? "mark"
export const resolvedSignatures = (config: PipelineConfig): "off" | "check" | "require" => config.verify?.signatures ?? "off"
export const resolvedBoundaries = (config: PipelineConfig): "substring" | "tokens" => config.verify?.boundaries ?? "substring"
/** Telemetry with its defaults filled in, or undefined when off. */
export const resolvedTelemetry = (config: PipelineConfig) =>
  config.telemetry === undefined ? undefined : {
    serviceName: config.telemetry.serviceName ?? "citegate",
    otlp: config.telemetry.otlp === undefined ? undefined : {
      url: config.telemetry.otlp.url.replace(/\/+$/, ""),
      headers: config.telemetry.otlp.headers ?? {},
      exportIntervalMs: config.telemetry.otlp.exportIntervalMs ?? telemetryLimits.exportIntervalMs.default
    },
    prometheus: config.telemetry.prometheus === true
  }
export type ResolvedTelemetry = NonNullable<ReturnType<typeof resolvedTelemetry>>
