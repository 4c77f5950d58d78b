/**
 * A tiny PDF writer for fixtures: one Helvetica font, each page a list of
 * lines drawn top to bottom. Enough to produce real PDFs (valid xref table,
 * byte offsets) without any third-party writer; the options add the hostile
 * features tests need (an /Encrypt dictionary, a JavaScript open action).
 */

export interface PdfOptions {
  /** Adds a Standard security handler whose user password is not empty: the file cannot be opened without it. */
  readonly encrypted?: boolean
  /** Adds a document-level JavaScript open action with this source. */
  readonly javascript?: string
}

/** Escapes a string for a PDF literal string (ASCII only in fixtures). */
const literal = (s: string) => `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`

export const makePdf = (pages: ReadonlyArray<ReadonlyArray<string>>, options: PdfOptions = {}): Buffer => {
  const objects: Array<string> = []
  const add = (body: string) => {
    objects.push(body)
    return objects.length
  }
  const catalog = add("") // filled once the pages object number is known
  const pagesObject = add("")
  const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
  const kids: Array<number> = []
  for (const lines of pages) {
    const content = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td", ...lines.map((line) => `${literal(line)} Tj T*`), "ET"].join("\n")
    const stream = add(`<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`)
    kids.push(add(`<< /Type /Page /Parent ${pagesObject} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${stream} 0 R >>`))
  }
  objects[pagesObject - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`
  let openAction = ""
  if (options.javascript !== undefined) {
    const js = add(`<< /Type /Action /S /JavaScript /JS ${literal(options.javascript)} >>`)
    openAction = ` /OpenAction ${js} 0 R`
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObject} 0 R${openAction} >>`
  let encrypt = ""
  if (options.encrypted === true) {
    const o = "<" + "1f".repeat(32) + ">"
    const u = "<" + "2e".repeat(32) + ">"
    const dict = add(`<< /Filter /Standard /V 1 /R 2 /O ${o} /U ${u} /P -44 >>`)
    encrypt = ` /Encrypt ${dict} 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]`
  }
  let out = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, "latin1")
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${encrypt} >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, "latin1")
}
