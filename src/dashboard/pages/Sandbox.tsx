import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { dash } from "../calls.js"
import { Failure } from "../Client.js"
import { sandboxKey, sandboxToken, setSandboxKey, useSession } from "../Session.js"
import { Button, ErrorBox, Field, Form, Notice, useAction } from "../ui.js"

/**
 * Test-mode API-plane actions (creating a test virtual account, simulating a deposit) need a test API key's token.
 * This panel gives the user one, kept in this browser for every tab and sign-in of theirs (Session.ts): create a test
 * key (Owner/Admin), or paste an existing key's id and secret. A second tab finds the key kept and mints none.
 */
export const SandboxKeyPanel = () => {
  const s = useSession()!
  const [clientId, setClientId] = useState("")
  const [clientSecret, setClientSecret] = useState("")
  const { busy, error, run } = useAction()
  const kept = sandboxKey()
  if (kept) {
    return (
      <p class="muted" id="sandbox-key">
        Sandbox actions use your test key <code>{kept.clientId}</code>.{" "}
        <Button onClick={() => setSandboxKey(null)}>Forget this key</Button>
      </p>
    )
  }
  return (
    <Notice kind="warn">
      <p>Test accounts and simulated deposits are made with a test API key (the sandbox is API-only). You have none in this browser yet.</p>
      {can(s.me?.user.role, "apiKeys") && (
        <Button kind="primary" busy={busy} onClick={() => run(async () => {
          // Another tab of this user may have kept one meanwhile: reuse it rather than mint a second.
          if (!sandboxKey()) {
            const k = await dash((c) => c.dashboard.createApiKey({ payload: { mode: "test" } }))
            setSandboxKey({ keyId: k.id, clientId: k.clientId, clientSecret: k.clientSecret })
          }
          await sandboxToken()
        })}>Create a test key for the sandbox</Button>
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
  if (!t) throw new Failure("Sandbox actions need a test API key: create one above or paste one in.")
  return t
}
