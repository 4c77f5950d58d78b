/**
 * The review page's entry point (bundled into dist/ui/app.js): sign-in, then a hash router over the
 * pages (`#/` runs, `#/runs/{id}` one run, `#/runs/{id}/streams/{stream}` an answer verified live,
 * `#/runs/{id}/report` a report's facts and their review decisions, `#/runs/{id}/drift` the drift audit).
 */
import { current, resume, signIn, signOut } from "./api.ts"
import { answerPage } from "./Answer.ts"
import { driftPage } from "./Drift.ts"
import { reportPage } from "./Report.ts"
import { append, clear, el } from "./dom.ts"
import { errorText, runPage, runsPage } from "./Runs.ts"
import type { View } from "./view.ts"

const main = document.getElementById("main")!
const who = document.getElementById("who")!
const logout = document.getElementById("logout") as HTMLButtonElement
let leaving: Array<() => void> = []

const signInPage = () => {
  document.title = "Sign in · citegate review"
  const token = el("input", { id: "token", type: "password", autocomplete: "off", spellcheck: "false" })
  const status = el("p", { role: "alert", id: "sign-in-status" })
  const form = el(
    "form",
    { "aria-label": "Sign in", class: "sign-in" },
    el("h1", {}, "Sign in"),
    el("label", { for: "token" }, "Service token"),
    token,
    el("p", { class: "help" }, "The token opens a 30-minute session (an HttpOnly cookie); the page does not keep the token."),
    el("button", { type: "submit" }, "Sign in"),
    status
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const value = token.value
    token.value = ""
    signIn(value).then(() => route(), (error: unknown) => (status.textContent = `Not signed in: ${errorText(error)}`))
  })
  main.appendChild(form)
  token.focus()
}

const route = async (): Promise<void> => {
  for (const cleanup of leaving) cleanup()
  leaving = []
  clear(main)
  const session = current() ?? (await resume())
  who.textContent = session === undefined ? "" : `Signed in as ${session.name}`
  logout.hidden = session === undefined
  if (session === undefined) return signInPage()
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter((p) => p !== "").map(decodeURIComponent)
  const view: View = {
    root: main,
    title: (text) => (document.title = `${text} · citegate review`),
    go: (hash) => {
      location.hash = hash
    },
    reload: () => void route(),
    onLeave: (cleanup) => leaving.push(cleanup)
  }
  try {
    if (parts.length === 0) await runsPage(view)
    else if (parts[0] === "runs" && parts.length === 2) await runPage(view, parts[1]!)
    else if (parts[0] === "runs" && parts.length === 4 && parts[2] === "streams") answerPage(view, parts[1]!, parts[3]!)
    else if (parts[0] === "runs" && parts.length === 3 && parts[2] === "report") reportPage(view, parts[1]!)
    else if (parts[0] === "runs" && parts.length === 3 && parts[2] === "drift") await driftPage(view, parts[1]!)
    else append(main, el("h1", {}, "Not found"), el("p", {}, el("a", { href: "#/" }, "All runs")))
  } catch (error) {
    append(main, el("h1", {}, "Not available"), el("p", { role: "alert" }, errorText(error)))
  }
  main.focus({ preventScroll: true })
}

logout.addEventListener("click", () => {
  void signOut().then(() => route())
})
window.addEventListener("hashchange", () => {
  // The skip link (#main) is not a page.
  if (location.hash === "#main") return
  void route()
})
void route()
