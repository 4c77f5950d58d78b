/** Upload as well as paste: a file input that reads the chosen file into a text field. */
import { el } from "./dom.ts"

/** A file input that reads the chosen file as text into `target` (upload as well as paste). */
export const uploadInto = (id: string, label: string, target: HTMLTextAreaElement, status: HTMLElement) => {
  const input = el("input", { type: "file", id, accept: ".json,.txt,.evi1,application/json,text/plain" })
  input.addEventListener("change", () => {
    const file = input.files?.[0]
    if (file === undefined) return
    // A bounded read: the service refuses bodies past its own limit anyway.
    if (file.size > 8 * 1024 * 1024) {
      status.textContent = `Not loaded: ${file.name} is larger than 8 MiB`
      return
    }
    file.text().then((text) => {
      target.value = text
      status.textContent = `Loaded ${file.name} (${file.size} bytes)`
    }, (error: unknown) => (status.textContent = `Not loaded: ${String(error)}`))
  })
  return el("p", { class: "upload" }, el("label", { for: id }, label), " ", input)
}
