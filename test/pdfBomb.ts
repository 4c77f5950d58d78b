/**
 * A PDF decompression bomb for tests and the bench: one page whose content
 * stream, under /FlateDecode at level 9, is a line of text and then `spaces`
 * spaces (1 GiB of spaces deflates to about 1 MiB). Deflated chunk by chunk,
 * so making it never holds the decoded stream.
 */
import * as zlib from "node:zlib"

const deflated = (spaces: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const deflate = zlib.createDeflate({ level: 9 })
    const parts: Array<Buffer> = []
    deflate.on("data", (chunk: Buffer) => parts.push(chunk))
    deflate.on("end", () => resolve(Buffer.concat(parts)))
    deflate.on("error", reject)
    deflate.write("BT /F1 12 Tf 72 720 Td (Decompression bomb) Tj ET\n")
    const chunk = Buffer.alloc(1024 * 1024, 0x20)
    let left = spaces
    const pump = () => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left)
        left -= piece.length
        if (!deflate.write(piece)) return void deflate.once("drain", pump)
      }
      deflate.end()
    }
    pump()
  })

export const makePdfBomb = async (spaces: number): Promise<Buffer> => {
  const stream = await deflated(spaces)
  const objects: Array<Buffer> = [
    Buffer.from("<< /Type /Catalog /Pages 2 0 R >>"),
    Buffer.from("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
    Buffer.from("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"),
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from("\nendstream")]),
    Buffer.from("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
  ]
  const parts: Array<Buffer> = [Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "latin1")]
  let at = parts[0]!.length
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(at)
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from("\nendobj\n")])
    parts.push(object)
    at += object.length
  })
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) tail += `${String(offset).padStart(10, "0")} 00000 n \n`
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`
  parts.push(Buffer.from(tail))
  return Buffer.concat(parts)
}
