import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { dash } from "../calls.js"
import { sandboxToken, setSandboxKey, useSession } from "../Session.js"
import { Button, ErrorBox, Field, Form, Notice, useAction } from "../ui.js"

/**
 * Test-mode API-plane actions (creating a test virtual account, simulating a deposit) need a test API key's token.
 * This panel gives the tab one: create a test key for it (Owner/Admin), or paste an existing key's id and secret.
 */
export const SandboxKeyPanel = () => {
  const s = useSession()!
  const [clientId, setClientId] = useState("")
  const [clientSecret, setClientSecret] = useState("")
  const { busy, error, run } = useAction()
  if (s.sandboxKey) {
    return (
      <p class="muted" id="sandbox-key">
        Sandbox actions use test key <code>{s.sandboxKey.clientId}</code>.{" "}
        <Button onClick={() => setSandboxKey(null)}>Forget this key</Button>
      </p>
    )
  }
  return (
    <Notice kind="warn">
      <p>Test accounts and simulated deposits are made with a test API key (the sandbox is API-only). This tab has none yet.</p>
      {can(s.me?.user.role, "apiKeys") && (
        <Button kind="primary" busy={busy} onClick={() => run(async () => {
          const k = await dash<{ clientId: string; clientSecret: string }>("POST", "/api/v1/dashboard/api-keys", { body: { mode: "test" } })
          setSandboxKey({ clientId: k.clientId, clientSecret: k.clientSecret })
          await sandboxToken()
        })}>Create a test key for this tab</Button>
      )}
      <Form label="Use an existing test key" class="inline-form" onSubmit={() => run(async () => {
        setSandboxKey({ clientId: clientId.trim(), clientSecret: clientSecret.trim() })
        await sandboxToken()
      })}>
        <Field label="Test key client id" name="sandbox-client-id" value={clientId} onInput={setClientId} />
        <Field label="Test key secret" name="sandbox-client-secret" type="password" value={clientSecret} onInput={setClientSecret} />
        <Button type="submit" busy={busy}>Use this key</Button>
      </Form>
      <ErrorBox error={error} />
    </Notice>
  )
}

/** The sandbox token, or an error that says how to get one. */
export const requireSandboxToken = async () => {
  const t = await sandboxToken()
  if (!t) throw new Error("Sandbox actions need a test API key: create one above or paste one in.")
  return t
}
