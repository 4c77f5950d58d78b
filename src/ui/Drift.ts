/**
 * Drift: a report verified against this run audited against a newer run of the same sources
 * (`POST /v1/runs/{id}/audits?against=…`): each finding with its status, the old excerpt and the new
 * passage side by side with the changed words marked on each side, and the material-change flags.
 */
import { getJson, postText } from "./api.ts"
import { append, clear, el, textSpan } from "./dom.ts"
import { lastReport } from "./Report.ts"
import { uploadInto } from "./Upload.ts"
import { errorText, runHref } from "./Runs.ts"
import type { View } from "./view.ts"

interface Piece {
  readonly text: string
  readonly changed: boolean
}

interface Diff {
  readonly old: ReadonlyArray<Piece>
  readonly new: ReadonlyArray<Piece>
  readonly exact: boolean
}

interface Finding {
  readonly status: "unchanged" | "relocated" | "changed" | "deleted" | "source_missing"
  readonly subject: { readonly kind: "fact"; readonly index: number; readonly label: string } | { readonly kind: "claim"; readonly claimId: string; readonly citationIndex: number }
  readonly source: string
  readonly snippet: string
  readonly candidate?: { readonly text: string; readonly similarity: number }
  readonly nearest?: { readonly text: string; readonly similarity: number }
  readonly material?: ReadonlyArray<{ readonly kind: string; readonly oldTokens: ReadonlyArray<string>; readonly newTokens: ReadonlyArray<string> }>
  readonly detail?: string
}

interface AuditView {
  readonly audit: {
    readonly outcome: string
    readonly summary: Record<string, number>
    readonly findings: ReadonlyArray<Finding>
    readonly note: string
  }
  readonly diffs: ReadonlyArray<Diff | null>
}

const statusWords: Record<Finding["status"], string> = {
  unchanged: "unchanged",
  relocated: "relocated",
  changed: "CHANGED",
  deleted: "DELETED",
  source_missing: "SOURCE MISSING"
}

const side = (pieces: ReadonlyArray<Piece>, tag: "del" | "ins") => {
  const passage = el("div", { class: "passage" })
  for (const p of pieces) passage.appendChild(p.changed ? el(tag, { class: "chg" }, textSpan(p.text)) : textSpan(p.text))
  return passage
}

const findingView = (finding: Finding, diff: Diff | null, i: number) => {
  const subject = finding.subject.kind === "fact"
    ? el("span", {}, `Fact ${finding.subject.index + 1} `, textSpan(finding.subject.label))
    : el("span", {}, "Claim ", textSpan(finding.subject.claimId), `, citation ${finding.subject.citationIndex + 1}`)
  const section = el(
    "section",
    { class: "finding", "data-status": finding.status, "aria-labelledby": `finding-${i + 1}` },
    el("h3", { id: `finding-${i + 1}`, tabindex: "-1" }, `${i + 1}. `, el("span", { class: `status status-drift-${finding.status}` }, statusWords[finding.status]), " ", subject),
    el("p", { class: "url" }, textSpan(finding.source))
  )
  const newText = finding.candidate ?? finding.nearest
  if (diff !== null && newText !== undefined) {
    append(
      section,
      el(
        "div",
        { class: "sbs" },
        el("div", { "data-side": "old" }, el("p", { class: "side-tag" }, "Old excerpt (as cited)"), side(diff.old, "del")),
        el(
          "div",
          { "data-side": "new" },
          el("p", { class: "side-tag" }, `${finding.status === "changed" ? "New passage" : "Nearest passage (below the threshold)"}, similarity ${newText.similarity.toFixed(2)}`),
          side(diff.new, "ins")
        )
      ),
      diff.exact ? null : el("p", { class: "help" }, "Too many word changes to align: the differing middle is marked as a whole.")
    )
  } else {
    append(section, el("div", { class: "passage" }, textSpan(finding.snippet)))
    if (finding.detail !== undefined) append(section, el("p", { class: "help" }, textSpan(finding.detail)))
  }
  const flags = finding.material ?? []
  if (flags.length > 0) {
    append(
      section,
      el(
        "ul",
        { class: "material", "aria-label": "Material changes" },
        ...flags.map((f) =>
          el("li", { "data-kind": f.kind }, `${f.kind}: `, textSpan(f.oldTokens.join(" ") || "(none)"), " → ", textSpan(f.newTokens.join(" ") || "(none)"))
        )
      )
    )
  } else if (finding.status === "changed") append(section, el("p", { class: "help" }, "No material change flagged (numbers, negation, dates, units)."))
  return section
}

export const driftPage = async (view: View, runId: string): Promise<void> => {
  view.title(`Drift · run ${runId}`)
  const runs = await getJson<{ readonly runs: ReadonlyArray<{ readonly id: string; readonly status: string }> }>("/v1/runs")
  const others = runs.runs.filter((r) => r.id !== runId)
  const against = el("select", { id: "drift-against" }, ...others.map((r) => el("option", { value: r.id }, `${r.id} (${r.status})`)))
  const input = el("textarea", { id: "drift-report", rows: "8", cols: "80", spellcheck: "false" })
  input.value = lastReport.get(runId) ?? ""
  const status = el("p", { role: "status", "aria-live": "polite", id: "drift-status" })
  const results = el("div", { id: "drift-findings", role: "region", "aria-label": "Findings" })
  const submit = el("button", { type: "submit", id: "drift-submit" }, "Audit")
  const form = el(
    "form",
    { class: "drift-form", "aria-label": "Audit a report" },
    el("label", { for: "drift-against" }, "Newer run to audit against "),
    against,
    el("p", {}, el("label", { for: "drift-report" }, "Report verified against this run (JSON)")),
    input,
    uploadInto("drift-file", "Or upload a report file", input, status),
    el("div", {}, submit),
    status
  )
  // Nothing to audit against: say so, with every control of the form disabled, rather than send an
  // empty run id for the service to refuse.
  if (others.length === 0) {
    for (const control of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement>("input, select, textarea, button")) control.disabled = true
    status.textContent = "No other run to audit against: start a newer run of these sources, then come back."
  }
  append(view.root, el("p", {}, el("a", { href: runHref(runId) }, `Run ${runId}`)), el("h1", {}, "Drift audit"), form, results)
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    if (against.value === "") return
    lastReport.set(runId, input.value)
    status.textContent = "Auditing…"
    clear(results)
    postText(`/v1/runs/${encodeURIComponent(runId)}/audits?against=${encodeURIComponent(against.value)}`, input.value).then(({ body, status: code }) => {
      if (code !== 200) {
        const tag = body.status === "rejected" ? `the report does not verify against this run (${String(body.error?._tag)})` : `${String(body._tag ?? "error")}`
        status.textContent = `Not audited: ${code} ${tag}`
        return
      }
      const result = body as AuditView
      const s = result.audit.summary
      status.textContent = `Outcome: ${result.audit.outcome}; ${s["citations"]} citations: ${s["unchanged"]} unchanged, ${s["relocated"]} relocated, ` +
        `${s["changed"]} changed (${s["material"]} material), ${s["deleted"]} deleted, ${s["source_missing"]} source missing`
      append(results, ...result.audit.findings.map((f, i) => findingView(f, result.diffs[i] ?? null, i)), el("p", { class: "help" }, textSpan(result.audit.note)))
    }, (error: unknown) => (status.textContent = `Not audited: ${errorText(error)}`))
  })
}
