import { useState } from "preact/hooks"
import { can, liveUnlocked } from "../Access.js"
import type { Page } from "../Api.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { type Mode, setSandboxKey, useSession } from "../Session.js"
import { Badge, Button, CopyButton, Empty, ErrorBox, Loading, Notice, Section, Select, Table, useAction, useLoad } from "../ui.js"

interface ApiKey { id: string; mode: Mode; clientId: string; createdAt: string; revokedAt: string | null }
interface Created { id: string; mode: Mode; clientId: string; clientSecret: string }

export const KeysPage = () => {
  const s = useSession()!
  const approved = liveUnlocked(s.me?.tenant.onboardingStatus)
  const keys = useLoad(() => dash<Page<ApiKey>>("GET", "/api/v1/dashboard/api-keys", { query: { take: 100 } }), [s.mode])
  const [mode, setMode] = useState<Mode>("test")
  const [created, setCreated] = useState<Created | null>(null)
  const create = useAction()
  const revoke = useAction()
  return (
    <>
      {can(s.me?.user.role, "apiKeys") && <Section title="Create an API key">
        <p>Your integration exchanges a key's client id and secret for a bearer token (POST /api/v1/auth/token).</p>
        <div class="row">
          <Select label="Mode of the new key" name="key-mode" value={mode} onChange={(v) => setMode(v as Mode)}
            options={approved ? [["test", "Test"], ["live", "Live"]] : [["test", "Test"]]} />
          <Button kind="primary" busy={create.busy} onClick={() => create.run(async () => {
            const k = await dash<Created>("POST", "/api/v1/dashboard/api-keys", { body: { mode } })
            setCreated(k)
            // This tab keeps the newest test key for the sandbox actions (test accounts, simulated deposits).
            if (k.mode === "test") setSandboxKey({ clientId: k.clientId, clientSecret: k.clientSecret })
            keys.reload()
          })}>Create {mode} key</Button>
        </div>
        {!approved && <p class="muted" id="live-key-locked">Live keys can be created once your onboarding is approved.</p>}
        <ErrorBox error={create.error} />
        {created && (
          <div class="secret" role="status" aria-live="polite">
            <p><strong>New {created.mode} key.</strong> Copy the secret now: it is shown only once.</p>
            <dl class="kv">
              <dt>Client id</dt><dd><code id="new-client-id">{created.clientId}</code> <CopyButton text={created.clientId} label="Copy the client id" /></dd>
              <dt>Client secret</dt><dd><code id="new-client-secret">{created.clientSecret}</code> <CopyButton text={created.clientSecret} label="Copy the client secret" /></dd>
            </dl>
            {created.mode === "test" && <p class="muted">This browser tab also uses this test key for sandbox actions (test accounts, simulated deposits) until you sign out.</p>}
            <Button onClick={() => setCreated(null)}>I have copied it</Button>
          </div>
        )}
      </Section>}
      <Section title="Your keys">
        <ErrorBox error={keys.error ?? revoke.error} />
        {keys.loading && !keys.data ? <Loading what="keys" /> : (
          <Table caption="API keys, both modes" head={["Client id", "Mode", "Created", "Status", ""]}>
            {keys.data?.data.length === 0 && <Empty cols={5} text="No keys yet." />}
            {keys.data?.data.map((k) => (
              <tr key={k.id}>
                <td><code>{k.clientId}</code></td>
                <td><Badge text={k.mode} /></td>
                <td>{lagos(k.createdAt)}</td>
                <td>{k.revokedAt ? `Revoked ${lagos(k.revokedAt)}` : "Active"}</td>
                <td>{!k.revokedAt && (
                  <Button kind="danger" busy={revoke.busy} label={`Revoke key ${k.clientId}`} onClick={() => {
                    if (!confirm(`Revoke ${k.clientId}? Tokens minted from it stop working at once.`)) return
                    revoke.run(async () => {
                      await dash("DELETE", `/api/v1/dashboard/api-keys/${enc(k.id)}`)
                      if (s.sandboxKey?.clientId === k.clientId) setSandboxKey(null)
                      keys.reload()
                    })
                  }}>Revoke</Button>
                )}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  )
}

interface Provider { mode: Mode; provider: string; merchantId: string; webhookSecret: string; receiverPath: string; signatureHeader: string; canonicalString: string }

export const ProviderPage = () => {
  const s = useSession()!
  const p = useLoad(() => dash<Provider>("GET", "/api/v1/dashboard/provider"), [s.mode])
  const [shown, setShown] = useState(false)
  return (
    <Section title={`Bank provider credentials (${s.mode} mode)`}>
      <ErrorBox error={p.error} />
      {p.data ? (
        <dl class="kv">
          <dt>Provider</dt><dd>{p.data.provider}</dd>
          <dt>Merchant id</dt><dd><code>{p.data.merchantId}</code> <CopyButton text={p.data.merchantId} label="Copy the merchant id" /></dd>
          <dt>Webhook secret</dt>
          <dd>
            <code id="webhook-secret">{shown ? p.data.webhookSecret : "•".repeat(16)}</code>{" "}
            <Button onClick={() => setShown(!shown)}>{shown ? "Hide" : "Show"}</Button>{" "}
            <CopyButton text={p.data.webhookSecret} label="Copy the webhook secret" />
          </dd>
          <dt>Receiver</dt><dd><code>{p.data.receiverPath}</code></dd>
          <dt>Signature header</dt><dd><code>{p.data.signatureHeader}</code></dd>
          <dt>Signed string</dt><dd><code>{p.data.canonicalString}</code></dd>
        </dl>
      ) : !p.error && <Loading what="credentials" />}
      <Notice>These are the {s.mode} mode's credentials; switch mode to see the other's.</Notice>
    </Section>
  )
}
