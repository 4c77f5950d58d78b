/**
 * Each command's help: its description and what its exit codes 0, 1 and 2 mean; the summaries for
 * the top-level help's one line per command.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"

/** What exit codes 0, 1 and 2 mean for one command (70, 130 and 143 mean the same for all). */
export interface ExitCodes {
  readonly success: string
  readonly failure?: string
  readonly usage?: string
}

export const usageCodes = "usage or configuration error (bad options, invalid config, unreadable file)"

/** The exit codes of the program as a whole, for the top-level help. */
export const programCodes: ExitCodes = {
  success: "success (all sources captured; report or answer verified and grounded; nothing drifted)",
  failure: "domain failure (rejected report or answer, no_evidence outcome, a failed capture or migration entry, drift)",
  usage: `${usageCodes}, existing run directory`
}

/** Each command's summary (its description's first line), for one line per command in the top-level help. */
export const commandSummaries = new Map<string, string>()

/** A command's description followed by its own exit codes; `what` is also its line in the top-level help. */
export const describe = (name: string, what: string, codes: ExitCodes) => {
  commandSummaries.set(name, what)
  return HelpDoc.blocks([
    HelpDoc.p(what),
    HelpDoc.enumeration([
      HelpDoc.p(`Exit codes: 0 ${codes.success}`),
      ...(codes.failure === undefined ? [] : [HelpDoc.p(`1 ${codes.failure}`)]),
      HelpDoc.p(`2 ${codes.usage ?? usageCodes}`),
      HelpDoc.p("70 internal error; 130 interrupted (SIGINT); 143 terminated (SIGTERM)")
    ])
  ])
}
