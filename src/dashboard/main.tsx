import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { AppShell } from "./Shell.js"
import { LoginPage, SignupPage } from "./pages/Auth.js"
import { useSession } from "./Session.js"

/** The dashboard: a single page with hash routes (#/accounts, #/accounts/order-1, ...), served at /dashboard. */

const useRoute = () => {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const f = () => setHash(location.hash)
    addEventListener("hashchange", f)
    return () => removeEventListener("hashchange", f)
  }, [])
  return hash.replace(/^#/, "") || "/"
}

const App = () => {
  const s = useSession()
  const route = useRoute()
  if (!s) {
    if (route === "/signup") return <SignupPage />
    return <LoginPage />
  }
  return <AppShell route={route} />
}

const root = document.getElementById("app")!
// The server's "Loading…" placeholder goes before the first render.
root.textContent = ""
render(<App />, root)
