/** Saves `text` as a file the browser downloads (a Blob behind an `<a download>`): nothing leaves the page. */
export const saveFile = (name: string, text: string, type: string) => {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = document.createElement("a")
  a.href = url
  a.download = name
  a.hidden = true
  document.body.appendChild(a)
  a.click()
  a.remove()
  // The download has its own copy once it started; the URL is let go a moment later.
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
