/**
 * Descriptions of a report's failures: per fact (`FactError`) and of the whole report (`VerificationTimeout`).
 */
import * as Match from "effect/Match"
import type {
  CaptureSignatureError,
  FactError,
  SignatureInvalid,
  UnknownSigningKey,
  UnsignedCapture,
  VerificationTimeout
} from "../../Errors.js"
import { hiddenLabel } from "../../Errors.js"
import { absentFix, anchorHintFields, changedFields, changedFix, type Description, nearestFields, prefix, shown } from "./Shared.js"

export const factError = (error: FactError): Description => shown(factErrorUnbounded(error))

export const factErrorUnbounded = (error: FactError): Description =>
  Match.valueTags(error, {
    NotApproved: (e): Description => ({
      title: "Source not approved",
      fields: [["source", e.source], ["reason", e.detail]],
      fix: "Cite one of the approved sources, spelled exactly as approved."
    }),
    UnknownLabel: (e): Description => ({
      title: "Unknown label",
      fields: [["label", e.label]],
      fix: "Use one of the approved labels."
    }),
    DuplicateLabel: (e): Description => ({
      title: "Duplicate label",
      // Renderings number facts from 1.
      fields: [["label", e.label], ["first used by fact", String(e.firstIndex + 1)]],
      fix: "Report each label once."
    }),
    MissingCapture: (e): Description => ({
      title: "No capture of this source in this run",
      fields: [["source", e.source]],
      fix: "Capture the source in this run, or mark the fact unavailable. No other capture is consulted."
    }),
    CorruptCapture: (e): Description => ({
      title: "Capture is corrupt",
      fields: [["source", e.source], ["reason", e.reason], ["detail", e.detail]],
      fix: "Do not trust this run's capture of the source; capture it again into a new run."
    }),
    LegacyCapture: (e): Description => ({
      title: "Capture is in a legacy format",
      fields: [["source", e.source], ["detail", e.detail]],
      fix: "Migrate it explicitly with `run-pipeline migrate` into a new run directory."
    }),
    DigestMismatch: (e): Description =>
      e.kind === "report"
        ? {
          title: "Report names a different capture",
          // In full: the drafter copies this digest into the report.
          fields: [["source", e.source], ["report names", prefix(e.reported)], ["this run has", e.stored]],
          fix: "Cite the digest of this run's capture, and quote from that capture."
        }
        : {
          title: "Capture was altered after capture",
          fields: [["source", e.source], ["recorded digest", prefix(e.stored)], ["text now hashes to", prefix(e.computed)]],
          fix: "Treat the run as tampered with; capture the source again into a new run."
        },
    SnippetAbsent: (e): Description => ({
      title: "Snippet not found verbatim",
      fields: [["source", e.source], ["capture", prefix(e.captureSha256)], ["snippet", e.snippet], ...nearestFields(e.nearest), ...changedFields(e)],
      fix: e.changed !== undefined ? changedFix : absentFix(e.nearest, "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.")
    }),
    AnchorMismatch: (e): Description => ({
      title: e.reason === "outside" ? "Snippet not inside the named page or section" : "No such page or section",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["anchor", e.anchor],
        ["snippet", e.snippet],
        ...anchorHintFields(e)
      ],
      fix: e.foundLastPage !== undefined && e.foundPage !== undefined && e.foundLastPage !== e.foundPage
        ? `The excerpt runs across a page break: name the page range it spans (pages ${e.foundPage}–${e.foundLastPage}; ` +
          `in an answer \`"page": {"start": ${e.foundPage}, "end": ${e.foundLastPage + 1}}\`, end exclusive), or leave the anchor out.`
        : "Name the page or heading the excerpt is on (as the capture's anchors give it), or leave the anchor out."
    }),
    SemanticMismatch: (e): Description => ({
      title: `Semantic review: the excerpt states another ${e.mismatches[0].aspect} than the label`,
      fields: [
        ["source", e.source],
        ...e.mismatches.map((m) =>
          [m.aspect, `expected ${m.expected.join(" / ")}; found ${m.found.map((t) => JSON.stringify(t)).join(", ") || "none"}${m.missing === true ? " (a missing-value marker: no value)" : ""}`] as const
        )
      ],
      fix: "Cite an excerpt that states this label's metric, period, value kind and unit, use the label the excerpt is about, " +
        "or mark the fact unavailable. The excerpt's provenance is not in question."
    }),
    AmbiguousSnippet: (e): Description => ({
      title: e.prefix === undefined && e.suffix === undefined
        ? "Snippet occurs more than once"
        : "Snippet occurs more than once with the given prefix/suffix",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["occurrences", String(e.occurrences)],
        ...(e.prefix === undefined ? [] : [["prefix", e.prefix] as const]),
        ...(e.suffix === undefined ? [] : [["suffix", e.suffix] as const]),
        ["snippet", e.snippet]
      ],
      fix: "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt."
    }),
    HiddenEvidence: (e): Description => ({
      title: "Snippet is text no reader sees",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["characters", `${e.span.start}–${e.span.end}`],
        ...(e.page === undefined ? [] : [["page", String(e.page)] as const]),
        ["hidden as", hiddenLabel(e.hiddenBy)],
        ["snippet", e.snippet]
      ],
      fix: "Quote text the page shows (the policy is verify.hidden: \"reject\"), or mark the fact unavailable."
    }),
    SnippetCutsToken: (e): Description => ({
      title: "Snippet is part of a longer number or word",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["characters", `${e.span.start}–${e.span.end}`],
        ["within", e.token],
        ["snippet", e.snippet]
      ],
      fix: "Quote the whole number or word as the capture has it (the policy is verify.boundaries: \"tokens\"), or mark the fact unavailable."
    }),
    ...captureSignatureDescriptions
  })

/** A capture whose attestation does not hold (verify.signatures); shared with answers and the check-mode notes. */
export const captureSignatureError = (error: CaptureSignatureError): Description =>
  shown(Match.valueTags(error, captureSignatureDescriptions))

const captureSignatureDescriptions = {
  UnsignedCapture: (e: UnsignedCapture): Description => ({
    title: "Capture is not signed",
    fields: [["source", e.source]],
    fix: "Capture the source again with capture.signing.keyFile set, into a new run; or relax verify.signatures."
  }),
  SignatureInvalid: (e: SignatureInvalid): Description => ({
    title: "Capture's signature does not hold",
    fields: [
      ...(e.source === undefined ? [] : [["source", e.source] as const]),
      ...(e.keyid === "" ? [] : [["key id", e.keyid] as const]),
      ["detail", e.detail ?? "the Ed25519 signature does not verify"]
    ],
    fix: "Treat the capture as tampered with (record or attestation changed or swapped); capture it again into a new run."
  }),
  UnknownSigningKey: (e: UnknownSigningKey): Description => ({
    title: "Capture signed by an untrusted key",
    fields: [
      ...(e.source === undefined ? [] : [["source", e.source] as const]),
      ["key ids", e.keyids.length === 0 ? "none named" : e.keyids.join(", ")]
    ],
    fix: "Add the signing key's public key to verify.trustedKeys (under its key id) if you trust it; otherwise recapture."
  })
}

/** A whole-report failure that is neither a schema issue nor a fact failure. */
export const verifyError = (error: VerificationTimeout): Description =>
  Match.valueTags(error, {
    VerificationTimeout: (e): Description => ({
      title: "Verification timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large."
    })
  })
